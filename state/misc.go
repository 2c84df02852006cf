package state

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// FirstDelivery reports whether this is the first time any replica sees the socket-mode
// envelope id; Slack delivers at least once, so a redelivered envelope must be ignored.
func (s *Store) FirstDelivery(ctx context.Context, envelopeID string) (bool, error) {
	ok, err := s.rdb.SetNX(ctx, s.key("envelope", envelopeID), 1, 24*time.Hour).Result()
	if err != nil {
		return false, wrap("envelope dedup", err)
	}
	return ok, nil
}

// TryLock takes the named lock for ttl if nobody holds it. A holder that dies frees it when
// ttl passes. With MinReplicasAcked the lock counts as taken only once the replicas confirm
// it: a lock a failover loses could be taken again by another replica (replicas.go); one they
// do not confirm is given back, and the error wraps ErrNotReplicated.
func (s *Store) TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	mark, err := s.Mark(ctx)
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", name, err)
	}
	ok, err := s.rdb.SetNX(ctx, s.key("lock", name), owner, ttl).Result()
	if err != nil {
		return false, wrap("lock "+name, err)
	}
	if ok {
		if err := s.Confirm(ctx, "lock", mark); err != nil {
			_ = s.Unlock(context.WithoutCancel(ctx), name, owner)
			return false, fmt.Errorf("lock %s: %w", name, err)
		}
	}
	return ok, nil
}

// AuditEntry is one line of the audit stream.
type AuditEntry struct {
	At      time.Time
	Actor   string
	Action  string
	Target  string
	Outcome string // done, refused, failed
	Detail  string
	// Pipeline and Incident are what the entry concerns, when known: `audit PIPELINE` and
	// `audit INC-N` select by them. Channel is where the command or click came from, and Via
	// how (command, mention, button).
	Pipeline string
	Incident string
	Channel  string
	Via      string
}

// Audit appends e to the audit stream, which keeps the newest 100,000 entries and, with a
// Retention, drops those older than twice the retention.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	if e.At.IsZero() {
		e.At = s.now()
	}
	values := []any{"at", ms(e.At), "actor", e.Actor, "action", e.Action, "target", e.Target,
		"outcome", e.Outcome, "detail", e.Detail}
	for _, kv := range [][2]string{{"pipeline", e.Pipeline}, {"incident", e.Incident}, {"channel", e.Channel}, {"via", e.Via}} {
		if kv[1] != "" {
			values = append(values, kv[0], kv[1])
		}
	}
	pipe := s.rdb.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{
		Stream: s.key("audit"), MaxLen: 100000, Approx: true, Values: values,
	})
	if keep := s.auditRetention(); keep > 0 {
		// Stream ids are the time Redis added the entry, in ms: trim by them.
		pipe.XTrimMinID(ctx, s.key("audit"), strconv.FormatInt(ms(s.now().Add(-keep)), 10))
	}
	_, err := pipe.Exec(ctx)
	return wrap("audit", err)
}

// AuditLog returns the newest n audit entries, oldest first.
func (s *Store) AuditLog(ctx context.Context, n int64) ([]AuditEntry, error) {
	msgs, err := s.rdb.XRevRangeN(ctx, s.key("audit"), "+", "-", n).Result()
	if err != nil {
		return nil, wrap("read audit", err)
	}
	out := make([]AuditEntry, 0, len(msgs))
	for i := len(msgs) - 1; i >= 0; i-- {
		out = append(out, parseAudit(msgs[i].Values))
	}
	return out, nil
}

func parseAudit(v map[string]any) AuditEntry {
	at, _ := strconv.ParseInt(str(v["at"]), 10, 64)
	return AuditEntry{At: fromMS(at), Actor: str(v["actor"]), Action: str(v["action"]),
		Target: str(v["target"]), Outcome: str(v["outcome"]), Detail: str(v["detail"]),
		Pipeline: str(v["pipeline"]), Incident: str(v["incident"]), Channel: str(v["channel"]), Via: str(v["via"])}
}
