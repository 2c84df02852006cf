package main

import (
	"context"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/charts"
	"github.com/streamwatch/streamwatch/internal/logbuf"
)

// TestDemoScript plays `streamwatch demo --script` through run(), as CI does: it exits 0, and
// the transcript shows the incident, a thread reply, both causes and the recovery.
func TestDemoScript(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb logbuf.Buffer
	began := time.Now()
	dir := t.TempDir()
	if err := run(ctx, []string{"streamwatch", "demo", "--script", "--out", dir}, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("demo --script: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	transcript := out.String()
	t.Logf("played in %v", time.Since(began).Round(time.Millisecond))
	for _, want := range []struct{ what, text string }{
		{"the incident", "INC-1: client replied sms"},
		{"a thread reply", "   └ "},
		{"the re-send counted on the root", "2 occurrences"},
		{"the alert's links on the root", "[Runbook ↗]"},
		{"the automatic diagnosis", "Automatic diagnosis — sms-replies"},
		{"the read-only access check", "may not create files in"},
		{"diagnose healthy after the fix", "sms-replies: healthy"},
		{"the old permission error as history", "History (older than the newest progress; not a cause)"},
		{"the unwritable checkpoint", "CHECKPOINT_NOT_WRITABLE"},
		{"the wrong consumer group", "sms-replies-v2"},
		{"the recovery", "sms-replies is progressing again"},
		{"a button", "[Acknowledge]"},
		{"a progress line", "▶ 3/7"},
		{"the chart posted", "📈 INC-1-sms-replies-progress-"},
		{"its alt text", "alt text: Chart of sms-replies from "},
		{"the peak in the alt text", "records waiting beyond the checkpoint peaked at "},
		{"where the chart went", "written to " + dir},
	} {
		if !strings.Contains(transcript, want.text) {
			t.Errorf("the transcript does not show %s (%q):\n%s", want.what, want.text, transcript)
		}
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "INC-1-sms-replies-progress-*.png"))
	if len(pngs) == 0 {
		t.Fatalf("no chart written to %s", dir)
	}
	for _, p := range pngs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != charts.Width || cfg.Height != charts.Height {
			t.Errorf("%s: %v, %d×%d", p, err, cfg.Width, cfg.Height)
		}
	}
}

// TestDemoPromptUntilEOF: without --script the demo stays up and answers what is typed on
// stdin (a slash command, a mention in the incident's thread, a click) until stdin ends.
func TestDemoPromptUntilEOF(t *testing.T) {
	defer func(r io.Reader) { demoStdin = r }(demoStdin)
	demoStdin = strings.NewReader("/streamwatch incident list\n@streamwatch incident show\nclick Acknowledge\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb logbuf.Buffer
	if err := run(ctx, []string{"streamwatch", "demo", "--out", t.TempDir()}, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	transcript := out.String()
	prompt := transcript[strings.Index(transcript, "streamwatch keeps running"):]
	for _, want := range []string{"curl -sS -X POST http://127.0.0.1:", "Authorization: Bearer demo-",
		"alice types /streamwatch incident list", "(only alice) 1 open incident",
		"alice: @streamwatch incident show", "alice clicks [Acknowledge]", "acknowledged by"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt's transcript lacks %q:\n%s", want, prompt)
		}
	}
}
