package kafka

import (
	"context"
	"errors"
	"fmt"
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

// SampleOnce takes one sampling round of every pipeline and stores it. A
// pipeline whose cluster fails does not stop the others; the errors are
// joined. Each pipeline gets at most one interval.
func (s *Sampler) SampleOnce(ctx context.Context) error {
	pipelines := s.m.Pipelines()
	errs := make([]error, len(pipelines))
	var wg sync.WaitGroup
	for i, p := range pipelines {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, s.interval)
			defer cancel()
			errs[i] = s.samplePipeline(pctx, p)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Sampler) samplePipeline(ctx context.Context, p Pipeline) error {
	c, err := s.m.clusters.Cluster(p.Cluster)
	if err != nil {
		return err
	}
	snap, err := c.snapshot(ctx, p.Group, p.Topics)
	if err != nil {
		return fmt.Errorf("sample pipeline %s: %w", p.Name, err)
	}
	now := s.m.now()
	rounds := snap.samples(now)
	var errs []error
	for _, u := range snap.unavailable {
		errs = append(errs, fmt.Errorf("sample pipeline %s: %s: %w", p.Name, u.What, u.Err))
	}
	for _, topic := range p.Topics {
		round := rounds[topic]
		if len(round) == 0 {
			continue
		}
		key := SampleKey{Cluster: c.Name(), Group: p.Group, Topic: topic}
		if err := s.m.store.Append(ctx, key, round); err != nil {
			errs = append(errs, fmt.Errorf("store samples of %s: %w", key, err))
			continue
		}
		if s.looksIdle(key, round, snap.group.membersOn(topic)) {
			errs = append(errs, s.sampleOthers(ctx, c, p, topic, now))
		}
	}
	return errors.Join(errs...)
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

// sampleOthers stores a round for every other group committing on topic.
func (s *Sampler) sampleOthers(ctx context.Context, c *Cluster, p Pipeline, topic string, now time.Time) error {
	tg, err := c.topicGroups(ctx, topic, nil)
	if err != nil {
		return fmt.Errorf("sample groups on %s: %w", topic, err)
	}
	ends := map[int32]int64{}
	for i, ref := range tg.refs {
		if tg.logEnd[i] >= 0 {
			ends[ref.partition] = tg.logEnd[i]
		}
	}
	var errs []error
	for g, cm := range tg.commits {
		if g == p.Group {
			continue
		}
		owned := map[int32]bool{}
		for _, mb := range tg.groups[g].Members {
			for _, p := range mb.Assigned[topic] {
				owned[p] = true
			}
		}
		var round []PartitionSample
		for _, ref := range tg.refs {
			end, ok := ends[ref.partition]
			if !ok {
				continue
			}
			off, committed := cm[ref.partition]
			if !committed {
				off = NoOffset
			}
			round = append(round, PartitionSample{Partition: ref.partition, Committed: off, LogEnd: end, Owned: owned[ref.partition], UnixMilli: now.UnixMilli()})
		}
		if len(round) == 0 {
			continue
		}
		key := SampleKey{Cluster: c.Name(), Group: g, Topic: topic}
		if err := s.m.store.Append(ctx, key, round); err != nil {
			errs = append(errs, fmt.Errorf("store samples of %s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}
