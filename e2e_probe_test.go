package main

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
	if err := os.Rename(hidden, dir); err != nil {
		t.Fatal(err)
	}
	probeNow("OK")
	waitFor(t, s, "the recovery in the thread and the root updated", func(s *slackfake.Server) bool {
		r := replies(s, "C0PIPE", root.TS)
		m, _ := s.Message("C0PIPE", root.TS)
		return len(r) == 1 && strings.Contains(r[0].Text, "Recovered: checkpoint probe of sms-replies is OK again") && m.Edits >= 1
	})
	probeNow("OK")
	if n := len(s.Messages("C0PIPE")); n != 2 {
		t.Fatalf("%d messages in the channel, want exactly 2 (failure root, recovery reply): %+v", n, s.Messages("C0PIPE"))
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

// TestProbeCommandLine: `streamwatch probe --config FILE PIPELINE` exits 0 on OK and 1 on
// FAILED, printing every step.
func TestProbeCommandLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cp")
	spec := sparktest.Spec{Start: time.Now().Add(-5 * time.Minute), LatestBatch: 2, LatestCommit: 2,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 2, RecordsPerBatch: 5}}}
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("slack: {default_channel: C1}\npipelines:\n  - name: p\n    checkpoint: {location: "+dir+"}\n"), 0o600)
	out, _, err := runCapture(t, nil, "probe", "p", "--config", cfg)
	if err != nil || !strings.Contains(out, "OK") || !strings.Contains(out, "write") {
		t.Fatalf("healthy probe: %v\n%s", err, out)
	}
	os.RemoveAll(dir)
	out, _, err = runCapture(t, nil, "probe", "--config", cfg, "p")
	if err == nil || exitCode(err) != 1 || !strings.Contains(out, "NOT_FOUND") {
		t.Fatalf("missing checkpoint: %v (exit %d)\n%s", err, exitCode(err), out)
	}
}
