package remediate_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// One round trip on S3: back up a checkpoint held in a bucket into the same bucket, find it
// again, plan, and quarantine into it.
func TestS3BackupPlanQuarantine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := storagetest.NewS3Server(t, "spark")
	s := incident()
	s.Checksums = false // S3 has no Hadoop checksums
	// Truncated rather than empty: storage's S3 Write of a zero-byte object over plain HTTP
	// goes out chunked without a Content-Length, which the fake server (like S3) refuses.
	s.Files["offsets/8"] = "v1\n"
	srv.Upload(t, writeCheckpoint(t, s), "checkpoints/sms-replies")
	store, err := storage.Open(srv.Location("checkpoints/sms-replies"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	root, err := storage.Open(srv.Location("backups"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}

	b := backup(t, store, root, now)
	if !b.Verified || b.Location != "s3://spark/backups/sms-replies/20261130T104105Z" || b.Files < 30 {
		t.Fatalf("backup %+v", b)
	}
	latest, err := remediate.LatestBackup(ctx, root, "sms-replies")
	if err != nil || latest == nil || latest.Dir != b.Dir || latest.Manifest.Source != store.Location() {
		t.Fatalf("latest %+v, %v", latest, err)
	}
	if _, err := remediate.Verify(ctx, root, b.Dir); err != nil {
		t.Fatal(err)
	}

	p := plan(t, store)
	want := []string{".metadata.5e6f.tmp", "offsets/.9.3f2a9c1e.tmp", "offsets/8"}
	if got := planPaths(p); !slices.Equal(got, want) {
		t.Fatalf("plan %q, want %q", got, want)
	}
	res, err := remediate.Quarantine(ctx, store, root, b, p)
	if err != nil || len(res.Moved) != len(want) || res.Destination != b.Location+"/quarantine" {
		t.Fatalf("quarantine %+v, %v", res, err)
	}
	for _, name := range want {
		if _, err := store.Stat(ctx, name); storage.Class(err) != storage.ClassNotFound {
			t.Errorf("%s still in the checkpoint: %v", name, err)
		}
		data, err := storage.ReadAll(ctx, root, b.Dir+"/quarantine/"+name, 0)
		if err != nil || !bytes.Equal(data, []byte(s.Files[name])) {
			t.Errorf("quarantined %s: %q, %v", name, data, err)
		}
	}
	if again := plan(t, store); !again.Empty {
		t.Errorf("plan after quarantine: %+v", again)
	}
}

func TestS3BackupPermissionDenied(t *testing.T) {
	t.Parallel()
	srv := storagetest.NewS3Server(t, "spark")
	srv.Upload(t, writeCheckpoint(t, spec()), "checkpoints/sms-replies")
	srv.DenyPrefix("checkpoints/sms-replies/state/")
	store, err := storage.Open(srv.Location("checkpoints/sms-replies"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	root, err := storage.Open(srv.Location("backups"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	_, err = remediate.Backup(context.Background(), store, root, "sms-replies", now)
	if storage.Class(err) != storage.ClassPermission {
		t.Fatalf("error %v has class %s, want permission denied", err, storage.Class(err))
	}
	for _, s := range []string{"back up s3://spark/checkpoints/sms-replies", "state", "access denied"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if b, err := remediate.LatestBackup(context.Background(), root, "sms-replies"); b != nil || err != nil {
		t.Errorf("latest after a failed backup: %+v, %v", b, err)
	}
}
