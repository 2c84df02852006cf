package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestCheckpointsAgainstTheBrokers: the checkpoint's newest offsets are compared with what
// the brokers of the pipeline's own cluster hold (a real Kafka wire protocol: kfake through
// sarama): the records waiting beyond the checkpoint that still exist, the offsets retention
// deleted unread, partitions the checkpoint does not know, and since when records wait;
// without Kafka, or with brokers that do not answer, the checkpoint is still read and the
// pending records are unknown.
func TestCheckpointsAgainstTheBrokers(t *testing.T) {
	ctx := context.Background()
	const topic = "client.replies.sms"
	kc, cs, kafkaCluster := startKafka(t, topic, 3)
	dir := filepath.Join(t.TempDir(), "cp")
	// Batches 0..1 planned and committed: every partition's next offset is 10.
	committed := time.Now().Add(-3 * time.Minute)
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: committed.Add(-time.Minute), Interval: 30 * time.Second, LatestBatch: 1, LatestCommit: 1,
		Topics: []sparktest.Topic{{Name: topic, Partitions: 3, RecordsPerBatch: 5}}}); err != nil {
		t.Fatal(err)
	}
	// 25 records on each partition: the first 10 long read; the 15 waiting arrived a minute ago.
	if err := kc.Produce(ctx, topic, []int{10, 10, 10}, committed.Add(-2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	arrived := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	if err := kc.Produce(ctx, topic, []int{15, 15, 15}, arrived); err != nil {
		t.Fatal(err)
	}
	withKafka := fmt.Sprintf("    kafka: {cluster: main, topics: [%s], group: sms-replies-prod}\n    checkpoint: {location: %s, stale_after: 2m}\n", topic, dir)
	read := func(t *testing.T, pipelineYAML, more string, b pipeline.Brokers) pipeline.CheckpointReading {
		t.Helper()
		cps := &pipeline.Checkpoints{Config: parseConfig(t, pipelineYAML, more), Kafka: b}
		r, err := cps.Read(ctx, "sms-replies")
		if err != nil {
			t.Fatal(err)
		}
		if r.Report.Committed == nil || r.Report.Committed.ID != 1 {
			t.Fatalf("committed = %+v, want batch 1", r.Report.Committed)
		}
		return r
	}

	t.Run("log ends 25, offsets 10 on three partitions", func(t *testing.T) {
		r := read(t, withKafka, kafkaCluster, cs).Report
		if !r.PendingKnown || r.PendingTotal != 45 {
			t.Fatalf("pending known %v total %d, want 45", r.PendingKnown, r.PendingTotal)
		}
		// The newest commit is 3 minutes old and stale_after 2m, but the records have waited
		// only a minute: not stale.
		if r.Has(spark.CodeStale) || r.WaitingFor < time.Minute || r.WaitingFor > 2*time.Minute {
			t.Fatalf("stale %v, waiting for %s: want about 1m, not stale (findings %+v)", r.Has(spark.CodeStale), r.WaitingFor, r.Findings)
		}
	})
	t.Run("retention deleted records the query never read; a partition added", func(t *testing.T) {
		if err := kc.DeleteBefore(ctx, topic, map[int32]int64{0: 12}); err != nil {
			t.Fatal(err)
		}
		if err := kc.AddPartitions(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
		if err := kc.Produce(ctx, topic, []int{0, 0, 0, 4}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		got := read(t, withKafka, kafkaCluster, cs)
		r := got.Report
		if r.LostRecords != 2 || r.LostPartitions != 1 || r.PendingTotal != 43 {
			t.Errorf("lost %d on %d partitions, pending %d: want 2 on 1, 43 still on the brokers", r.LostRecords, r.LostPartitions, r.PendingTotal)
		}
		if r.UnknownPartitions != 1 || r.UnknownRecords != 4 {
			t.Errorf("unknown partitions %d with %d records, want 1 with 4", r.UnknownPartitions, r.UnknownRecords)
		}
		if !r.Has(spark.CodeOffsetsGone) || !r.Has(spark.CodeUnknownPartition) {
			t.Errorf("findings %+v", r.Findings)
		}
		if got.Brokers == nil || len(got.Brokers.Topic(topic)) != 4 {
			t.Errorf("brokers %+v, want the topic's 4 partitions", got.Brokers)
		}
	})
	t.Run("brokers do not answer", func(t *testing.T) {
		down, err := kafka.NewClusters([]kafka.ClusterOptions{{Name: "main", Brokers: []string{closedAddr(t)}, Version: "3.6.0", Timeout: time.Second}}, kafka.ClustersOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer down.Close()
		got := read(t, withKafka, kafkaCluster, down)
		if got.Report.PendingKnown || got.BrokersErr == nil {
			t.Fatalf("pending known %v, brokers error %v: want unknown and an error", got.Report.PendingKnown, got.BrokersErr)
		}
	})
	t.Run("no Kafka in the pipeline", func(t *testing.T) {
		got := read(t, fmt.Sprintf("    checkpoint: {location: %s}\n", dir), "", cs)
		if got.Report.PendingKnown || got.Brokers != nil {
			t.Fatalf("pending known %v, brokers %v: the brokers were asked", got.Report.PendingKnown, got.Brokers)
		}
	})
	cps := &pipeline.Checkpoints{Config: parseConfig(t, "", "")}
	for name, want := range map[string]string{"nope": `unknown pipeline "nope"`, "sms-replies": "has no checkpoint.location"} {
		if _, err := cps.Diagnose(context.Background(), name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Diagnose(%s) = %v, want %q", name, err, want)
		}
	}
}
