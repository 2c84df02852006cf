package kafka

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// DefaultSampleInterval is kafka.sample_interval's default.
const DefaultSampleInterval = 30 * time.Second

// Sampler stores, every interval, a sampling round of each pipeline's
// documented group, which the evaluator judges later. When the documented
// group looks idle, it also samples the other groups committing on the
// pipeline's topics, so that the wrong-group check can tell which of them
// is moving.
//
// Several replicas must not sample at once; the caller makes SampleOnce a
// singleton (state/ holds a Redis lock for it).
type Sampler struct {
	m        *Monitor
	interval time.Duration
	logger   *slog.Logger

	mu   sync.Mutex
	last map[SampleKey]roundSummary // the previous round, to notice idleness cheaply
}

type roundSummary struct {
	committed, logEnd int64
}

// SamplerOptions parameterise NewSampler.
type SamplerOptions struct {
	Interval time.Duration // 0 means DefaultSampleInterval
	Logger   *slog.Logger  // nil means slog.Default()
}

// NewSampler samples m's pipelines into m's store.
func NewSampler(m *Monitor, opts SamplerOptions) (*Sampler, error) {
	if m.store == nil {
		return nil, errors.New("the sampler needs a sample store")
	}
	s := &Sampler{m: m, interval: opts.Interval, logger: opts.Logger, last: map[SampleKey]roundSummary{}}
	if s.interval <= 0 {
		s.interval = DefaultSampleInterval
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	return s, nil
}

// Interval is the sampling period.
func (s *Sampler) Interval() time.Duration { return s.interval }

// Run calls SampleOnce every interval until ctx ends. Errors are logged,
// not returned: a cluster that is down is tried again next time.
func (s *Sampler) Run(ctx context.Context) error {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		if err := s.SampleOnce(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("kafka lag sampling incomplete", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// SampleOnce takes one sampling round of every pipeline and stores it (Round without the
// answer).
func (s *Sampler) SampleOnce(ctx context.Context) error {
	_, err := s.Round(ctx)
	return err
}

// looksIdle is a cheap test for "the documented group may be the wrong
// one": no member on the topic and commits that did not move since the
// previous round while the log end did (or no previous round).
func (s *Sampler) looksIdle(key SampleKey, round []PartitionSample, members int) bool {
	var sum roundSummary
	for _, x := range round {
		if x.Committed > 0 {
			sum.committed += x.Committed
		}
		sum.logEnd += x.LogEnd
	}
	s.mu.Lock()
	prev, seen := s.last[key]
	s.last[key] = sum
	s.mu.Unlock()
	if members > 0 {
		return false
	}
	return !seen || sum.committed == prev.committed && sum.logEnd != prev.logEnd
}
