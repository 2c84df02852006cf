package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis replicates asynchronously: a primary that dies right after it answered can take its
// last writes with it, and the replica promoted in its place never had them. With
// Store.MinReplicasAcked, what streamwatch tells someone it did (a webhook's 2xx, a command's
// reply, a Slack message it will not post again, a lock it holds) waits until Redis's WAIT
// confirms that many replicas have it.
//
// WAIT covers the writes of the connection it runs on. The record script of a webhook batch
// therefore runs on one connection of the primary, and WAIT follows on that connection
// (recordReplicated): one WAIT for every webhook the batch serves. Other changes go through
// the pool; Confirm writes to the primary on a connection of its own and WAITs there, which
// covers every write the primary took before, theirs among them, since replication is one
// ordered stream; and Mark, taken before the change, lets it tell that primary from one
// promoted since (a failover changes master_replid).

// ErrNotReplicated marks a change the primary recorded but that fewer replicas than
// MinReplicasAcked confirmed: a failover now could lose it. NotReplicatedError says why.
var ErrNotReplicated = errors.New("not yet confirmed by the Redis replicas")

// NotReplicatedError is a change not yet safe: Acked of Want replicas confirmed it within
// Within, or the primary changed while it was made.
type NotReplicatedError struct {
	Acked, Want    int
	Within         time.Duration
	PrimaryChanged bool
}

func (e *NotReplicatedError) Error() string {
	if e.PrimaryChanged {
		return "the Redis primary changed (a failover or a restart) while the change was made, so it may be lost"
	}
	return fmt.Sprintf("only %d of %d Redis replicas confirmed it within %s", e.Acked, e.Want, e.Within)
}

// Is makes errors.Is(err, ErrNotReplicated) hold.
func (e *NotReplicatedError) Is(target error) bool { return target == ErrNotReplicated }

// Replicated reports whether changes wait for replicas (MinReplicasAcked ≥ 1).
func (s *Store) Replicated() bool { return s.MinReplicasAcked > 0 }

// primary is a client of the one server that holds every key: the slot's master in a cluster
// (all keys share the hash tag), the client itself otherwise (one server, or the failover
// client, which follows the primary the Sentinels name).
func (s *Store) primary(ctx context.Context) (*redis.Client, error) {
	switch c := s.rdb.(type) {
	case *redis.Client:
		return c, nil
	case *redis.ClusterClient:
		m, err := c.MasterForKey(ctx, s.base)
		if err != nil {
			c.ReloadState(ctx)
		}
		return m, err
	}
	return nil, fmt.Errorf("redis.min_replicas_acked needs one server, Sentinels or a cluster, not a %T", s.rdb)
}

// recordReplicated is recordBatch for the group commit: without MinReplicasAcked on the pool,
// as always; with it on one connection of the primary, followed by WAIT on that connection.
// The outcomes come back with an error wrapping ErrNotReplicated when the replicas did not
// confirm them, or when WAIT got no answer (the primary died right after the script).
func (s *Store) recordReplicated(ctx context.Context, as []AlertRecord) ([]Outcome, error) {
	if !s.Replicated() {
		return s.recordBatch(ctx, s.rdb, as)
	}
	c, err := s.primary(ctx)
	if err != nil {
		return nil, wrap("record alert", err)
	}
	// A Conn never dials again behind our back: once its connection breaks, WAIT fails rather
	// than run on a new connection, where it would cover none of the script's writes.
	conn := c.Conn()
	defer conn.Close()
	out, err := s.recordBatch(ctx, conn, as)
	if err != nil {
		return nil, s.movedAway(ctx, err)
	}
	if err := s.wait(ctx, conn, "webhook"); err != nil {
		if !errors.Is(err, ErrNotReplicated) {
			err = fmt.Errorf("%w: %w", ErrNotReplicated, err)
		}
		return out, err
	}
	return out, nil
}

// movedAway makes a cluster's redirection (the slot moved: a failover or a resharding) an
// outage to retry, and has the cluster client read the slots again.
func (s *Store) movedAway(ctx context.Context, err error) error {
	cc, ok := s.rdb.(*redis.ClusterClient)
	if !ok {
		return err
	}
	cc.ReloadState(ctx)
	var rerr redis.Error
	if errors.As(err, &rerr) && (strings.HasPrefix(rerr.Error(), "MOVED ") || strings.HasPrefix(rerr.Error(), "ASK ")) {
		return fmt.Errorf("%w: the slot moved: %w", ErrUnavailable, err)
	}
	return err
}

// wait runs WAIT on conn, which holds the writes to confirm.
func (s *Store) wait(ctx context.Context, conn *redis.Conn, use string) error {
	began := time.Now()
	n, err := conn.Wait(ctx, s.MinReplicasAcked, s.ReplicaAckTimeout).Result()
	if err != nil {
		return wrap("wait for replicas", s.movedAway(ctx, err))
	}
	ok := n >= int64(s.MinReplicasAcked)
	if s.OnReplicaWait != nil {
		s.OnReplicaWait(use, time.Since(began), ok)
	}
	if !ok {
		return &NotReplicatedError{Acked: int(n), Want: s.MinReplicasAcked, Within: s.ReplicaAckTimeout}
	}
	return nil
}

// ReplicationMark is where the primary's history stood when a change began: its
// master_replid, which a promotion (or a restart) changes.
type ReplicationMark struct{ replid string }

// Mark reads the mark a change's Confirm checks; the zero mark (and no call) without
// MinReplicasAcked.
func (s *Store) Mark(ctx context.Context) (ReplicationMark, error) {
	if !s.Replicated() {
		return ReplicationMark{}, nil
	}
	c, err := s.primary(ctx)
	if err != nil {
		return ReplicationMark{}, wrap("read the replication id", err)
	}
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return ReplicationMark{}, wrap("read the replication id", s.movedAway(ctx, err))
	}
	return ReplicationMark{replid: infoField(info, "master_replid")}, nil
}

// Confirm waits until MinReplicasAcked replicas have every write the primary took so far
// (those of the change begun at m among them). It returns a *NotReplicatedError when they do
// not within ReplicaAckTimeout, or when the primary is no longer the one of m; an error
// wrapping ErrUnavailable when Redis does not answer. use names the wait in the metrics
// (command, outbox, lock). Without MinReplicasAcked it does nothing.
func (s *Store) Confirm(ctx context.Context, use string, m ReplicationMark) error {
	if !s.Replicated() {
		return nil
	}
	if m.replid == "" {
		return &NotReplicatedError{PrimaryChanged: true}
	}
	c, err := s.primary(ctx)
	if err != nil {
		return wrap("confirm replication", err)
	}
	conn := c.Conn()
	defer conn.Close()
	// A write of its own makes WAIT on this connection cover everything before it.
	var info *redis.StringCmd
	if _, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, s.key("replicated"), ms(s.now()), time.Hour)
		info = p.Info(ctx, "replication")
		return nil
	}); err != nil {
		return wrap("confirm replication", s.movedAway(ctx, err))
	}
	if infoField(info.Val(), "master_replid") != m.replid {
		return &NotReplicatedError{PrimaryChanged: true}
	}
	return s.wait(ctx, conn, use)
}

// infoField is the value of field in an INFO answer ("field:value" lines).
func infoField(info, field string) string {
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			return v
		}
	}
	return ""
}
