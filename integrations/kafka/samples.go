package kafka

import (
	"context"
	"slices"
	"sync"
)

// MaxSamples is how many sampling rounds a SampleStore keeps per key.
const MaxSamples = 60

// SampleKey names one sample series: a group's partitions of one topic on
// one cluster.
type SampleKey struct {
	Cluster string
	Group   string
	Topic   string
}

func (k SampleKey) String() string { return k.Cluster + "/" + k.Group + "/" + k.Topic }

// SampleStore persists sampling rounds. state/ implements it on Redis; the
// sampler appends, the lag report reads.
type SampleStore interface {
	// Append stores one sampling round (all partitions sampled at once)
	// and drops rounds beyond the newest MaxSamples.
	Append(ctx context.Context, key SampleKey, round []PartitionSample) error
	// Window returns the stored rounds, oldest first, flattened: the
	// order Evaluate expects. No series is not an error: it returns nil.
	// Callers do not modify the slice.
	Window(ctx context.Context, key SampleKey) ([]PartitionSample, error)
}

// MemoryStore is a SampleStore in memory, for tests and single-replica use.
// Each series is one flat slice: Window hands out a view of it without
// copying, and Append only ever writes past the end of every view handed
// out, so views stay valid.
type MemoryStore struct {
	limit  int
	mu     sync.Mutex
	series map[SampleKey]*memorySeries
}

type memorySeries struct {
	flat   []PartitionSample
	rounds []int // the length of each stored round, oldest first
}

// NewMemoryStore keeps the newest limit rounds per key; limit <= 0 means
// MaxSamples.
func NewMemoryStore(limit int) *MemoryStore {
	if limit <= 0 {
		limit = MaxSamples
	}
	return &MemoryStore{limit: limit, series: map[SampleKey]*memorySeries{}}
}

// Append implements SampleStore.
func (m *MemoryStore) Append(_ context.Context, key SampleKey, round []PartitionSample) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.series[key]
	if s == nil {
		s = &memorySeries{}
		m.series[key] = s
	}
	s.flat = append(s.flat, round...)
	s.rounds = append(s.rounds, len(round))
	if len(s.rounds) > m.limit {
		// Dropping from the front shrinks the capacity, so the next
		// appends that outgrow it copy only the live rounds.
		s.flat = s.flat[s.rounds[0]:]
		s.rounds = s.rounds[1:]
	}
	return nil
}

// Window implements SampleStore. The slice is shared: callers must not
// modify it.
func (m *MemoryStore) Window(_ context.Context, key SampleKey) ([]PartitionSample, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.series[key]
	if s == nil || len(s.flat) == 0 {
		return nil, nil
	}
	return s.flat[:len(s.flat):len(s.flat)], nil
}

// Keys lists the stored series, for tests and diagnostics.
func (m *MemoryStore) Keys() []SampleKey {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]SampleKey, 0, len(m.series))
	for k := range m.series {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b SampleKey) int {
		switch {
		case a.String() < b.String():
			return -1
		case a.String() > b.String():
			return 1
		}
		return 0
	})
	return out
}
