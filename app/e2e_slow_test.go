package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// TestE2ESlowConsumerAndStaleCheckpoint: two more causes from real parts. With the bot's own
// sampler running, the producer outpaces a group whose commits still advance: the verdict is a
// consumer slower than the producer. Then the checkpoint's last commit is two hours old while
// the replies after it have waited almost as long: a stop nothing explains, answered with what
// was checked and ruled out and the one next step, never as healthy.
func TestE2ESlowConsumerAndStaleCheckpoint(t *testing.T) {
	ctx := context.Background()
	kc, err := kafkatest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	if err := kc.CreateTopic(ctx, seedTopic, 3); err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	dir := filepath.Join(base, "cp")
	fresh := sparktest.Spec{Start: time.Now().Add(-3 * time.Minute), LatestBatch: 2, LatestCommit: 2,
		Topics: []sparktest.Topic{{Name: seedTopic, Partitions: 3, RecordsPerBatch: 1}}}
	if err := sparktest.WriteCheckpoint(dir, fresh); err != nil {
		t.Fatal(err)
	}
	prefix := testredis.Prefix()
	in := start(t, setup{prefix: prefix, extra: fmt.Sprintf(`    kafka:
      cluster: main
      topics: [%s]
      group: sms-replies-prod
    checkpoint:
      location: %s
kafka:
  sample_interval: 1s
  clusters:
    main:
      brokers: [%q]
      version: "3.6.0"
      timeout: 3s
`, seedTopic, dir, kc.ListenAddrs()[0])})
	rdb, _ := testredis.Client(t)
	st := state.New(rdb, prefix)
	rounds := func() int {
		r, _ := st.LagRounds(ctx, "main", "sms-replies-prod", seedTopic)
		return len(r)
	}
	var produced, committed int64
	for i := 0; i < 6; i++ {
		produced += 20
		committed += 10
		written := time.Time{}
		if i == 0 {
			written = time.Now().Add(-110 * time.Minute) // the first replies after the query's last commit
		}
		if err := kc.Produce(ctx, seedTopic, []int{20, 20, 20}, written); err != nil {
			t.Fatal(err)
		}
		if err := kc.Commit(ctx, "sms-replies-prod", seedTopic, map[int32]int64{0: committed, 1: committed, 2: committed}); err != nil {
			t.Fatal(err)
		}
		// Wait for the sampler's next round, a condition on Redis.
		want := rounds() + 1
		wait.For(t, 15*time.Second, fmt.Sprintf("the sampler storing round %d", want), func() bool { return rounds() >= want })
	}
	// The producer goes on; diagnose judges the stored rounds plus what it fetches now.
	if err := kc.Produce(ctx, seedTopic, []int{20, 20, 20}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	r := ask(t, in.slack, "diagnose sms-replies")
	if !strings.HasPrefix(r.Text, "sms-replies: probable cause CONSUMER_SLOWER_THAN_PRODUCER") {
		t.Fatalf("slow consumer: %q\n%s", r.Text, r.Blocks)
	}
	r = ask(t, in.slack, "status")
	if !strings.Contains(string(r.Blocks), "sms-replies") {
		t.Fatalf("status: %s", r.Blocks)
	}

	stale := fresh
	stale.Start = time.Now().Add(-2 * time.Hour)
	if err := sparktest.WriteCheckpoint(dir, stale); err != nil {
		t.Fatal(err)
	}
	r = ask(t, in.slack, "diagnose sms-replies")
	// A checkpoint that stopped while records wait is a live symptom; nothing here explains it,
	// and the reply says so rather than guessing.
	body := string(r.Blocks)
	for _, want := range []string{"[PROGRESS_STOPPED]", "records have waited 1h5", "with no checkpoint commit",
		"No probable cause found for: progress stopped.", "Checked and ruled out:",
		"CHECKPOINT_NOT_WRITABLE: the access check: uid ", "CHECKPOINT_CORRUPT: the newest checkpoint files parse (offsets/2, commits/2)",
		"CHECKPOINT_OFFSETS_GONE: every offset of offsets/2 lies between the earliest and the latest offset on cluster main",
		"Not checked:", "CONSUMER_GROUP_MISMATCH: pipelines[].deployed_config is not set",
		"Next step: read the driver's log (streamwatch reads none: set pipelines[].logs.paths)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the stale checkpoint's verdict lacks %q", want)
		}
	}
	// The slow consumer explains the lag, not the stop; the summary says so.
	if !strings.HasSuffix(r.Text, "; no probable cause found for progress stopped") || strings.Contains(body, "is healthy: no live symptom") {
		t.Errorf("stale checkpoint: %q\n%s", r.Text, r.Blocks)
	}
	if t.Failed() {
		t.Logf("%s", r.Blocks)
	}
}
