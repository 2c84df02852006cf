package state

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// LastTick is the newest tick any replica ran of the named job, zero if none.
func (s *Store) LastTick(ctx context.Context, job string) (time.Time, error) {
	v, err := s.rdb.HGet(ctx, s.key("job", job), "last").Int64()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, wrap("read last tick", err)
	}
	return fromMS(v), nil
}

// SetLastTick records that tick ran, and adds missed to the job's count of missed ticks.
func (s *Store) SetLastTick(ctx context.Context, job string, tick time.Time, missed int) error {
	pipe := s.rdb.TxPipeline()
	pipe.HSet(ctx, s.key("job", job), "last", ms(tick))
	if missed > 0 {
		pipe.HIncrBy(ctx, s.key("job", job), "missed", int64(missed))
	}
	_, err := pipe.Exec(ctx)
	return wrap("record tick", err)
}

// TakeMissed returns the named job's missed ticks since the last call, and resets the count.
func (s *Store) TakeMissed(ctx context.Context, job string) (int64, error) {
	pipe := s.rdb.TxPipeline()
	get := pipe.HGet(ctx, s.key("job", job), "missed")
	pipe.HDel(ctx, s.key("job", job), "missed")
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, wrap("read missed ticks", err)
	}
	n, _ := strconv.ParseInt(get.Val(), 10, 64)
	return n, nil
}
