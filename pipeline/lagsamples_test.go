package pipeline_test

import (
	"context"
	"slices"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestLagSamplesRecentLag: the digest's lag trend sums each round's lag over the pipeline's
// topics, aligning the topics on their newest round; partitions without a commit add nothing.
func TestLagSamplesRecentLag(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	p := kafka.Pipeline{Name: "sms-replies", Cluster: "main", Group: "g", Topics: []string{"a", "b"}}
	ls := pipeline.NewLagSamples(s, []kafka.Pipeline{p})
	appendRound := func(topic string, lags ...int64) {
		var round []kafka.PartitionSample
		for i, l := range lags {
			round = append(round, kafka.PartitionSample{Partition: int32(i), Committed: 100, LogEnd: 100 + l, UnixMilli: 1})
		}
		round = append(round, kafka.PartitionSample{Partition: 99, Committed: kafka.NoOffset, LogEnd: 1000, UnixMilli: 1})
		if err := ls.Append(ctx, kafka.SampleKey{Cluster: "main", Group: "g", Topic: topic}, round); err != nil {
			t.Fatal(err)
		}
	}
	appendRound("a", 1, 2) // 3
	appendRound("a", 4, 0) // 4
	appendRound("a", 5, 5) // 10
	appendRound("b", 7)    // with a's newest: 17
	got, err := ls.RecentLag(ctx, "sms-replies")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{3, 4, 17}; !slices.Equal(got, want) {
		t.Fatalf("recent lag = %v, want %v", got, want)
	}
	win, err := ls.Window(ctx, kafka.SampleKey{Cluster: "main", Group: "g", Topic: "a"})
	if err != nil || len(win) != 9 || win[8] != (kafka.PartitionSample{Partition: 99, Committed: kafka.NoOffset, LogEnd: 1000, UnixMilli: 1}) {
		t.Fatalf("window of a = %+v, %v; want its 3 rounds of 3 partitions, the last without a commit", win, err)
	}
	if got, err := ls.RecentLag(ctx, "unknown"); err != nil || got != nil {
		t.Fatalf("an unknown pipeline: %v %v", got, err)
	}
}
