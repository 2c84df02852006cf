package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/wait"
)

const seedTopic = "client.replies.sms"

// seedSpec is the incident's checkpoint, its query started at start: batch 4 planned, 3 the
// newest committed, and offsets/4 empty (the write the read-only directory cut short).
func seedSpec(start time.Time) sparktest.Spec {
	return sparktest.Spec{Start: start, LatestBatch: 4, LatestCommit: 3,
		Topics: []sparktest.Topic{{Name: seedTopic, Partitions: 3, RecordsPerBatch: 2}},
		Files:  map[string]string{"offsets/4": ""}}
}

// seedKafka is the incident's Kafka: replies on the topic, the documented group idle with old
// commits, and the deployed job consuming with another group.
func seedKafka(t *testing.T, otherConsumer bool) *kafkatest.Cluster {
	t.Helper()
	ctx := context.Background()
	kc, err := kafkatest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	if err := kc.CreateTopic(ctx, seedTopic, 3); err != nil {
		t.Fatal(err)
	}
	// The replies arrived after the query's last commit (seedSpec) and have waited since.
	if err := kc.Produce(ctx, seedTopic, []int{40, 40, 40}, time.Now().Add(-30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := kc.Commit(ctx, "sms-replies-prod", seedTopic, map[int32]int64{0: 40, 1: 40, 2: 40}); err != nil {
		t.Fatal(err)
	}
	if otherConsumer {
		if err := kc.Commit(ctx, "sms-replies-prod", seedTopic, map[int32]int64{0: 10, 1: 10, 2: 10}); err != nil {
			t.Fatal(err)
		}
		stop, err := kc.Consume("sms-replies-v2", seedTopic)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		wait.For(t, 20*time.Second, "the other group becoming Stable", func() bool {
			st, _ := kc.GroupState(ctx, "sms-replies-v2")
			return st == "Stable"
		})
	}
	return kc
}

func seedConfig(kc *kafkatest.Cluster, checkpoint, logs string) string {
	return fmt.Sprintf(`    kafka:
      cluster: main
      topics: [%s]
      group: sms-replies-prod
    checkpoint:
      location: %s
    probe:
      schedule: "@every 1h"
    logs:
      paths: [%q]
kafka:
  clusters:
    main:
      brokers: [%q]
      version: "3.6.0"
      timeout: 3s
diagnose:
  timeout: 10s
`, seedTopic, checkpoint, logs, kc.ListenAddrs()[0])
}

// TestE2ESeedIncidentDiagnosis is the incident the product was born from: the checkpoint
// location turned unwritable for the job's user (job_user 185; the driver logs say so too),
// the job consumes with another group than the documented one, and the newest offsets file is
// empty. An alert opens an incident; the automatic diagnosis in its thread names all three.
func TestE2ESeedIncidentDiagnosis(t *testing.T) {
	kc := seedKafka(t, true)
	base := storagetest.SharedTempDir(t)
	dir := filepath.Join(base, "checkpoints", "sms-replies")
	spec := seedSpec(time.Now().Add(-40 * time.Minute))
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(base, "driver.log")
	stamp := time.Now().UTC().Add(-5 * time.Minute).Format("2006-01-02 15:04:05")
	os.WriteFile(logPath, []byte(stamp+",101 ERROR org.apache.spark.sql.execution.streaming.MicroBatchExecution: Query sms-replies terminated with error\n"+
		"java.io.FileNotFoundException: "+dir+"/offsets/.5.3b1d-4c0e.tmp (Permission denied)\n"+
		"\tat java.io.FileOutputStream.open0(Native Method)\n"), 0o644)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	cfg := strings.Replace(seedConfig(kc, dir, logPath), "      location: "+dir+"\n", "      location: "+dir+"\n      job_user: {uid: 185, gids: [185]}\n", 1)
	in := start(t, setup{extra: cfg})
	in.ok("/webhooks/alertmanager", mustRead(t, "testdata/alertmanager-sms.json"))
	s := in.slack
	var note string
	waitFor(t, s, "the automatic diagnosis in the incident's thread", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		if len(r) != 1 {
			return false
		}
		for _, m := range replies(s, "C0PIPE", r[0].TS) {
			if strings.HasPrefix(m.Text, "Automatic diagnosis") {
				note = m.Text
				return true
			}
		}
		return false
	})
	for _, cause := range []string{"CHECKPOINT_NOT_WRITABLE (confirmed)", "CONSUMER_GROUP_MISMATCH", "CHECKPOINT_CORRUPT",
		"uid 185 groups [185] (job_user) may not create files in " + dir, "driver log: Permission denied"} {
		if !strings.Contains(note, cause) {
			t.Errorf("diagnosis lacks %s:\n%s", cause, note)
		}
	}
	if !strings.Contains(note, "sms-replies-v2") {
		t.Errorf("diagnosis does not name the other group:\n%s", note)
	}
	t.Logf("diagnosis:\n%s", note)
	// A second alert does not diagnose again; the button does.
	in.ok("/webhooks/alertmanager", mustRead(t, "testdata/alertmanager-sms.json"))
	r := ask(t, s, "diagnose sms-replies")
	if !strings.Contains(r.Text, "probable cause") {
		t.Fatalf("diagnose reply: %q", r.Text)
	}
	r = ask(t, s, "logs sms-replies")
	if !strings.Contains(r.Text, "Checkpoint trouble in the logs of sms-replies") {
		t.Fatalf("logs reply: %q", r.Text)
	}
}

// TestE2EHealthyPipelineIsHealthy: a pipeline with nothing wrong gets "healthy", not a guess.
func TestE2EHealthyPipelineIsHealthy(t *testing.T) {
	kc := seedKafka(t, false)
	base := t.TempDir()
	dir := filepath.Join(base, "cp")
	spec := sparktest.Spec{Start: time.Now().Add(-3 * time.Minute), LatestBatch: 2, LatestCommit: 2,
		Topics: []sparktest.Topic{{Name: seedTopic, Partitions: 3, RecordsPerBatch: 20}}}
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(base, "driver.log")
	os.WriteFile(logPath, []byte("2026-11-30 10:00:00,000 INFO org.apache.spark.SparkContext: Running Spark version 3.5.1\n"), 0o644)
	in := start(t, setup{extra: seedConfig(kc, dir, logPath)})
	r := ask(t, in.slack, "diagnose sms-replies")
	if r.Text != "sms-replies: healthy" {
		t.Fatalf("healthy pipeline: %q\n%s", r.Text, r.Blocks)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestE2EDiagnoseBrokerDownAndDrift: with the brokers unreachable the verdict says so within
// diagnose.timeout; a deployed job file naming another group is reported as the mismatch.
func TestE2EDiagnoseBrokerDownAndDrift(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "cp")
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: time.Now().Add(-3 * time.Minute), LatestBatch: 1, LatestCommit: 1,
		Topics: []sparktest.Topic{{Name: seedTopic, Partitions: 3, RecordsPerBatch: 5}}}); err != nil {
		t.Fatal(err)
	}
	deployed := filepath.Join(base, "sms-replies.conf")
	os.WriteFile(deployed, []byte("spark.app.name=sms-replies\nspark.kafka.subscribe="+seedTopic+
		"\nspark.kafka.group.id=sms-replies-v2\nspark.kafka.bootstrap.servers=127.0.0.1:1\n"), 0o644)
	// Port 1 (tcpmux) on loopback: nothing listens there, so the brokers refuse connections.
	in := start(t, setup{extra: fmt.Sprintf(`    kafka:
      cluster: main
      topics: [%s]
      group: sms-replies-prod
    checkpoint:
      location: %s
    deployed_config: %s
kafka:
  clusters:
    main:
      brokers: ["127.0.0.1:1"]
      version: "3.6.0"
      timeout: 1s
diagnose:
  timeout: 4s
`, seedTopic, dir, deployed)})
	r := ask(t, in.slack, "diagnose sms-replies")
	// The deployed config names another group, but with the brokers down nothing live shows
	// the documented group idle: the text alone is a risk, not a cause.
	if !strings.Contains(r.Text, "BROKER_UNREACHABLE") || strings.Contains(r.Text, "CONSUMER_GROUP_MISMATCH") {
		t.Fatalf("verdict: %q\n%s", r.Text, r.Blocks)
	}
	if !strings.Contains(string(r.Blocks), "Risks") || !strings.Contains(string(r.Blocks), "sms-replies.conf:3") {
		t.Fatalf("drift evidence lacks the file and line:\n%s", r.Blocks)
	}
}
