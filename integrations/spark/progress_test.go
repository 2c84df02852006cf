package spark_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
)

// TestReadProgress: the newest committed batch, its time and offsets, in three storage calls;
// two when the batch has not changed; a planned batch without a commit is not progress.
func TestReadProgress(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	spec := sparktest.Spec{Start: start, FirstBatch: 0, LatestBatch: 41, LatestCommit: 40, Checksums: true,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 5}, {Name: "other", Partitions: 1, RecordsPerBatch: 2}}}
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	store := newCountingStore(openLocal(t, dir))
	ctx := context.Background()
	p, err := spark.ReadProgress(ctx, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Batch != 40 || !p.CommittedAt.Equal(spec.CommittedAt(40)) || p.Ops != 3 {
		t.Fatalf("progress = batch %d at %v in %d calls, want batch 40 at %v in 3", p.Batch, p.CommittedAt, p.Ops, spec.CommittedAt(40))
	}
	if got := p.Offsets["client.replies.sms"]; len(got) != 3 || got[2] != spec.Topics[0].OffsetAfter(40) {
		t.Fatalf("offsets = %v, want every partition at %d", p.Offsets, spec.Topics[0].OffsetAfter(40))
	}
	if got := p.Offsets["other"][0]; got != spec.Topics[1].OffsetAfter(40) {
		t.Fatalf("offsets of the second topic = %d", got)
	}
	if store.reads.Load() != 1 {
		t.Errorf("files read: %d (%v), want only offsets/40", store.reads.Load(), store.names)
	}

	again, err := spark.ReadProgress(ctx, store, p)
	if err != nil || again.Ops != 2 || again.Offsets["other"][0] != p.Offsets["other"][0] {
		t.Fatalf("unchanged batch: %+v %v, want the same offsets in two calls", again, err)
	}

	// The query commits batch 41 (Spark's checkpoint file manager: temp file, rename).
	if err := sparktest.AppendBatch(dir, 42, map[string]map[int32]int64{"client.replies.sms": {0: 300, 1: 301, 2: 302}}, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	moved, err := spark.ReadProgress(ctx, store, again)
	if err != nil || moved.Batch != 42 || moved.Offsets["client.replies.sms"][1] != 301 || moved.Ops != 3 {
		t.Fatalf("after a new commit: %+v %v", moved, err)
	}
}

func TestReadProgressWithoutCommits(t *testing.T) {
	dir := t.TempDir()
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{LatestBatch: 0, LatestCommit: -1, NoCommitsDir: true}); err != nil {
		t.Fatal(err)
	}
	p, err := spark.ReadProgress(context.Background(), openLocal(t, dir), nil)
	if err != nil || p.Batch != -1 || p.Offsets != nil {
		t.Fatalf("no commits: %+v %v", p, err)
	}
	// A commit whose offsets file is gone is an error, not progress.
	if err := os.MkdirAll(filepath.Join(dir, "commits"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "commits", "3"), []byte("v1\n{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := spark.ReadProgress(context.Background(), openLocal(t, dir), nil); err == nil {
		t.Fatal("a commit without its offsets file: no error")
	}
}

// TestReadBatches: when the newest committed batch was planned (a stat of offsets/<N>, only
// when the batch is new) and the batch in flight (a stat of offsets/<N+1>): none between
// batches, and the one Spark planned and has not committed.
func TestReadBatches(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	spec := sparktest.Spec{Start: start, Interval: time.Minute, CommitDelay: 1500 * time.Millisecond, LatestBatch: 40, LatestCommit: 40,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 5}}}
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	store := openLocal(t, dir)
	ctx := context.Background()
	p, err := spark.ReadProgress(ctx, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := spark.ReadBatches(ctx, store, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Batch != 40 || !b.PlannedAt.Equal(spec.PlannedAt(40)) || b.Took != 1500*time.Millisecond || b.Running != -1 || b.Ops != 2 {
		t.Fatalf("between batches: %+v, want batch 40 planned at %v, took 1.5s, none running, 2 calls", b, spec.PlannedAt(40))
	}
	again, err := spark.ReadBatches(ctx, store, p, b)
	if err != nil || again.Took != b.Took || again.Ops != 1 {
		t.Fatalf("the same batch: %+v %v, want its duration kept in one call", again, err)
	}
	// Spark plans batch 41: offsets/41 written, commits/41 not yet.
	spec.LatestBatch = 41
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	running, err := spark.ReadBatches(ctx, store, p, again)
	if err != nil || running.Running != 41 || !running.RunningSince.Equal(spec.PlannedAt(41)) {
		t.Fatalf("a batch in flight: %+v %v, want 41 since %v", running, err, spec.PlannedAt(41))
	}
}
