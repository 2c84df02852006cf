package state

import (
	"context"
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
// ttl passes.
func (s *Store) TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	ok, err := s.rdb.SetNX(ctx, s.key("lock", name), owner, ttl).Result()
	if err != nil {
		return false, wrap("lock "+name, err)
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
}

// Audit appends e to the audit stream, which keeps the newest 100,000 entries and, with a
// Retention, drops those older than twice the retention.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	if e.At.IsZero() {
		e.At = s.now()
	}
	pipe := s.rdb.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{
		Stream: s.key("audit"), MaxLen: 100000, Approx: true,
		Values: []any{"at", ms(e.At), "actor", e.Actor, "action", e.Action, "target", e.Target,
			"outcome", e.Outcome, "detail", e.Detail},
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
		v := msgs[i].Values
		at, _ := strconv.ParseInt(str(v["at"]), 10, 64)
		out = append(out, AuditEntry{At: fromMS(at), Actor: str(v["actor"]), Action: str(v["action"]),
			Target: str(v["target"]), Outcome: str(v["outcome"]), Detail: str(v["detail"])})
	}
	return out, nil
}
