package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestCheckpointsAgainstTheBrokers: the checkpoint's newest offsets are compared with the
// brokers' log ends of the pipeline's own cluster and group; without Kafka, or with brokers
// that do not answer, the checkpoint is still read and the pending records are unknown.
func TestCheckpointsAgainstTheBrokers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cp")
	// Batches 0..1 planned and committed: every partition's next offset is 10.
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: time.Now().Add(-3 * time.Minute), LatestBatch: 1, LatestCommit: 1,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 5}}}); err != nil {
		t.Fatal(err)
	}
	withKafka := fmt.Sprintf("    kafka: {cluster: main, topics: [client.replies.sms], group: sms-replies-prod}\n    checkpoint: {location: %s}\n", dir)
	kafkaCluster := "kafka:\n  clusters:\n    main: {brokers: [\"127.0.0.1:9092\"]}\n"
	cases := []struct {
		name        string
		pipeline    string
		more        string
		brokers     *brokers
		wantPending int64
		wantKnown   bool
		wantAsked   string
	}{
		{"log ends 25, offsets 10 on three partitions", withKafka, kafkaCluster,
			&brokers{logEnd: map[int32]int64{0: 25, 1: 25, 2: 25}}, 45, true, "main/sms-replies-prod"},
		{"brokers do not answer", withKafka, kafkaCluster,
			&brokers{err: errors.New("dial tcp 127.0.0.1:9092: connection refused")}, 0, false, "main/sms-replies-prod"},
		{"no Kafka in the pipeline", fmt.Sprintf("    checkpoint: {location: %s}\n", dir), "",
			&brokers{logEnd: map[int32]int64{0: 25}}, 0, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cps := &pipeline.Checkpoints{Config: parseConfig(t, c.pipeline, c.more), Kafka: c.brokers}
			r, err := cps.Diagnose(context.Background(), "sms-replies")
			if err != nil {
				t.Fatal(err)
			}
			if r.Committed == nil || r.Committed.ID != 1 {
				t.Fatalf("committed = %+v, want batch 1", r.Committed)
			}
			if r.PendingKnown != c.wantKnown || r.PendingTotal != c.wantPending {
				t.Fatalf("pending known %v total %d, want %v %d", r.PendingKnown, r.PendingTotal, c.wantKnown, c.wantPending)
			}
			if asked := strings.Join(c.brokers.asked, ","); asked != c.wantAsked {
				t.Fatalf("asked the brokers for %q, want %q", asked, c.wantAsked)
			}
		})
	}
	cps := &pipeline.Checkpoints{Config: parseConfig(t, "", "")}
	for name, want := range map[string]string{"nope": `unknown pipeline "nope"`, "sms-replies": "has no checkpoint.location"} {
		if _, err := cps.Diagnose(context.Background(), name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Diagnose(%s) = %v, want %q", name, err, want)
		}
	}
}
