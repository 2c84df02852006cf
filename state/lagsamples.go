package state

import (
	"context"
	"encoding/binary"
	"errors"
)

// LagSample is one partition of a stored Kafka sampling round, in state's own terms (the
// pipeline converts kafka.PartitionSample, whose fields these are, both ways).
type LagSample struct {
	Partition int32
	Owned     bool
	Committed int64 // may be negative: no commit, or unknown
	LogEnd    int64
	UnixMilli int64
}

// LagSeries names the sampled rounds of a group on a topic.
type LagSeries struct {
	Cluster, Group, Topic string
}

// AppendLag stores one sampling round of a series, in a compact binary form (about 12 bytes
// a partition, so that a 10,000-partition window decodes quickly), keeping the newest keep.
func (s *Store) AppendLag(ctx context.Context, k LagSeries, round []LagSample, keep int64) error {
	return s.AppendLagRound(ctx, k.Cluster, k.Group, k.Topic, encodeRound(round), keep)
}

// ReadLag hands each sample of a series' stored rounds to each, oldest round first, with the
// round's index; it returns the number of rounds.
func (s *Store) ReadLag(ctx context.Context, k LagSeries, each func(round int, s LagSample)) (int, error) {
	rounds, err := s.LagRounds(ctx, k.Cluster, k.Group, k.Topic)
	if err != nil {
		return 0, err
	}
	for i, r := range rounds {
		if err := decodeRound(r, func(s LagSample) { each(i, s) }); err != nil {
			return 0, err
		}
	}
	return len(rounds), nil
}

// encodeRound: time once, then per partition: partition, owned, committed+2, log end, as
// varints (committed may be NoOffset or UnknownOffset, hence +2).
func encodeRound(round []LagSample) []byte {
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

func decodeRound(b []byte, each func(LagSample)) error {
	at, n := binary.Varint(b)
	if n <= 0 {
		return errBadRound
	}
	b = b[n:]
	for len(b) > 0 {
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
				return errBadRound
			}
			vals[i] = v
			b = b[m:]
		}
		each(LagSample{Partition: int32(vals[0]), Owned: vals[1] == 1, Committed: vals[2] - 2, LogEnd: vals[3], UnixMilli: at + vals[4]})
	}
	return nil
}
