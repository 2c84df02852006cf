package state

import (
	"context"
	"encoding/binary"
	"errors"

	"github.com/streamwatch/streamwatch/integrations/kafka"
)

// LagSamples keeps the Kafka sampler's rounds in Redis (kafka.SampleStore), each round in a
// compact binary form (about 12 bytes a partition), so a 10,000-partition window decodes
// quickly.
type LagSamples struct {
	st        *Store
	pipelines []kafka.Pipeline
}

var _ kafka.SampleStore = (*LagSamples)(nil)

// NewLagSamples keeps the samples of pipelines in s.
func NewLagSamples(s *Store, pipelines []kafka.Pipeline) *LagSamples {
	return &LagSamples{st: s, pipelines: pipelines}
}

// Append stores one sampling round of a group on a topic, keeping the newest kafka.MaxSamples.
func (l *LagSamples) Append(ctx context.Context, k kafka.SampleKey, round []kafka.PartitionSample) error {
	return l.st.AppendLagRound(ctx, k.Cluster, k.Group, k.Topic, encodeRound(round), kafka.MaxSamples)
}

// Window returns the stored samples of a group on a topic, oldest first.
func (l *LagSamples) Window(ctx context.Context, k kafka.SampleKey) ([]kafka.PartitionSample, error) {
	rounds, err := l.st.LagRounds(ctx, k.Cluster, k.Group, k.Topic)
	if err != nil {
		return nil, err
	}
	var out []kafka.PartitionSample
	for _, r := range rounds {
		out, err = decodeRound(out, r)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RecentLag sums each stored round's lag over the pipeline's topics, oldest first.
func (l *LagSamples) RecentLag(ctx context.Context, pipeline string) ([]int64, error) {
	var p *kafka.Pipeline
	for i := range l.pipelines {
		if l.pipelines[i].Name == pipeline {
			p = &l.pipelines[i]
		}
	}
	if p == nil {
		return nil, nil
	}
	totals := make([]int64, kafka.MaxSamples)
	longest := 0
	for _, topic := range p.Topics {
		rounds, err := l.st.LagRounds(ctx, p.Cluster, p.Group, topic)
		if err != nil {
			return nil, err
		}
		rounds = rounds[max(0, len(rounds)-kafka.MaxSamples):]
		longest = max(longest, len(rounds))
		off := kafka.MaxSamples - len(rounds) // align topics on their newest round
		for i, r := range rounds {
			samples, err := decodeRound(nil, r)
			if err != nil {
				return nil, err
			}
			for _, s := range samples {
				if s.Committed >= 0 && s.LogEnd > s.Committed {
					totals[off+i] += s.LogEnd - s.Committed
				}
			}
		}
	}
	return totals[kafka.MaxSamples-longest:], nil
}

// encodeRound: time once, then per partition: partition, owned, committed+2, log end, as
// varints (committed may be NoOffset or UnknownOffset, hence +2).
func encodeRound(round []kafka.PartitionSample) []byte {
	buf := make([]byte, 0, 8+len(round)*12)
	var at int64
	if len(round) > 0 {
		at = round[0].UnixMilli
	}
	buf = binary.AppendVarint(buf, at)
	for _, s := range round {
		buf = binary.AppendUvarint(buf, uint64(s.Partition))
		owned := uint64(0)
		if s.Owned {
			owned = 1
		}
		buf = binary.AppendUvarint(buf, owned)
		buf = binary.AppendVarint(buf, s.Committed+2)
		buf = binary.AppendVarint(buf, s.LogEnd)
		buf = binary.AppendVarint(buf, s.UnixMilli-at)
	}
	return buf
}

var errBadRound = errors.New("corrupt lag sample round")

func decodeRound(out []kafka.PartitionSample, b []byte) ([]kafka.PartitionSample, error) {
	at, n := binary.Varint(b)
	if n <= 0 {
		return out, errBadRound
	}
	b = b[n:]
	for len(b) > 0 {
		var s kafka.PartitionSample
		vals := [5]int64{}
		for i := range vals {
			var v int64
			var m int
			if i < 2 {
				var u uint64
				u, m = binary.Uvarint(b)
				v = int64(u)
			} else {
				v, m = binary.Varint(b)
			}
			if m <= 0 {
				return out, errBadRound
			}
			vals[i] = v
			b = b[m:]
		}
		s.Partition, s.Owned, s.Committed, s.LogEnd, s.UnixMilli = int32(vals[0]), vals[1] == 1, vals[2]-2, vals[3], at+vals[4]
		out = append(out, s)
	}
	return out, nil
}
