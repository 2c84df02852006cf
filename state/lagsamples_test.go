package state_test

import (
	"context"
	"slices"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/state"
)

// TestLagSamplesRoundTrip: what the sampler appends comes back from Window unchanged, rounds
// oldest first, committed offsets that are NoOffset or UnknownOffset included; only the newest
// kafka.MaxSamples rounds are kept.
func TestLagSamplesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	ls := state.NewLagSamples(s, nil)
	key := kafka.SampleKey{Cluster: "main", Group: "sms-replies-prod", Topic: "client.replies.sms"}
	var want []kafka.PartitionSample
	for r := range kafka.MaxSamples + 3 {
		at := int64(1_796_000_000_000 + r*30_000)
		round := []kafka.PartitionSample{
			{Partition: 0, Owned: true, Committed: int64(10 * r), LogEnd: int64(10*r + 5), UnixMilli: at},
			{Partition: 1, Owned: false, Committed: kafka.NoOffset, LogEnd: 7, UnixMilli: at + 3},
			{Partition: 70000, Owned: true, Committed: kafka.UnknownOffset, LogEnd: kafka.UnknownOffset, UnixMilli: at + 1},
		}
		if err := ls.Append(ctx, key, round); err != nil {
			t.Fatal(err)
		}
		if r >= 3 {
			want = append(want, round...)
		}
	}
	got, err := ls.Window(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("window = %d samples, want the newest %d rounds (%d samples):\ngot  %+v\nwant %+v", len(got), kafka.MaxSamples, len(want), got[:3], want[:3])
	}
}

// TestLagSamplesRecentLag: the digest's lag trend sums each round's lag over the pipeline's
// topics, aligning the topics on their newest round; partitions without a commit add nothing.
func TestLagSamplesRecentLag(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	p := kafka.Pipeline{Name: "sms-replies", Cluster: "main", Group: "g", Topics: []string{"a", "b"}}
	ls := state.NewLagSamples(s, []kafka.Pipeline{p})
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
	if got, err := ls.RecentLag(ctx, "unknown"); err != nil || got != nil {
		t.Fatalf("an unknown pipeline: %v %v", got, err)
	}
}
