package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// TestCheckpointLines: a checkpoint report laid out for people: the facts, the brokers' pending
// records, the state, the findings with their evidence.
func TestCheckpointLines(t *testing.T) {
	topic := sparktest.Topic{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 100}
	spec := sparktest.Spec{FirstBatch: 130, LatestBatch: 141, LatestCommit: 140, Topics: []sparktest.Topic{topic},
		State: &sparktest.State{Partitions: 4, Metadata: true, OperatorName: "dedupe"}, Checksums: true}
	dir := t.TempDir()
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int32]int64{}
	for p := range topic.Partitions {
		ends[int32(p)] = topic.OffsetAfter(141) + 3
	}
	now := spec.PlannedAt(141).Add(time.Hour)
	// Retention took partition 2 up to 14150: 50 records past the commit were never read.
	starts := spark.KafkaOffsets{topic.Name: {0: 0, 1: 0, 2: topic.OffsetAfter(140) + 50}}
	r, err := spark.Diagnose(context.Background(), st, spark.Options{Now: func() time.Time { return now },
		LogEndOffsets: spark.KafkaOffsets{topic.Name: ends}, LogStartOffsets: starts})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(checkpointLines(r), "\n") + "\n"
	for _, want := range []string{
		"Checkpoint " + dir + "\n",
		"query id " + sparktest.DefaultQueryID,
		"Planned:   batch 141 (offsets/141, planned 2025-01-01 00:11:00 UTC, 1h0m ago)",
		"Committed: batch 140 (commits/140, written 2025-01-01 00:10:30 UTC, 1h0m ago)",
		"In flight: batch 141 for 1h0m",
		"Logs:      offsets/ 12 batches 130..141 +12 .crc, 0 temp, commits/ 11 batches 130..140 +11 .crc, 0 temp",
		"Kafka, pending counted from offsets/140:",
		"  client.replies.sms[0]: committed 14100, planned 14200, log end 14203, pending 103",
		"  client.replies.sms[2]: committed 14100, planned 14200, log start 14150, log end 14203, pending 53",
		"  pending total: 259 records",
		"  deleted by retention before the query read them: 50 records on 1 partition",
		"State:     operator 0 (dedupe): 4/4 partitions, newest versions 141..141 (want 141)",
		"Findings:\n  CRITICAL UNCOMMITTED_BATCH [offsets/141]: batch 141 was planned 1h0m ago and never committed",
		"  CRITICAL STALE [commits/140]: 259 records have waited 1h0m with no commit (stale after 10m0s)",
		"    - 259 records are waiting on the brokers: the query is stalled, not idle",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if testing.Verbose() {
		t.Log("\n" + text)
	}
}
