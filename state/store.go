// Package state owns every Redis key of streamwatch (keys.go has the layout): incidents, their
// dedup index, alerts, timelines and channel indexes; floods and silences; the Slack outbox and
// its typed events (event.go); envelope dedup, locks and the audit stream; probe results, lag
// samples and the charts' progress samples; repair plans and recovery watches; retention. What
// must change several keys at once is a Lua script of state/lua, assembled by lua.go, whose
// named results are decoded in results.go.
package state

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnavailable wraps errors that mean Redis could not be reached, so that callers can answer
// "try again later" (HTTP 503) rather than "bad request".
var ErrUnavailable = errors.New("redis unavailable")

// ErrNotFound is returned for an incident id that does not exist.
var ErrNotFound = errors.New("not found")

// Store is the Redis-backed state of one streamwatch deployment. It is safe for concurrent use
// by many goroutines and many processes.
type Store struct {
	rdb  redis.UniversalClient
	base string
	now  func() time.Time
	// Coalesce is the thread_coalesce window: at most one coalesced thread reply and root
	// update per incident per window.
	Coalesce time.Duration
	// AutoResolveAfter, when positive, resolves an incident this long after all its alerts
	// resolved.
	AutoResolveAfter time.Duration
	// Retention, when positive, is how long a closed incident and everything under it stay in
	// Redis; audit entries stay twice as long. Zero keeps them.
	Retention time.Duration
	// FloodLimit, when positive, turns flood protection on: more new incidents than this in one
	// channel within a minute, and further new keys join the channel's flood incident (see
	// flood.go). FloodQuietFor is how long the rate must stay at or below it for the flood to end.
	FloodLimit    int
	FloodQuietFor time.Duration
	// FloodExempt (alerts.flood.exempt_severity): an alert of this severity or a more severe
	// one (1 is SEV1) never joins a flood; 0 exempts none.
	FloodExempt int
	// CorrelatePipeline (alerts.correlate_pipeline) joins a new alert of a pipeline to the
	// open incident streamwatch opened for it, and a symptom streamwatch finds (detection, a
	// failing probe) to the pipeline's open incident, instead of opening another (detect.go).
	CorrelatePipeline bool
	// MinReplicasAcked (redis.min_replicas_acked), when positive, makes what streamwatch
	// acknowledges wait until WAIT confirms this many replicas have it, for up to
	// ReplicaAckTimeout; OnReplicaWait, when set, hears of every WAIT (replicas.go).
	MinReplicasAcked  int
	ReplicaAckTimeout time.Duration
	OnReplicaWait     func(use string, took time.Duration, ok bool)

	commit committer
	// indexed: the channels' incident index holds what older versions opened (list.go).
	indexed atomic.Bool
	sil     silenceCache
	// calls, when set (the call-budget test), counts the Redis calls the scripts make.
	calls *atomic.Int64
}

// New returns a Store over rdb with every key under the hash tag {prefix}.
func New(rdb redis.UniversalClient, prefix string) *Store {
	if prefix == "" {
		prefix = "streamwatch"
	}
	return &Store{rdb: rdb, base: "{" + prefix + "}", now: time.Now, Coalesce: 10 * time.Second,
		FloodQuietFor: 5 * time.Minute, ReplicaAckTimeout: time.Second}
}

// SetClock replaces the clock; tests use it.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Ping reports whether the primary that holds the keys answers: in a cluster, the master of
// their slot, not any node.
func (s *Store) Ping(ctx context.Context) error {
	c := redis.Cmdable(s.rdb)
	cc, cluster := s.rdb.(*redis.ClusterClient)
	if cluster {
		m, err := s.primary(ctx)
		if err != nil {
			return wrap("ping", err)
		}
		c = m
	}
	if err := c.Ping(ctx).Err(); err != nil {
		if cluster {
			cc.ReloadState(ctx) // the slot may have a new master by now
		}
		return wrap("ping", err)
	}
	return nil
}

// wrap marks connection-level failures with ErrUnavailable and keeps the cause.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, redis.Nil) || errors.Is(err, ErrNotFound) {
		return err
	}
	var rerr redis.Error
	// A refused password is an outage too: answer "retry later", not "bad request".
	if errors.As(err, &rerr) && !isLoading(rerr) && !redis.IsAuthError(err) {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
}

// isLoading is true for errors a restarting Redis answers with, which pass once it is up.
func isLoading(err redis.Error) bool {
	msg := err.Error()
	for _, p := range []string{"LOADING", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "READONLY"} {
		if len(msg) >= len(p) && msg[:len(p)] == p {
			return true
		}
	}
	return false
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}
