package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestTopicRanges(t *testing.T) {
	c := sharedKfake(t)
	topic := uniqueName("ranges")
	createTopic(t, c, topic, 3)
	produce(t, c, topic, []int{10, 4, 0}, nil)
	// Retention (here DeleteRecords) moves partition 0's log start to 6.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os := kadm.Offsets{}
	os.Add(kadm.Offset{Topic: topic, Partition: 0, At: 6, LeaderEpoch: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := kadm.NewClient(cl).DeleteRecords(ctx, os); err != nil || res.Error() != nil {
		t.Fatal(err, res.Error())
	}
	cs, err := NewClusters([]ClusterOptions{testClusterOptions(c, "main")}, ClustersOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got, err := cs.TopicRanges(ctx, "main", topic, "no-such-topic")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]PartitionRange{0: {6, 10}, 1: {0, 4}, 2: {0, 0}}
	for p, r := range want {
		if g := got.Partitions[TopicPartition{topic, p}]; g != r {
			t.Errorf("partition %d: %+v, want %+v", p, g, r)
		}
	}
	if len(got.Partitions) != 3 || len(got.Missing) != 1 || got.Missing[0] != "no-such-topic" || len(got.Unavailable) != 0 {
		t.Errorf("got %+v", got)
	}
	tests := []struct {
		r    PartitionRange
		off  int64
		want bool
	}{
		{PartitionRange{6, 10}, 5, false}, // deleted by retention
		{PartitionRange{6, 10}, 6, true},
		{PartitionRange{6, 10}, 10, true}, // the next record: a reader waits there
		{PartitionRange{6, 10}, 11, false},
		{PartitionRange{UnknownOffset, 10}, 7, false},
	}
	for _, tc := range tests {
		if got := tc.r.Holds(tc.off); got != tc.want {
			t.Errorf("%+v.Holds(%d) = %v", tc.r, tc.off, got)
		}
	}
}
