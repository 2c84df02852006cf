package app_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/charts"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// Charts end to end: detection's rounds keep the samples in a real redis-server, the bot draws
// the chart and uploads it to the Slack fake with its alt text (files.getUploadURLExternal,
// the upload, files.completeUploadExternal).

// chartsIn are the messages of a thread (or, with ts "", of the channel) that share a file.
func chartsIn(s *slackfake.Server, ch, ts string) []slackfake.Message {
	var msgs []slackfake.Message
	if ts == "" {
		for _, m := range s.Messages(ch) {
			if m.ThreadTS == "" {
				msgs = append(msgs, m)
			}
		}
	} else {
		msgs = replies(s, ch, ts)
	}
	var out []slackfake.Message
	for _, m := range msgs {
		if len(m.Files) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// checkChart: the message shares one PNG of the promised size, whose alt text names the
// pipeline and says each of wants.
func checkChart(t *testing.T, s *slackfake.Server, m slackfake.Message, pipeline string, wants ...string) slackfake.File {
	t.Helper()
	if len(m.Files) != 1 {
		t.Fatalf("the chart's message shares %d files", len(m.Files))
	}
	i := slices.IndexFunc(s.Files(), func(f slackfake.File) bool { return f.ID == m.Files[0] })
	if i < 0 {
		t.Fatalf("file %s is not among the shared files", m.Files[0])
	}
	f := s.Files()[i]
	img, err := png.Decode(bytes.NewReader(f.Content))
	if err != nil {
		t.Fatalf("%s is no PNG: %v", f.Name, err)
	}
	if b := img.Bounds(); b.Dx() != charts.Width || b.Dy() != charts.Height || !strings.HasSuffix(f.Name, ".png") {
		t.Errorf("%s is %d×%d", f.Name, b.Dx(), b.Dy())
	}
	if !strings.HasPrefix(f.AltText, "Chart of "+pipeline+" from ") || strings.Count(f.AltText, ".") != 1 {
		t.Errorf("alt text of %s: %q", f.Name, f.AltText)
	}
	for _, w := range wants {
		if !strings.Contains(f.AltText, w) {
			t.Errorf("the alt text of %s lacks %q: %q", f.Name, w, f.AltText)
		}
	}
	if !strings.HasPrefix(m.Text, "Progress of "+pipeline) {
		t.Errorf("the chart's message: %q", m.Text)
	}
	return f
}

// compareTS orders Slack timestamps ("1700000000.000100").
func compareTS(a, b string) int {
	pa, _ := strconv.ParseFloat(a, 64)
	pb, _ := strconv.ParseFloat(b, 64)
	switch {
	case pa < pb:
		return -1
	case pa > pb:
		return 1
	}
	return 0
}

// TestE2EChartCommand: `chart sms-replies for 30m` posts the chart in the channel; typed in an
// incident's thread (a mention) it goes into that thread and marks that incident; bad input
// gets usage.
func TestE2EChartCommand(t *testing.T) {
	w := newSparkWorld(t)
	w.produce(10)
	w.commit(1, time.Now().Add(-time.Minute)) // stale, records wait: detection opens INC-1
	w.produce(5)
	in := start(t, setup{extra: w.config("")})
	s := in.slack
	defer func() {
		if t.Failed() {
			t.Log(grepLines(in.logs.String(), "chart", "ERROR", "WARN", "detect"))
			for _, m := range s.Messages("C0PIPE") {
				t.Logf("%s %s %q", m.TS, m.ThreadTS, m.Text)
			}
		}
	}()
	waitFor(t, s, "the detection root and its chart", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 1 && len(chartsIn(s, "C0PIPE", r[0].TS)) == 1
	})
	root := roots(s, "C0PIPE")[0]

	r := askIn(t, s, "U0ALICE", "C0PIPE", "chart sms-replies for 30m")
	if r.Text != "Posted the chart of sms-replies here." {
		t.Fatalf("chart: %q %s", r.Text, r.Blocks)
	}
	waitFor(t, s, "the chart in the channel", func(s *slackfake.Server) bool { return len(chartsIn(s, "C0PIPE", "")) == 1 })
	m := chartsIn(s, "C0PIPE", "")[0]
	f := checkChart(t, s, m, "sms-replies", "records waiting beyond the checkpoint peaked at 10", "INC-1 opened at")
	if f.ThreadTS != "" || !strings.Contains(m.Text, "Asked by u0alice.") || !strings.Contains(m.Text, "over the last ") {
		t.Errorf("the channel's chart: thread %q, text %q", f.ThreadTS, m.Text)
	}

	if _, err := s.SendAppMention(t.Context(), slackfake.Mention{ChannelID: "C0PIPE", UserID: "U0BOB", Text: "<@U0BOT> chart sms-replies", ThreadTS: root.TS}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "a second chart in INC-1's thread", func(s *slackfake.Server) bool { return len(chartsIn(s, "C0PIPE", root.TS)) == 2 })
	checkChart(t, s, chartsIn(s, "C0PIPE", root.TS)[1], "sms-replies", "INC-1 opened at", "the shaded stall began at")

	for _, bad := range []string{"chart", "chart sms-replies for ever", "chart sms-replies 2h"} {
		r := askIn(t, s, "U0ALICE", "C0PIPE", bad)
		if !strings.Contains(string(r.Blocks), "/streamwatch chart PIPELINE [for DURATION]") {
			t.Errorf("%q: %q %s, want usage", bad, r.Text, r.Blocks)
		}
	}
	if n := len(s.CallsTo("files.completeUploadExternal")); n != 3 {
		t.Errorf("%d uploads, want 3 (the incident's, the channel's, the thread's)", n)
	}

	// The postmortem draft embeds the chart: the image goes beside it in the thread, and the
	// Markdown refers to it by its file name, with its alt text.
	askIn(t, s, "U0ALICE", "C0PIPE", "incident postmortem INC-1")
	waitFor(t, s, "the draft and its chart in the thread", func(s *slackfake.Server) bool { return len(chartsIn(s, "C0PIPE", root.TS)) == 4 })
	th := chartsIn(s, "C0PIPE", root.TS)
	img := checkChart(t, s, th[2], "sms-replies", "INC-1 opened at")
	var draft slackfake.File
	for _, f := range s.Files() {
		if f.Name == "INC-1-postmortem.md" {
			draft = f
		}
	}
	if draft.ThreadTS != root.TS || !strings.Contains(string(draft.Content), "## Progress\n\n![Chart of sms-replies from ") ||
		!strings.Contains(string(draft.Content), "]("+img.Name+")") || img.ThreadTS != root.TS {
		t.Errorf("the draft (in %q) does not embed %s (in %q):\n%s", draft.ThreadTS, img.Name, img.ThreadTS, draft.Content)
	}
}

// TestE2EChartWithoutSamples: a pipeline whose cluster never answers has no samples: `chart`
// says so in one line, and its incident's thread gets that line after the diagnosis instead
// of a picture.
func TestE2EChartWithoutSamples(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now: every round fails to reach the cluster
	in := start(t, setup{extra: fmt.Sprintf(`    kafka: {cluster: main, topics: [t], group: g}
kafka:
  sample_interval: 1s
  clusters:
    main: {brokers: [%q], version: "3.6.0", timeout: 1s}
`, dead)})
	s := in.slack
	wait.For(t, 30*time.Second, "a sampling round that failed", func() bool {
		return strings.Contains(in.logs.String(), "kafka-sample")
	})
	r := askIn(t, s, "U0ALICE", "C0PIPE", "chart sms-replies")
	want := "No chart of sms-replies yet: no progress samples in the last 6h (a sampling round every 1s keeps one)."
	if r.Text != want || strings.Contains(string(r.Blocks), "Usage") {
		t.Fatalf("chart without samples: %q %s, want %q", r.Text, r.Blocks, want)
	}
	in.ok("/webhooks/generic", genericStatus("client replied sms", "downstream", "firing"))
	waitFor(t, s, "the alert's root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	root := roots(s, "C0PIPE")[0]
	waitFor(t, s, "the one-line reason after the diagnosis", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "No chart of sms-replies yet")) == 1
	})
	if n := len(s.Files()); n != 0 {
		t.Errorf("%d files shared without samples", n)
	}
}
