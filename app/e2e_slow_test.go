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
// consumer slower than the producer. Then the checkpoint stops committing while replies keep
// arriving: the checkpoint is stale while the broker has new data.
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
		// Stamped an hour ago: the records of a producer that has been outpacing the group.
		if err := kc.Produce(ctx, seedTopic, []int{20, 20, 20}, time.Now().Add(-time.Hour)); err != nil {
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
	// A checkpoint that stopped while records have waited an hour is a live symptom; nothing
	// here explains it, and the reply says so rather than guessing: what it checked, and the
	// next step.
	body := string(r.Blocks)
	for _, want := range []string{"[PROGRESS_STOPPED]", "records have waited 1h", "No probable cause found for progress stopped",
		"CHECKPOINT_NOT_WRITABLE ruled out", "OFFSETS_GONE ruled out: every offset the checkpoint resumes from is still on the brokers", "Next step: "} {
		if !strings.Contains(body, want) {
			t.Fatalf("stale checkpoint lacks %q: %q\n%s", want, r.Text, r.Blocks)
		}
	}
	if !strings.Contains(r.Text, "no cause found for progress stopped") || strings.Contains(r.Text, "healthy") {
		t.Errorf("summary %q", r.Text)
	}
}
