package pipeline

import (
	"context"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/state"
)

// LagRounds is where the sampler's rounds are kept, in the state's own encoding (state.Store).
type LagRounds interface {
	AppendLag(ctx context.Context, k state.LagSeries, round []state.LagSample, keep int64) error
	ReadLag(ctx context.Context, k state.LagSeries, each func(round int, s state.LagSample)) (int, error)
}

// LagSamples keeps the Kafka sampler's rounds in the state (kafka.SampleStore), and gives the
// digest each pipeline's recent lag.
type LagSamples struct {
	rounds    LagRounds
	pipelines []kafka.Pipeline
}

var _ kafka.SampleStore = (*LagSamples)(nil)

// NewLagSamples keeps the samples of pipelines in rounds.
func NewLagSamples(rounds LagRounds, pipelines []kafka.Pipeline) *LagSamples {
	return &LagSamples{rounds: rounds, pipelines: pipelines}
}

func series(k kafka.SampleKey) state.LagSeries {
	return state.LagSeries{Cluster: k.Cluster, Group: k.Group, Topic: k.Topic}
}

// Append stores one sampling round of a group on a topic, keeping the newest kafka.MaxSamples.
func (l *LagSamples) Append(ctx context.Context, k kafka.SampleKey, round []kafka.PartitionSample) error {
	out := make([]state.LagSample, len(round))
	for i, s := range round {
		out[i] = state.LagSample(s)
	}
	return l.rounds.AppendLag(ctx, series(k), out, kafka.MaxSamples)
}

// Window returns the stored samples of a group on a topic, oldest first.
func (l *LagSamples) Window(ctx context.Context, k kafka.SampleKey) ([]kafka.PartitionSample, error) {
	var out []kafka.PartitionSample
	if _, err := l.rounds.ReadLag(ctx, series(k), func(_ int, s state.LagSample) {
		out = append(out, kafka.PartitionSample(s))
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// RecentLag is each stored round's lag over the pipeline's topics (kafka.SumLag), oldest
// first, the topics aligned on their newest round.
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
		var rounds [][]kafka.PartitionSample
		n, err := l.rounds.ReadLag(ctx, state.LagSeries{Cluster: p.Cluster, Group: p.Group, Topic: topic}, func(r int, s state.LagSample) {
			for len(rounds) <= r {
				rounds = append(rounds, nil)
			}
			rounds[r] = append(rounds[r], kafka.PartitionSample(s))
		})
		if err != nil {
			return nil, err
		}
		for len(rounds) < n {
			rounds = append(rounds, nil) // an empty round
		}
		rounds = rounds[max(0, len(rounds)-kafka.MaxSamples):]
		longest = max(longest, len(rounds))
		off := kafka.MaxSamples - len(rounds) // align topics on their newest round
		for i, r := range rounds {
			lag, _ := kafka.SumLag(r)
			totals[off+i] += lag
		}
	}
	return totals[kafka.MaxSamples-longest:], nil
}
