package remediate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
)

// TestRestorePutsBackExactlyTheQuarantinedFiles: quarantine, then restore: the checkpoint is
// byte for byte what it was, the quarantine is empty, and the record says what was restored.
func TestRestorePutsBackExactlyTheQuarantinedFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, incident())
	store := open(t, dir)
	rootDir := t.TempDir()
	root := open(t, rootDir)
	before := tree(t, dir)
	b := backup(t, store, root, now)
	res, err := remediate.Quarantine(ctx, store, root, b, plan(t, store))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := remediate.ReadRecord(ctx, root, b.Dir)
	if err != nil || len(rec.Files) != len(res.Moved) {
		t.Fatalf("record after quarantine: %+v %v", rec, err)
	}

	rp, err := remediate.PlanRestore(ctx, store, root, b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range rp.Files {
		paths = append(paths, f.Path)
		if f.VerifiedBy != remediate.VerifiedByRecord || !f.Target.Absent {
			t.Errorf("%s: verified by %q, target %+v", f.Path, f.VerifiedBy, f.Target)
		}
	}
	// Data files first, their checksums after.
	if want := []string{".metadata.5e6f.tmp", "offsets/.9.3f2a9c1e.tmp", "offsets/8", "offsets/.8.crc"}; !slices.Equal(paths, want) || len(rp.Problems) > 0 {
		t.Fatalf("restore plan %q (problems %q), want %q", paths, rp.Problems, want)
	}
	out, err := remediate.Restore(ctx, store, root, rp, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Restored, paths) {
		t.Errorf("restored %q", out.Restored)
	}
	sameTree(t, "checkpoint after restore", tree(t, dir), before)
	if q := tree(t, filepath.Join(rootDir, filepath.FromSlash(b.Dir), "quarantine")); len(q) != 0 {
		t.Errorf("quarantine after restore holds %d files", len(q))
	}
	rec, _ = remediate.ReadRecord(ctx, root, b.Dir)
	for _, f := range rec.Files {
		if !f.Restored.Equal(now.Add(time.Hour)) {
			t.Errorf("record of %s: restored %v", f.Path, f.Restored)
		}
	}
	again, _ := remediate.PlanRestore(ctx, store, root, b.Dir)
	if len(again.Files) != 0 {
		t.Errorf("a second restore plans %+v", again)
	}
	infos, err := remediate.ListBackups(ctx, root, "sms-replies")
	if err != nil || len(infos) != 1 || !infos[0].Verified || infos[0].Quarantined != 0 || infos[0].Files != b.Files {
		t.Errorf("backups: %+v %v", infos, err)
	}
}

func TestRestoreRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, incident())
	store := open(t, dir)
	rootDir := t.TempDir()
	root := open(t, rootDir)
	b := backup(t, store, root, now)
	if _, err := remediate.Quarantine(ctx, store, root, b, plan(t, store)); err != nil {
		t.Fatal(err)
	}
	qdir := filepath.Join(rootDir, filepath.FromSlash(b.Dir), "quarantine")

	// The query wrote offsets/8 again; a tampered quarantined temp file.
	os.WriteFile(filepath.Join(dir, "offsets", "8"), []byte("v1\n{}\n"), 0o644)
	os.WriteFile(filepath.Join(qdir, ".metadata.5e6f.tmp"), []byte("not what was moved"), 0o644)
	rp, err := remediate.PlanRestore(ctx, store, root, b.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range rp.Files {
		paths = append(paths, f.Path)
	}
	stays := map[string]remediate.Stay{}
	for _, s := range rp.Stays {
		stays[s.Path] = s
	}
	occupied, mismatch := stays["offsets/8"], stays[".metadata.5e6f.tmp"]
	if !slices.Equal(paths, []string{"offsets/.9.3f2a9c1e.tmp", "offsets/.8.crc"}) || len(stays) != 2 ||
		occupied.Code != remediate.StayOccupied || occupied.Found.Size != 6 ||
		mismatch.Code != remediate.StayMismatch || mismatch.By != remediate.VerifiedByRecord ||
		mismatch.Found.Size != int64(len("not what was moved")) || mismatch.WantSize != 1 || mismatch.WantSHA256 == mismatch.Found.SHA256 {
		t.Fatalf("plan %q, stays %+v", paths, rp.Stays)
	}

	// Between plan and restore, offsets/.8.crc appears in the checkpoint: refused there, what
	// came before it stays restored, nothing is overwritten.
	os.WriteFile(filepath.Join(dir, "offsets", ".8.crc"), []byte("theirs"), 0o644)
	out, err := remediate.Restore(ctx, store, root, rp, now)
	if !errors.Is(err, remediate.ErrChanged) || !slices.Equal(out.Restored, []string{"offsets/.9.3f2a9c1e.tmp"}) {
		t.Fatalf("restore: %v, restored %q", err, out.Restored)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "offsets", ".8.crc")); string(b) != "theirs" {
		t.Fatalf("the restore overwrote offsets/.8.crc: %q", b)
	}
}

