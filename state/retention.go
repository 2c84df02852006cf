package state

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bounded state. Whatever streamwatch keeps for a while after it stops mattering expires by
// itself: a closed incident gets a TTL of Retention on every key under it when it closes (the
// scripts' retire), and the audit stream drops entries older than twice the retention as new
// ones arrive. Open incidents never expire. The outbox holds only undelivered entries: a
// delivered one is deleted with its acknowledgement (Complete, Drop).

// retentionMS is the retention in milliseconds, 0 when closed incidents are kept.
func (s *Store) retentionMS() int64 { return max(s.Retention, 0).Milliseconds() }

// auditRetention is how long audit entries are kept: twice the incidents', so that the record
// of who did what outlives the incidents it was done to.
func (s *Store) auditRetention() time.Duration { return 2 * max(s.Retention, 0) }

// Sweep does one slice of the pass that gives closed incidents of an older streamwatch their
// TTL; it returns true once the pass is complete (then it does nothing). It is safe on every
// replica: the pass's cursor lives in Redis.
func (s *Store) Sweep(ctx context.Context) (bool, error) {
	if s.Retention <= 0 {
		return true, nil
	}
	cursor, err := s.rdb.Get(ctx, s.key("sweep")).Result()
	if errors.Is(err, redis.Nil) {
		cursor = "0"
	} else if err != nil {
		return false, wrap("sweep", err)
	}
	if cursor == "done" {
		return true, nil
	}
	res, err := s.one(s.run(ctx, sweepScript, []string{s.base}, cursor, s.retentionMS(), ms(s.now())).Result())
	if err != nil {
		return false, wrap("sweep", err)
	}
	next := res.str(0, "cursor")
	if next == "0" {
		next = "done"
	}
	// Two replicas may run the same slice: harmless, both set the same TTLs.
	if err := s.rdb.Set(ctx, s.key("sweep"), next, 0).Err(); err != nil {
		return false, wrap("sweep", err)
	}
	return next == "done", nil
}

// Stats are the gauges of the state: what is open, what waits for Slack, what floods.
type Stats struct {
	OpenIncidents int64
	OutboxDepth   int64
	// OutboxOldest is when the oldest undelivered outbox entry was queued; zero when none is.
	OutboxOldest time.Time
	// Floods are the channels in a flood now.
	Floods []string
}

// Stats reads the gauges in one round trip.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	pipe := s.rdb.Pipeline()
	open := pipe.ZCard(ctx, s.key("open"))
	depth := pipe.XLen(ctx, s.key("outbox"))
	first := pipe.XRangeN(ctx, s.key("outbox"), "-", "+", 1)
	floods := pipe.ZRangeByScore(ctx, s.key("floods"), &redis.ZRangeBy{Min: "(" + strconv.FormatInt(ms(s.now()), 10), Max: "+inf"})
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return Stats{}, wrap("read stats", err)
	}
	st := Stats{OpenIncidents: open.Val(), OutboxDepth: depth.Val(), Floods: floods.Val()}
	if msgs := first.Val(); len(msgs) > 0 {
		st.OutboxOldest = streamTime(msgs[0].ID)
	}
	return st, nil
}

// streamTime is when a stream entry id ("<ms>-<seq>") was made.
func streamTime(id string) time.Time {
	for i := 0; i < len(id); i++ {
		if id[i] == '-' {
			v, err := strconv.ParseInt(id[:i], 10, 64)
			if err != nil {
				return time.Time{}
			}
			return fromMS(v)
		}
	}
	return time.Time{}
}
