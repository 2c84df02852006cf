package app_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
)

func ask(t *testing.T, s *slackfake.Server, text string) slackfake.ResponsePost {
	t.Helper()
	return askAs(t, s, "U1", text)
}

func askAs(t *testing.T, s *slackfake.Server, user, text string) slackfake.ResponsePost {
	t.Helper()
	return askIn(t, s, user, "C0PIPE", text)
}

// askIn types text as user in channel and returns the reply.
func askIn(t *testing.T, s *slackfake.Server, user, channel, text string) slackfake.ResponsePost {
	t.Helper()
	env, err := s.SendSlashCommand(context.Background(), slackfake.SlashCommand{ChannelID: channel, UserID: user, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	var got slackfake.ResponsePost
	waitFor(t, s, "the reply to "+text, func(s *slackfake.Server) bool {
		for _, p := range s.ResponsePosts() {
			if p.EnvelopeID == env.ID {
				got = p
				return true
			}
		}
		return false
	})
	return got
}

// TestE2ELagAndCheckpoint drives `lag`, `groups` and `checkpoint` against an in-process Kafka
// and a generated checkpoint: exact lags, and the records the checkpoint still has to read.
func TestE2ELagAndCheckpoint(t *testing.T) {
	ctx := context.Background()
	kc, err := kafkatest.Start(3)
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	const topic = "client.replies.sms"
	if err := kc.CreateTopic(ctx, topic, 3); err != nil {
		t.Fatal(err)
	}
	if err := kc.Produce(ctx, topic, []int{10, 20, 30}, time.Now().Add(-3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := kc.Commit(ctx, "sms-replies-prod", topic, map[int32]int64{0: 5, 1: 10, 2: 15}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cp")
	// The checkpoint's latest committed batch read up to 2 × 3 records per partition.
	spec := sparktest.Spec{Start: time.Now().Add(-4 * time.Minute), LatestBatch: 2, LatestCommit: 2,
		Topics: []sparktest.Topic{{Name: topic, Partitions: 3, RecordsPerBatch: 3}}}
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	in := start(t, setup{extra: fmt.Sprintf(`    kafka:
      cluster: main
      topics: [%s]
      group: sms-replies-prod
    checkpoint:
      location: %s
kafka:
  clusters:
    main:
      brokers: [%q]
      version: "3.6.0"
      timeout: 3s
`, topic, dir, kc.ListenAddrs()[0])})
	r := ask(t, in.slack, "lag sms-replies")
	if !strings.Contains(r.Text, "lag 30 records on 3 partitions") {
		t.Fatalf("lag reply: %q", r.Text)
	}
	r = ask(t, in.slack, "lag sms-replies-prod "+topic)
	if !strings.Contains(r.Text, "lag 30 records") {
		t.Fatalf("ad-hoc lag reply: %q", r.Text)
	}
	r = ask(t, in.slack, "groups "+topic)
	if !strings.Contains(r.Text, "group(s) on "+topic) || !strings.Contains(string(r.Blocks), "sms-replies-prod") {
		t.Fatalf("groups reply: %q %s", r.Text, r.Blocks)
	}
	r = ask(t, in.slack, "checkpoint sms-replies")
	// Log ends 10/20/30; the checkpoint's batch 2 read up to offset 9 on each partition.
	if !strings.Contains(r.Text, "Checkpoint of sms-replies: OK") || !strings.Contains(string(r.Blocks), "pending total: 33 records") {
		t.Fatalf("checkpoint reply: %q\n%s", r.Text, r.Blocks)
	}
	r = ask(t, in.slack, "lag nosuchpipeline")
	if !strings.Contains(r.Text, "nosuchpipeline") {
		t.Fatalf("unknown pipeline: %q", r.Text)
	}
}
