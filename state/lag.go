package state

import (
	"context"
	"strconv"
)

// lagKey names one sampled (cluster, group, topic). Parts are length-prefixed so that no
// combination of names collides with another.
func (s *Store) lagKey(cluster, group, topic string) string {
	return s.key("lag", strconv.Itoa(len(cluster))+":"+cluster, strconv.Itoa(len(group))+":"+group, topic)
}

// AppendLagRound stores one encoded sampling round of a group on a topic and keeps the
// newest max rounds.
func (s *Store) AppendLagRound(ctx context.Context, cluster, group, topic string, round []byte, max int64) error {
	k := s.lagKey(cluster, group, topic)
	pipe := s.rdb.TxPipeline()
	pipe.RPush(ctx, k, round)
	pipe.LTrim(ctx, k, -max, -1)
	_, err := pipe.Exec(ctx)
	return wrap("store lag samples", err)
}

// LagRounds returns the stored rounds of a group on a topic, oldest first.
func (s *Store) LagRounds(ctx context.Context, cluster, group, topic string) ([][]byte, error) {
	vals, err := s.rdb.LRange(ctx, s.lagKey(cluster, group, topic), 0, -1).Result()
	if err != nil {
		return nil, wrap("read lag samples", err)
	}
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = []byte(v)
	}
	return out, nil
}
