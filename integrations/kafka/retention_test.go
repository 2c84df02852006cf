package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestTopicRetention reads retention.ms, retention.bytes and the cleanup policy the brokers
// hold for each topic; an unknown topic is left out.
func TestTopicRetention(t *testing.T) {
	c := sharedKfake(t)
	admin, err := sarama.NewClusterAdmin(c.ListenAddrs(), saramaTestConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	str := func(s string) *string { return &s }
	short, compacted, plain := uniqueName("short"), uniqueName("compacted"), uniqueName("plain")
	for topic, cfg := range map[string]map[string]*string{
		short:     {"retention.ms": str("600000"), "retention.bytes": str("1048576")},
		compacted: {"cleanup.policy": str("compact")},
		plain:     nil,
	} {
		if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1, ConfigEntries: cfg}, false); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := NewClusters([]ClusterOptions{testClusterOptions(c, "main")}, ClustersOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := cs.TopicRetention(ctx, "main", short, compacted, plain, "no-such-topic")
	if err != nil {
		t.Fatal(err)
	}
	if r := got[short]; r.Time != 10*time.Minute || r.Bytes != 1<<20 || r.Compacted {
		t.Errorf("%s: %+v", short, r)
	}
	if r := got[compacted]; !r.Compacted {
		t.Errorf("%s: %+v, want compacted", compacted, r)
	}
	if r := got[plain]; r.Time != 7*24*time.Hour || r.Compacted {
		t.Errorf("%s: %+v, want the broker's default week", plain, r)
	}
	if _, ok := got["no-such-topic"]; ok {
		t.Errorf("an unknown topic has a retention: %+v", got)
	}
}
