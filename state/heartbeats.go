package state

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Heartbeats (a dead man's switch): P:heartbeats holds when each expected alert last arrived,
// P:heartbeats:since when streamwatch began to expect it, P:heartbeats:incident the incident its
// absence opened.

// HeartbeatState is what state knows of one expected alert.
type HeartbeatState struct {
	Last     time.Time // its last arrival; zero: never seen
	Since    time.Time // when streamwatch began to expect it
	Incident string    // the open incident of its absence; "" for none
}

// Beat records that the expected alerts names arrived at at.
func (s *Store) Beat(ctx context.Context, at time.Time, names ...string) error {
	if len(names) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(names))
	for _, n := range names {
		args = append(args, n, ms(at))
	}
	return wrap("record heartbeat", s.rdb.HSet(ctx, s.key("heartbeats"), args...).Err())
}

// Heartbeats returns the state of the expected alerts names; one never expected before is
// expected from now on.
func (s *Store) Heartbeats(ctx context.Context, names []string) (map[string]HeartbeatState, error) {
	now := ms(s.now())
	pipe := s.rdb.Pipeline()
	for _, n := range names {
		pipe.HSetNX(ctx, s.key("heartbeats:since"), n, now)
	}
	last := pipe.HMGet(ctx, s.key("heartbeats"), names...)
	since := pipe.HMGet(ctx, s.key("heartbeats:since"), names...)
	inc := pipe.HMGet(ctx, s.key("heartbeats:incident"), names...)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("read heartbeats", err)
	}
	at := func(v any) time.Time { n, _ := strconv.ParseInt(str(v), 10, 64); return fromMS(n) }
	out := make(map[string]HeartbeatState, len(names))
	for i, n := range names {
		out[n] = HeartbeatState{Last: at(last.Val()[i]), Since: at(since.Val()[i]), Incident: str(inc.Val()[i])}
	}
	return out, nil
}

// SetHeartbeatIncident records the incident the absence of name opened ("" clears it).
func (s *Store) SetHeartbeatIncident(ctx context.Context, name, id string) error {
	if id == "" {
		return wrap("record heartbeat incident", s.rdb.HDel(ctx, s.key("heartbeats:incident"), name).Err())
	}
	return wrap("record heartbeat incident", s.rdb.HSet(ctx, s.key("heartbeats:incident"), name, id).Err())
}
