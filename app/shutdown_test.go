package app

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/logbuf"
)

// TestShutdownDeadlineLeavesAHungPart: past the shutdown deadline Run's wait returns although a
// part never stops, and the log names that part (and not the parts that stopped).
func TestShutdownDeadlineLeavesAHungPart(t *testing.T) {
	var logs logbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) })
	returned := make(chan bool, 1)
	go func() {
		returned <- waitParts(log, time.Now().Add(100*time.Millisecond), []part{
			{"the scheduler", func() {}},
			{"the automatic diagnoses", func() { <-hung }},
		})
	}()
	select {
	case ok := <-returned:
		if ok {
			t.Fatal("waitParts says every part stopped")
		}
	case <-time.After(time.Minute):
		t.Fatal("waitParts did not return past its deadline")
	}
	out := logs.String()
	if !strings.Contains(out, `"shutdown deadline passed: stopping without these parts","running":["the automatic diagnoses"]`) {
		t.Fatalf("the log does not name the hung part alone:\n%s", out)
	}
}

// TestShutdownWaitsForEveryPart: parts that stop in time are all waited for.
func TestShutdownWaitsForEveryPart(t *testing.T) {
	stopped := make(chan struct{})
	go close(stopped)
	var after bool
	ok := waitParts(slog.New(slog.DiscardHandler), time.Now().Add(time.Minute), []part{
		{"the Slack side and the deliverer", func() { <-stopped }},
		{"the scheduler", func() { <-stopped; after = true }},
	})
	if !ok || !after {
		t.Fatalf("waitParts = %v before every part stopped (%v)", ok, after)
	}
}
