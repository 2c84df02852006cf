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
	rows := map[string]pipeline.DigestRow{}
	for _, r := range d.Rows {
		rows[r.Pipeline] = r
	}
	if len(d.Rows) != 3 || d.Rows[0].Pipeline != "orders" || d.Rows[0].Status != "FAILED" {
		t.Fatalf("failed pipelines come first: %+v", d.Rows)
	}
	if r := rows["replies"]; r.Status != "OK" || r.CommitAge.Round(time.Minute) != 4*time.Minute || len(r.Lag) != 5 || r.Lag[4] != 160 {
		t.Fatalf("replies row %+v, want OK, the commit 4m old, the lag samples", r)
	}
	if r := rows["never"]; r.Status != "" || r.CommitAge != -1 {
		t.Fatalf("never row %+v", r)
	}
	if _, err := hs.Probe(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "unknown pipeline") {
		t.Fatalf("unknown pipeline: %v", err)
	}
}
