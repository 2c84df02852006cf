package pipeline_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

type lags map[string][]int64

func (l lags) RecentLag(_ context.Context, p string) ([]int64, error) { return l[p], nil }

func TestDigest(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testredis.Client(t)
	st := state.New(rdb, prefix)
	base := t.TempDir()
	fresh := filepath.Join(base, "fresh")
	commit := time.Now().Add(-4 * time.Minute)
	if err := sparktest.WriteCheckpoint(fresh, sparktest.Spec{Start: commit.Add(-time.Minute), Interval: time.Minute, CommitDelay: time.Minute,
		LatestBatch: 0, LatestCommit: 0, Topics: []sparktest.Topic{{Name: "t", Partitions: 1, RecordsPerBatch: 1}}}); err != nil {
		t.Fatal(err)
	}
	hs := &pipeline.Probes{Store: st, Lag: lags{"replies": {0, 10, 40, 80, 160}}, Pipelines: []pipeline.ProbeTarget{
		{Name: "replies", Channel: "C1", Probe: probe.Options{Location: fresh, StaleAfter: 10 * time.Minute, SlowAfter: time.Minute}},
		{Name: "orders", Channel: "C1", Probe: probe.Options{Location: filepath.Join(base, "missing")}},
		{Name: "never", Channel: "C1", Probe: probe.Options{Location: fresh}},
	}}
	if r, _ := hs.Probe(ctx, "replies"); r.Status != probe.StatusOK {
		t.Fatalf("replies: %+v", r)
	}
	if r, _ := hs.Probe(ctx, "orders"); r.Status != probe.StatusFailed {
		t.Fatalf("orders: %+v", r)
	}
	d, err := hs.Digest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d.Missed = 2
	lines := d.Lines()
	text := strings.Join(lines, "\n")
	if !strings.HasPrefix(lines[1], "orders") || !strings.Contains(lines[1], "FAILED") {
		t.Fatalf("failed pipelines come first:\n%s", text)
	}
	var replies string
	for _, l := range lines {
		if strings.HasPrefix(l, "replies") {
			replies = l
		}
	}
	for _, want := range []string{"OK", "4m ago", "160", "▁▁▂▄█"} {
		if !strings.Contains(replies, want) {
			t.Fatalf("replies row %q lacks %q", replies, want)
		}
	}
	if !strings.Contains(text, "never probed") || !strings.Contains(text, "2 scheduled tick(s) were missed") {
		t.Fatalf("digest:\n%s", text)
	}
	if _, err := hs.Probe(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "unknown pipeline") {
		t.Fatalf("unknown pipeline: %v", err)
	}
}

func TestSparklineAndAge(t *testing.T) {
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
		if got := pipeline.Sparkline(c.in); got != c.want {
			t.Errorf("Sparkline(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	for d, want := range map[time.Duration]string{45 * time.Second: "45s", 7 * time.Minute: "7m", 190 * time.Minute: "3h10m", 52 * time.Hour: "2d4h"} {
		if got := pipeline.Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}
