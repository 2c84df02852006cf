package remediate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

func TestBackupCopiesAndVerifies(t *testing.T) {
	t.Parallel()
	dir := writeCheckpoint(t, spec())
	for name, data := range map[string]string{
		"_streamwatch_probe/probe-1": "probe",
		"offsets/.9.0b1c.tmp":        "v1\n{",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, dir)
	rootDir := t.TempDir()
	root := open(t, "file://"+rootDir)

	b := backup(t, open(t, dir), root, now)

	if b.Dir != "sms-replies/20261130T104105Z" || b.Location != "file://"+rootDir+"/sms-replies/20261130T104105Z" {
		t.Errorf("dir %q location %q", b.Dir, b.Location)
	}
	if !b.Verified {
		t.Error("not verified")
	}
	want := without(before, "_streamwatch_probe")
	var wantBytes int64
	for _, data := range want {
		wantBytes += int64(len(data))
	}
	if b.Files != len(want) || b.Bytes != wantBytes || b.Manifest.FileCount != len(want) || b.Manifest.TotalBytes != wantBytes {
		t.Errorf("files %d bytes %d manifest %d/%d, want %d files %d bytes", b.Files, b.Bytes, b.Manifest.FileCount, b.Manifest.TotalBytes, len(want), wantBytes)
	}
	for _, must := range []string{"metadata", "offsets/8", "offsets/.8.crc", "commits/7", "sources/0/0", "state/0/2/8.delta", "state/0/_metadata/metadata"} {
		if _, ok := want[must]; !ok {
			t.Fatalf("test checkpoint lacks %s", must)
		}
	}

	// The manifest on disk lists every file with its size and SHA-256.
	backupDir := filepath.Join(rootDir, "sms-replies", "20261130T104105Z")
	data, err := os.ReadFile(filepath.Join(backupDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m remediate.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.Source != dir || !m.Created.Equal(now) || m.Pipeline != "sms-replies" || len(m.Files) != len(want) {
		t.Errorf("manifest source %q created %v pipeline %q files %d", m.Source, m.Created, m.Pipeline, len(m.Files))
	}
	for _, f := range m.Files {
		sum := sha256.Sum256(want[f.Path])
		if f.Size != int64(len(want[f.Path])) || f.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("manifest entry %+v does not describe the source file", f)
		}
	}

	// The copy is byte-identical, beside the manifest and the verified marker; the source is untouched.
	sameTree(t, "backup", without(tree(t, backupDir), "manifest.json", "verified.json"), want)
	if _, err := os.Stat(filepath.Join(backupDir, "verified.json")); err != nil {
		t.Error(err)
	}
	sameTree(t, "source", tree(t, dir), before)

	latest, err := remediate.LatestBackup(context.Background(), root, "sms-replies")
	if err != nil || latest == nil {
		t.Fatalf("latest backup: %v, %v", latest, err)
	}
	if latest.Dir != b.Dir || !latest.Verified || latest.Files != b.Files || latest.Manifest.Source != dir {
		t.Errorf("latest %+v", latest)
	}
	if _, err := remediate.Verify(context.Background(), root, b.Dir); err != nil {
		t.Errorf("verify: %v", err)
	}
}

func TestBackupNotVerifiedWhenACopyDiffers(t *testing.T) {
	t.Parallel()
	dir := writeCheckpoint(t, spec())
	rootDir := t.TempDir()
	root := open(t, rootDir)
	earlier := backup(t, open(t, dir), root, now.Add(-time.Hour))

	b, err := remediate.Backup(context.Background(), open(t, dir), tamperStore{root, "/offsets/3"}, "sms-replies", now)
	var ve *remediate.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v, want a *VerifyError", err)
	}
	if len(ve.Mismatches) != 1 || ve.Mismatches[0].Path != "offsets/3" || !strings.Contains(err.Error(), "offsets/3") {
		t.Errorf("mismatches %+v; error %v", ve.Mismatches, err)
	}
	if b == nil || b.Verified {
		t.Fatalf("result %+v, want one with Verified false", b)
	}
	if _, err := os.Stat(filepath.Join(rootDir, filepath.FromSlash(b.Dir), "verified.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("verified.json of a failed backup: %v", err)
	}
	latest, err := remediate.LatestBackup(context.Background(), root, "sms-replies")
	if err != nil || latest == nil || latest.Dir != earlier.Dir {
		t.Errorf("latest %+v, %v; want the earlier verified backup %s", latest, err, earlier.Dir)
	}
}

func TestVerifyNamesChangedAndMissingFiles(t *testing.T) {
	t.Parallel()
	dir := writeCheckpoint(t, spec())
	rootDir := t.TempDir()
	root := open(t, rootDir)
	b := backup(t, open(t, dir), root, now)
	copyDir := filepath.Join(rootDir, filepath.FromSlash(b.Dir))

	p := filepath.Join(copyDir, "commits", "5")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1 // same size, one bit
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(copyDir, "state", "0", "1", "8.delta")); err != nil {
		t.Fatal(err)
	}
	v, err := remediate.Verify(context.Background(), root, b.Dir)
	var ve *remediate.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v, want a *VerifyError", err)
	}
	want := []remediate.Mismatch{
		{Path: "commits/5", Problem: "SHA-256 differs from the manifest"},
		{Path: "state/0/1/8.delta", Problem: "missing"},
	}
	if len(v.Mismatches) != len(want) || v.Mismatches[0] != want[0] || v.Mismatches[1] != want[1] {
		t.Errorf("mismatches %+v, want %+v", v.Mismatches, want)
	}
	if !strings.Contains(err.Error(), "commits/5") || !strings.Contains(err.Error(), "1 more") {
		t.Errorf("error %q", err)
	}
}

