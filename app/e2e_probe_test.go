package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
)

// TestE2EProbeTransitions: OK → FAILED → OK posts exactly two messages (the failure, which is
// the incident's root, and the recovery in its thread) and updates the root; a repeated OK
// posts nothing.
func TestE2EProbeTransitions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checkpoints", "sms-replies")
	spec := sparktest.Spec{Start: time.Now().Add(-5 * time.Minute), LatestBatch: 3, LatestCommit: 3,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 10}}}
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	in := start(t, setup{extra: `    checkpoint:
      location: file://` + dir + `
    probe:
      schedule: "@every 1h"
`})
	s := in.slack
	ctx := context.Background()
	probeNow := func(want string) {
		t.Helper()
		env, err := s.SendSlashCommand(ctx, slackfake.SlashCommand{ChannelID: "C0PIPE", UserID: "U1", Text: "probe sms-replies"})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, s, "the probe reply "+want, func(s *slackfake.Server) bool {
			for _, p := range s.ResponsePosts() {
				if p.EnvelopeID == env.ID {
					if !strings.Contains(p.Text, "sms-replies "+want) {
						t.Errorf("probe reply %q, want %s", p.Text, want)
					}
					return true
				}
			}
			return false
		})
	}
	probeNow("OK")
	probeNow("OK")
	if n := len(s.Messages("C0PIPE")); n != 0 {
		t.Fatalf("healthy probes posted %d messages", n)
	}
	hidden := dir + ".moved"
	if err := os.Rename(dir, hidden); err != nil {
		t.Fatal(err)
	}
	probeNow("FAILED")
	waitFor(t, s, "the failure root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	root := roots(s, "C0PIPE")[0]
	if !strings.Contains(root.Text, "Checkpoint probe failed for sms-replies") {
		t.Fatalf("failure message %q", root.Text)
	}
	waitFor(t, s, "the automatic diagnosis of the failure", func(s *slackfake.Server) bool {
		r := replies(s, "C0PIPE", root.TS)
		return len(r) == 1 && strings.HasPrefix(r[0].Text, "Automatic diagnosis — sms-replies")
	})
	if err := os.Rename(hidden, dir); err != nil {
		t.Fatal(err)
	}
	probeNow("OK")
	waitFor(t, s, "the diagnosis and the recovery in the thread, and the root updated", func(s *slackfake.Server) bool {
		r := replies(s, "C0PIPE", root.TS)
		m, _ := s.Message("C0PIPE", root.TS)
		return len(r) == 2 && strings.HasPrefix(r[0].Text, "Automatic diagnosis — sms-replies") &&
			strings.Contains(r[1].Text, "Recovered: checkpoint probe of sms-replies is OK again") && m.Edits >= 1
	})
	probeNow("OK")
	if n := len(s.Messages("C0PIPE")); n != 3 {
		t.Fatalf("%d messages in the channel, want exactly 3 (failure root, diagnosis, recovery reply): %+v", n, s.Messages("C0PIPE"))
	}
	env, _ := s.SendSlashCommand(ctx, slackfake.SlashCommand{ChannelID: "C0PIPE", UserID: "U1", Text: "probe history sms-replies"})
	waitFor(t, s, "the history", func(s *slackfake.Server) bool {
		for _, p := range s.ResponsePosts() {
			if p.EnvelopeID == env.ID {
				return strings.Contains(p.Text, "Last 5 probes of sms-replies") && strings.Contains(string(p.Blocks), "NOT_FOUND")
			}
		}
		return false
	})
}

// TestE2EProbeSpeaksOnce: a probe failing 10 times with the same error posts one root (and
// the automatic diagnosis in its thread) and no other reply: the root is edited to say since
// when and how many probes failed. A changed error posts one reply; the recovery one more.
func TestE2EProbeSpeaksOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checkpoints", "sms-replies")
	spec := sparktest.Spec{Start: time.Now().Add(-5 * time.Minute), LatestBatch: 3, LatestCommit: 3,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 10}}}
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	in := start(t, setup{extra: "    checkpoint:\n      location: file://" + dir + "\n    probe:\n      schedule: \"@every 1h\"\n"})
	s := in.slack
	probeNow := func(want string) {
		t.Helper()
		r := ask(t, s, "probe sms-replies")
		if !strings.Contains(r.Text, "sms-replies "+want) {
			t.Fatalf("probe reply %q, want %s", r.Text, want)
		}
	}
	hidden := dir + ".moved"
	if err := os.Rename(dir, hidden); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		probeNow("FAILED")
	}
	waitFor(t, s, "one root saying 10 probes failed, and the diagnosis in its thread", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		if len(r) != 1 {
			return false
		}
		m, _ := s.Message("C0PIPE", r[0].TS)
		th := replies(s, "C0PIPE", r[0].TS)
		return strings.Contains(string(m.Blocks), "10 failed probes") && len(th) == 1 && strings.HasPrefix(th[0].Text, "Automatic diagnosis — sms-replies")
	})
	root := roots(s, "C0PIPE")[0]
	if m, _ := s.Message("C0PIPE", root.TS); !strings.Contains(string(m.Blocks), "First failure ") {
		t.Errorf("the root does not say since when: %s", m.Blocks)
	}
	// A changed error: the location exists again but holds no checkpoint.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	probeNow("FAILED")
	probeNow("FAILED")
	waitFor(t, s, "one reply about the changed failure", func(s *slackfake.Server) bool {
		th := replies(s, "C0PIPE", root.TS)
		return len(th) == 2 && strings.Contains(th[1].Text, "now fails differently") && strings.Contains(th[1].Text, "holds no metadata")
	})
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(hidden, dir); err != nil {
		t.Fatal(err)
	}
	probeNow("OK")
	probeNow("OK")
	waitFor(t, s, "one reply on recovery", func(s *slackfake.Server) bool {
		th := replies(s, "C0PIPE", root.TS)
		return len(th) == 3 && strings.Contains(th[2].Text, "Recovered")
	})
	for _, m := range replies(s, "C0PIPE", root.TS) {
		if strings.Contains(m.Text, "more occurrence") {
			t.Errorf("a repeat was posted in the thread: %q", m.Text)
		}
	}
	if n := len(roots(s, "C0PIPE")); n != 1 {
		t.Errorf("%d roots, want 1", n)
	}

	// It fails again within the same incident: the thread says since when it fails again, and
	// the root no longer claims it has been failing since its first failure.
	if err := os.Rename(dir, hidden); err != nil {
		t.Fatal(err)
	}
	probeNow("FAILED")
	waitFor(t, s, "one reply on the new failure, and the root shown failing again", func(s *slackfake.Server) bool {
		th := replies(s, "C0PIPE", root.TS)
		m, _ := s.Message("C0PIPE", root.TS)
		return len(th) == 4 && strings.Contains(th[3].Text, "Failing again since") && strings.Contains(string(m.Blocks), "13 failed probes in this incident")
	})
	if m, _ := s.Message("C0PIPE", root.TS); strings.Contains(string(m.Blocks), "Failing since") {
		t.Errorf("the root counts the recovered time as failing: %s", m.Blocks)
	}
}
