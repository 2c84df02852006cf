package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/pipeline"
)

// newClusters is a kafka.Clusters whose cluster main is kc (or, with kc nil, a port where
// nothing listens).
func newClusters(t *testing.T, kc *kafkatest.Cluster) *kafka.Clusters {
	t.Helper()
	brokers := []string{"127.0.0.1:1"}
	if kc != nil {
		brokers = kc.ListenAddrs()
	}
	cs, err := kafka.NewClusters([]kafka.ClusterOptions{{Name: "main", Brokers: brokers, Version: "3.6.0", Timeout: 2 * time.Second}}, kafka.ClustersOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestCheckpointsAgainstTheBrokers: the checkpoint's newest offsets are compared with what the
// pipeline's own cluster holds: records the brokers deleted before the query read them are
// not pending, and the oldest record still waiting is dated by its own timestamp; without
// Kafka, or with brokers that do not answer, the checkpoint is still read and the pending
// records are unknown.
func TestCheckpointsAgainstTheBrokers(t *testing.T) {
	ctx := context.Background()
	const topic = "client.replies.sms"
	dir := filepath.Join(t.TempDir(), "cp")
	// Batches 0..1 planned and committed: every partition's next offset is 10.
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: time.Now().Add(-3 * time.Minute), LatestBatch: 1, LatestCommit: 1,
		Topics: []sparktest.Topic{{Name: topic, Partitions: 3, RecordsPerBatch: 5}}}); err != nil {
		t.Fatal(err)
	}
	kc, err := kafkatest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	if err := kc.CreateTopic(ctx, topic, 3); err != nil {
		t.Fatal(err)
	}
	written := time.Now().Add(-20 * time.Minute).Truncate(time.Millisecond)
	if err := kc.Produce(ctx, topic, []int{25, 25, 25}, written); err != nil {
		t.Fatal(err)
	}
	// Retention took partition 0 up to 15: five of its records were never read.
	if err := kc.DeleteRecords(ctx, topic, map[int32]int64{0: 15}); err != nil {
		t.Fatal(err)
	}
	withKafka := fmt.Sprintf("    kafka: {cluster: main, topics: [%s], group: sms-replies-prod}\n    checkpoint: {location: %s}\n", topic, dir)
	kafkaCluster := "kafka:\n  clusters:\n    main: {brokers: [\"127.0.0.1:9092\"]}\n"
	cases := []struct {
		name        string
		pipeline    string
		brokers     *kafka.Clusters
		wantPending int64
		wantDeleted int64
		wantKnown   bool
		wantOldest  bool
	}{
		{"log ends 25, offsets 10 on three partitions, 15 the log start of one", withKafka, newClusters(t, kc), 40, 5, true, true},
		{"brokers do not answer", withKafka, newClusters(t, nil), 0, 0, false, false},
		{"no Kafka in the pipeline", fmt.Sprintf("    checkpoint: {location: %s}\n", dir), newClusters(t, kc), 0, 0, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cps := &pipeline.Checkpoints{Config: parseConfig(t, c.pipeline, kafkaCluster), Kafka: c.brokers}
			rd, err := cps.Read(ctx, "sms-replies")
			if err != nil {
				t.Fatal(err)
			}
			r := rd.Report
			if r.Committed == nil || r.Committed.ID != 1 {
				t.Fatalf("committed = %+v, want batch 1", r.Committed)
			}
			if r.PendingKnown != c.wantKnown || r.PendingTotal != c.wantPending || r.DeletedTotal != c.wantDeleted {
				t.Fatalf("pending known %v total %d deleted %d, want %v %d %d", r.PendingKnown, r.PendingTotal, r.DeletedTotal, c.wantKnown, c.wantPending, c.wantDeleted)
			}
			if got := !rd.Oldest.IsZero(); got != c.wantOldest || (got && !rd.Oldest.Equal(written)) {
				t.Fatalf("oldest waiting record %v, want %v (%v)", rd.Oldest, written, c.wantOldest)
			}
			if c.wantKnown && (rd.Brokers == nil || rd.Brokers.Cluster != "main") {
				t.Fatalf("brokers %+v", rd.Brokers)
			}
		})
	}
	cps := &pipeline.Checkpoints{Config: parseConfig(t, "", "")}
	for name, want := range map[string]string{"nope": `unknown pipeline "nope"`, "sms-replies": "has no checkpoint.location"} {
		if _, err := cps.Diagnose(ctx, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Diagnose(%s) = %v, want %q", name, err, want)
		}
	}
}
