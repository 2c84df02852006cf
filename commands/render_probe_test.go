package commands_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
)

// TestProbeLines: a probe laid out step by step, with the ownership of the folder, the access
// judgment and the verdict.
func TestProbeLines(t *testing.T) {
	spec := sparktest.Spec{FirstBatch: 0, LatestBatch: 5, LatestCommit: 5,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 10}}}
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, spec); err != nil {
		t.Fatal(err)
	}
	now := spec.CommittedAt(5).Add(90 * time.Second)
	r := probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, Write: true, StaleAfter: 10 * time.Minute,
		Now: func() time.Time { return now }})
	lines := commands.ProbeLines(r)
	for i, want := range []string{
		"probe of sms-replies at " + ckpt,
		"✓ stat ",
		"✓ list ",
		"✓ read metadata ",
		"✓ read offsets ",
		"✓ read commits ",
		"✓ write ",
		"✓ read back ",
		"✓ delete ",
		"dir " + ckpt + " owner ",
		"✓ access (judged without writing): uid ",
		"OK: the checkpoint at " + ckpt + " is readable and writable; the newest commit is 1m30s old (took 0s)",
	} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: want a line starting %q in:\n%s", i, want, strings.Join(lines, "\n"))
		}
	}
	// A failed step and the steps it leaves undone.
	os.RemoveAll(ckpt)
	r = probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, Write: true})
	text := strings.Join(commands.ProbeLines(r), "\n")
	for _, want := range []string{"✗ stat ", "- list ", "FAILED NOT_FOUND: "} {
		if !strings.Contains(text, want) {
			t.Errorf("failed probe lacks %q:\n%s", want, text)
		}
	}
}