// TestRestoreWithoutARecord: files quarantined before quarantine.json existed are verified
// against the backup's manifest.
func TestRestoreWithoutARecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, incident())
	store := open(t, dir)
	rootDir := t.TempDir()
	root := open(t, rootDir)
	b := backup(t, store, root, now)
	if _, err := remediate.Quarantine(ctx, store, root, b, plan(t, store)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(rootDir, filepath.FromSlash(b.Dir), remediate.RecordName))
	rp, err := remediate.PlanRestore(ctx, store, root, b.Dir)
	if err != nil || len(rp.Files) != 4 || len(rp.Stays) != 0 {
		t.Fatalf("plan: %v %+v", err, rp)
	}
	for _, f := range rp.Files {
		if f.VerifiedBy != remediate.VerifiedByManifest {
			t.Errorf("%s verified by %q", f.Path, f.VerifiedBy)
		}
	}
}

func TestDigestAndDiff(t *testing.T) {
	t.Parallel()
	at := now.Add(-time.Minute)
	a := []remediate.FileState{{Path: "offsets/8", Size: 0, ModTime: at, SHA256: "e3b0c44298fc"}, {Path: "offsets/.8.crc", Size: 12, ModTime: at, SHA256: "aa"}}
	b := []remediate.FileState{a[1], a[0]}
	if remediate.Digest(a) != remediate.Digest(b) || len(remediate.Diff(a, b)) != 0 {
		t.Fatal("order changes the digest or the diff")
	}
	c := []remediate.FileState{{Path: "offsets/8", Size: 312, ModTime: now, SHA256: "9f86d081884c"}, {Path: "offsets/9", Size: 5, ModTime: now}}
	if remediate.Digest(a) == remediate.Digest(c) {
		t.Fatal("different files, same digest")
	}
	want := []remediate.FileChange{
		{Path: "offsets/8", Code: remediate.ChangeModified, Was: a[0], Now: c[0],
			Changed: []remediate.FileField{remediate.FieldSize, remediate.FieldModTime, remediate.FieldSHA256}},
		{Path: "offsets/.8.crc", Code: remediate.ChangeUnseen, Was: a[1]},
		{Path: "offsets/9", Code: remediate.ChangeAdded, Now: c[1]},
	}
	if got := remediate.Diff(a, c); !reflect.DeepEqual(got, want) {
		t.Errorf("diff\n%+v\nwant\n%+v", got, want)
	}
}

func TestRecentActivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, incident())
	store := open(t, dir)
	if act, err := remediate.RecentActivity(ctx, store, time.Now().Add(-2*time.Minute)); err != nil || len(act) != 0 {
		t.Fatalf("an old checkpoint: %+v %v", act, err)
	}
	os.WriteFile(filepath.Join(dir, "commits", "9"), []byte("v1\n{}"), 0o644)
	act, err := remediate.RecentActivity(ctx, store, time.Now().Add(-2*time.Minute))
	if err != nil || len(act) != 1 || act[0].Path != "commits/9" {
		t.Fatalf("a new commit: %+v %v", act, err)
	}
}

// TestRestoreRefusesAChangedCopy: a quarantined copy that changed between plan and restore
// stops the restore, and the error says how it changed.
func TestRestoreRefusesAChangedCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, incident())
	store := open(t, dir)
	rootDir := t.TempDir()
	root := open(t, rootDir)
	b := backup(t, store, root, now)
	if _, err := remediate.Quarantine(ctx, store, root, b, plan(t, store)); err != nil {
		t.Fatal(err)
	}
	rp, err := remediate.PlanRestore(ctx, store, root, b.Dir)
	if err != nil || len(rp.Files) == 0 || rp.Files[0].Path != ".metadata.5e6f.tmp" {
		t.Fatalf("plan %+v %v", rp, err)
	}
	src := rp.Files[0].Source
	copyPath := filepath.Join(rootDir, filepath.FromSlash(src.Path))
	if err := os.WriteFile(copyPath, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(copyPath, src.ModTime, src.ModTime); err != nil {
		t.Fatal(err)
	}
	out, err := remediate.Restore(ctx, store, root, rp, now)
	want := "the quarantined copy of .metadata.5e6f.tmp changed since the plan was made: " + src.Path + ": size 1 → 2 bytes, SHA-256 " +
		src.SHA256[:12] + "… → 44136fa355b3…"
	if !errors.Is(err, remediate.ErrChanged) || len(out.Restored) != 0 || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("restore: %v, restored %q; want an error ending %q", err, out.Restored, want)
	}
}
