package kafka

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// deleteRecords moves partitions' log starts up to the given offsets, as retention does.
func deleteRecords(t testing.TB, addrs []string, topic string, before map[int32]int64) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(addrs, saramaTestConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.DeleteRecords(topic, before); err != nil {
		t.Fatal(err)
	}
}

// TestLogRanges: each partition's earliest and latest offset as the brokers hold them after
// retention deleted some records; a topic the cluster does not know is named as such; the
// earliest offsets cost one ListOffsets per leader next to the latest ones.
func TestLogRanges(t *testing.T) {
	c := newKfake(t)
	topic := uniqueName("ranges")
	createTopic(t, c, topic, 3)
	produce(t, c, topic, []int{10, 20, 5}, nil)
	deleteRecords(t, c.ListenAddrs(), topic, map[int32]int64{0: 4, 1: 20})
	cs, err := NewClusters([]ClusterOptions{testClusterOptions(c, "main")}, ClustersOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	ctx := context.Background()
	if _, err := cs.LogRanges(ctx, "main", topic); err != nil { // warms the metadata cache
		t.Fatal(err)
	}
	rc := countRequests(c)
	r, err := cs.LogRanges(ctx, "main", topic, "no.such.topic")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Unavailable) > 0 {
		t.Fatalf("unavailable: %+v", r.Unavailable)
	}
	want := map[int32][2]int64{0: {4, 10}, 1: {20, 20}, 2: {0, 5}}
	for p, w := range want {
		got, ok := r.Partition(topic, p)
		if !ok || got.LogStart != w[0] || got.LogEnd != w[1] {
			t.Errorf("p%d: %+v (found %v), want log start %d, log end %d", p, got, ok, w[0], w[1])
		}
	}
	if tr, ok := r.Topic("no.such.topic"); !ok || tr.Exists || len(tr.Partitions) != 0 {
		t.Errorf("unknown topic: %+v (found %v)", tr, ok)
	}
	if tr, _ := r.Topic(topic); !tr.Exists || len(tr.Partitions) != 3 {
		t.Errorf("topic: %+v", tr)
	}
	if _, ok := r.Partition(topic, 3); ok {
		t.Error("a partition the topic does not have was found")
	}
	// Three brokers lead the three partitions: per leader one ListOffsets for each end.
	if n := rc.total(kmsg.ListOffsets); n != 2*len(rc.byKey(kmsg.ListOffsets)) {
		t.Errorf("%d ListOffsets to %d brokers, want two each", n, len(rc.byKey(kmsg.ListOffsets)))
	}

	starts, unavailable, err := cs.LogStarts(ctx, "main", []TopicPartition{{topic, 0}, {topic, 2}, {"no.such.topic", 0}})
	if err != nil {
		t.Fatal(err)
	}
	if len(starts) != 2 || starts[TopicPartition{topic, 0}] != 4 || starts[TopicPartition{topic, 2}] != 0 {
		t.Errorf("log starts %v", starts)
	}
	if len(unavailable) != 1 || unavailable[0].Partitions[0].Topic != "no.such.topic" {
		t.Errorf("unavailable %+v, want the unknown topic", unavailable)
	}
	if _, err := cs.LogRanges(ctx, "nope", topic); err == nil {
		t.Error("an unknown cluster answered")
	}
}
