package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/pipeline"
)

// TestDigestReply: the health digest: a row per pipeline in the order the digest gives, the
// commit's age, the newest lag and its trend, the ticks nobody ran.
func TestDigestReply(t *testing.T) {
	d := pipeline.Digest{At: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Missed: 2, Rows: []pipeline.DigestRow{
		{Pipeline: "orders", Status: "FAILED", CommitAge: -1},
		{Pipeline: "never", Status: "never probed", CommitAge: -1},
		{Pipeline: "replies", Description: "inbound SMS replies", Status: "OK", CommitAge: 4*time.Minute + 10*time.Second, Lag: []int64{0, 10, 40, 80, 160}},
	}}
	r := DigestReply(d)
	want := []string{
		"PIPELINE             PROBE         LAST COMMIT  LAG          LAG TREND",
		"orders               FAILED        -            -            ",
		"never                never probed  -            -            ",
		"replies              OK            4m10s ago    160          ▁▁▂▄█",
		"replies: inbound SMS replies",
		"2 scheduled tick(s) were missed since the last digest: no replica was running.",
	}
	if r.Text != "Pipeline health at 2026-11-30 09:00Z" || strings.Join(r.Sections[0].Lines, "\n") != strings.Join(want, "\n") || !r.Sections[0].Pre {
		t.Fatalf("digest %q\n%s\nwant\n%s", r.Text, strings.Join(r.Sections[0].Lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestSparkline(t *testing.T) {
	cases := []struct {
		in   []int64
		want string
	}{
		{nil, ""},
		{[]int64{5, 5, 5}, "▁▁▁"},
		{[]int64{0, 7}, "▁█"},
		{[]int64{0, 1, 2, 3, 4, 5, 6, 7}, "▁▂▃▄▅▆▇█"},
	}
	for _, c := range cases {
		if got := sparkline(c.in); got != c.want {
			t.Errorf("sparkline(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
