package remediate_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// incident is the seed incident (an empty newest offsets file) plus leftover temp files.
func incident() sparktest.Spec {
	s := spec()
	s.Files["offsets/8"] = ""
	s.Files["offsets/.9.3f2a9c1e.tmp"] = "v1\n{"
	s.Files[".metadata.5e6f.tmp"] = "{"
	return s
}

func TestQuarantineMovesExactlyThePlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, incident())
	store := open(t, dir)
	rootDir := t.TempDir()
	root := open(t, rootDir)
	before := tree(t, dir)

	b := backup(t, store, root, now)
	p := plan(t, store)
	want := []string{".metadata.5e6f.tmp", "offsets/.8.crc", "offsets/.9.3f2a9c1e.tmp", "offsets/8"}
	if got := planPaths(p); !slices.Equal(got, want) {
		t.Fatalf("plan %q, want %q", got, want)
	}

	res, err := remediate.Quarantine(ctx, store, root, b, p)
	if err != nil {
		t.Fatalf("quarantine: %v", err)
	}
	var moved []string
	for _, f := range res.Moved {
		moved = append(moved, f.Path)
	}
	slices.Sort(moved)
	if !slices.Equal(moved, want) {
		t.Errorf("moved %q, want %q", moved, want)
	}
	qdir := filepath.Join(rootDir, filepath.FromSlash(b.Dir), "quarantine")
	if res.Destination != rootDir+"/"+b.Dir+"/quarantine" {
		t.Errorf("destination %q", res.Destination)
	}

	// The originals are gone, everything else is byte-identical, and the quarantine holds
	// exactly the planned files with their bytes.
	sameTree(t, "checkpoint", tree(t, dir), without(before, want...))
	wantQ := map[string][]byte{}
	for _, name := range want {
		wantQ[name] = before[name]
	}
	sameTree(t, "quarantine", tree(t, qdir), wantQ)

	// The backup still verifies, and the checkpoint now plans nothing and diagnoses clean.
	if _, err := remediate.Verify(ctx, root, b.Dir); err != nil {
		t.Errorf("verify after quarantine: %v", err)
	}
	if again := plan(t, store); !again.Empty {
		t.Errorf("plan after quarantine: %+v", again)
	}
	r, err := spark.Diagnose(ctx, store, spark.Options{Now: func() time.Time { return sparktest.Spec{}.PlannedAt(9) }})
	if err != nil || r.Has(spark.CodeCorruptFile) || r.Has(spark.CodeTempFilesLeft) {
		t.Errorf("diagnosis after quarantine: %v\n%+v", err, r)
	}

	// The same damage again: the old backup's quarantine already holds offsets/8.
	if err := os.WriteFile(filepath.Join(dir, "offsets", "8"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p2 := plan(t, store)
	_, err = remediate.Quarantine(ctx, store, root, b, p2)
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("quarantine into a used destination: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "offsets", "8")); err != nil {
		t.Errorf("refused quarantine moved offsets/8: %v", err)
	}
}

func TestQuarantineRefusesAStalePlan(t *testing.T) {
	t.Parallel()
	valid8 := ""
	for _, f := range sparktest.Layout(spec()) {
		if f.Path == "offsets/8" {
			valid8 = string(f.Data)
		}
	}
	for _, tc := range []struct {
		name   string
		change func(dir string) error
		file   string
	}{
		{"Spark rewrote the empty file", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "offsets", "8"), []byte(valid8), 0o644)
		}, "offsets/8"},
		{"same size, other bytes", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "offsets", ".9.3f2a9c1e.tmp"), []byte("v1\n}"), 0o644)
		}, "offsets/.9.3f2a9c1e.tmp"},
		{"file gone", func(dir string) error {
			return os.Remove(filepath.Join(dir, ".metadata.5e6f.tmp"))
		}, ".metadata.5e6f.tmp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeCheckpoint(t, incident())
			store := open(t, dir)
			rootDir := t.TempDir()
			root := open(t, rootDir)
			b := backup(t, store, root, now)
			p := plan(t, store)
			if err := tc.change(dir); err != nil {
				t.Fatal(err)
			}
			before := tree(t, dir)
			res, err := remediate.Quarantine(context.Background(), store, root, b, p)
			if !errors.Is(err, remediate.ErrStalePlan) || !strings.Contains(err.Error(), tc.file) {
				t.Fatalf("error %v, want a stale plan naming %s", err, tc.file)
			}
			if res != nil {
				t.Errorf("result %+v", res)
			}
			sameTree(t, "checkpoint", tree(t, dir), before)
			if _, err := os.Stat(filepath.Join(rootDir, filepath.FromSlash(b.Dir), "quarantine")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("quarantine dir after a refusal: %v", err)
			}
		})
	}
}

func TestQuarantineRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, incident())
	store := open(t, dir)
	root := open(t, t.TempDir())
	b := backup(t, store, root, now)
	p := plan(t, store)
	before := tree(t, dir)

	unverified := *b
	unverified.Verified = false
	otherSource := *b
	otherSource.Manifest.Source = "s3://elsewhere/cp"
	otherPlan := *p
	otherPlan.Location = "/some/other/checkpoint"
	handMade := func(paths ...string) *remediate.Plan {
		hp := &remediate.Plan{Location: p.Location, At: p.At}
		for _, name := range paths {
			data := before[name]
			hp.Files = append(hp.Files, remediate.PlanFile{Path: name, Size: int64(len(data))})
		}
		return hp
	}
	for _, tc := range []struct {
		name   string
		backup *remediate.BackupResult
		plan   *remediate.Plan
		want   string
	}{
		{"no backup", nil, p, "no backup"},
		{"unverified backup", &unverified, p, "not verified"},
		{"backup of another checkpoint", &otherSource, p, "not of this checkpoint"},
		{"plan of another checkpoint", b, &otherPlan, "not for this checkpoint"},
		{"metadata", b, handMade("metadata"), "never moves"},
		{"state", b, handMade("state/0/1/8.delta"), "never moves"},
		{"sources", b, handMade("sources/0/0"), "never moves"},
		{"committed history", b, handMade("offsets/3"), "not a file a repair may move"},
		{"committed commit", b, handMade("commits/7"), "not a file a repair may move"},
		{"escape", b, handMade("../etc/passwd"), "not a clean relative path"},
		{"listed twice", b, handMade("offsets/8", "offsets/8"), "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := remediate.Quarantine(ctx, store, root, tc.backup, tc.plan)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
			sameTree(t, "checkpoint", tree(t, dir), before)
		})
	}
}

// denyDelete fails deletes of one file as a read-only mount would.
type denyDelete struct {
	storage.Store
	name string
}

func (s denyDelete) Delete(ctx context.Context, name string) error {
	if name == s.name {
		return &storage.Error{Op: "delete", Path: name, Class: storage.ClassPermission, Err: fs.ErrPermission}
	}
	return s.Store.Delete(ctx, name)
}

func TestQuarantineStopsWhenAnOriginalCannotBeRemoved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, incident())
	store := open(t, dir)
	rootDir := t.TempDir()
	root := open(t, rootDir)
	b := backup(t, store, root, now)
	p := plan(t, store)

	res, err := remediate.Quarantine(ctx, denyDelete{store, "offsets/8"}, root, b, p)
	if storage.Class(err) != storage.ClassPermission || !strings.Contains(err.Error(), "offsets/8 stays in the checkpoint") {
		t.Fatalf("error %v (class %s)", err, storage.Class(err))
	}
	if _, err := os.Stat(filepath.Join(dir, "offsets", "8")); err != nil {
		t.Errorf("offsets/8: %v", err)
	}
	if _, err := os.Stat(filepath.Join(rootDir, filepath.FromSlash(b.Dir), "quarantine", "offsets", "8")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the copy of a file that stayed is still in the quarantine: %v", err)
	}
	for _, f := range res.Moved {
		if f.Path == "offsets/8" {
			t.Error("offsets/8 reported as moved")
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path))); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s reported moved but still there", f.Path)
		}
	}
}