func TestLatestBackup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root := open(t, t.TempDir())
	if b, err := remediate.LatestBackup(ctx, root, "sms-replies"); b != nil || err != nil {
		t.Fatalf("no backups: %+v, %v", b, err)
	}
	src := open(t, writeCheckpoint(t, spec()))
	backup(t, src, root, now.Add(-2*time.Hour))
	first := backup(t, src, root, now)
	second := backup(t, src, root, now) // same second
	if first.Dir != "sms-replies/20261130T104105Z" || second.Dir != "sms-replies/20261130T104105Z-2" {
		t.Fatalf("dirs %s, %s", first.Dir, second.Dir)
	}
	other := backup(t, src, root, now.Add(time.Hour))
	if err := os.WriteFile(filepath.Join(root.Location(), filepath.FromSlash(other.Dir), "manifest.json"), []byte(`{"files":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory without verified.json (a backup that failed or is running) does not count.
	if err := os.MkdirAll(filepath.Join(root.Location(), "sms-replies", "20270101T000000Z"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := remediate.LatestBackup(ctx, root, "sms-replies")
	if err != nil || b == nil || b.Dir != second.Dir {
		t.Fatalf("latest %+v, %v; want %s (the newest whose manifest is the verified one)", b, err, second.Dir)
	}
	if _, err := remediate.LatestBackup(ctx, root, "../etc"); err == nil {
		t.Error("a pipeline name with a slash was accepted")
	}
}

func TestBackupRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := writeCheckpoint(t, spec())
	src := open(t, dir)
	if _, err := remediate.Backup(ctx, src, open(t, filepath.Join(dir, "backups")), "sms-replies", now); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("backup inside the checkpoint: %v", err)
	}
	if _, err := remediate.Backup(ctx, src, open(t, t.TempDir()), "", now); err == nil {
		t.Error("empty pipeline name accepted")
	}
	_, err := remediate.Backup(ctx, open(t, filepath.Join(dir, "nope")), open(t, t.TempDir()), "sms-replies", now)
	if storage.Class(err) != storage.ClassNotFound || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("missing checkpoint: %v (class %s)", err, storage.Class(err))
	}
	if err := os.Mkdir(filepath.Join(dir, "quarantine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "quarantine", "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := remediate.Backup(ctx, src, open(t, t.TempDir()), "sms-replies", now); err == nil || !strings.Contains(err.Error(), "reserves") {
		t.Errorf("checkpoint holding quarantine/: %v", err)
	}
}

// vanishStore behaves as if one file was purged between the listing and the copy.
type vanishStore struct {
	storage.Store
	name string
}

func (s vanishStore) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	if name == s.name {
		return nil, &storage.Error{Op: "read", Path: name, Class: storage.ClassNotFound, Err: fs.ErrNotExist}
	}
	return s.Store.Read(ctx, name)
}

func TestBackupSkipsFilesPurgedDuringTheCopy(t *testing.T) {
	t.Parallel()
	src := open(t, writeCheckpoint(t, spec()))
	b := backup(t, vanishStore{src, "offsets/0"}, open(t, t.TempDir()), now)
	if !b.Verified || len(b.Vanished) != 1 || b.Vanished[0] != "offsets/0" {
		t.Fatalf("verified %v vanished %q", b.Verified, b.Vanished)
	}
	for _, f := range b.Manifest.Files {
		if f.Path == "offsets/0" {
			t.Error("the vanished file is in the manifest")
		}
	}
}
