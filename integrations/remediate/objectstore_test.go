package remediate_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// TestObjectStoreBackupQuarantineRestore: on every object store (s3:// against gofakes3, gs://
// against fake-gcs-server, abfss:// against Azurite, each through its official client), a
// backup is verified by its manifest's digests, the repair plan is the local one, quarantine
// moves exactly those files (Write, Rename, Delete) and restore puts them back byte for byte.
func TestObjectStoreBackupQuarantineRestore(t *testing.T) {
	t.Parallel()
	for _, be := range storagetest.ObjectStores() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := be.Start(t, "spark")
			s := incident()
			s.Checksums = false // object stores hold no Hadoop checksums
			dir := writeCheckpoint(t, s)
			srv.Upload(t, dir, "checkpoints/sms-replies") // the files and the objects now have the same times
			when := now
			if be.StampsTimes { // the objects are as old as the upload: plan an hour after it
				when = time.Now().Add(time.Hour)
			}
			store, err := storage.Open(srv.Location("checkpoints/sms-replies"), srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			root, err := storage.Open(srv.Location("backups"), srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			before := map[string][]byte{}
			for name := range s.Files {
				data, err := storage.ReadAll(ctx, store, name, 0)
				if err != nil {
					t.Fatal(err)
				}
				before[name] = data
			}

			b := backup(t, store, root, now)
			if !b.Verified || b.Location != be.WantLocation("spark", "backups/sms-replies/20261130T104105Z") || b.Files < 30 {
				t.Fatalf("backup %+v", b)
			}
			if _, err := remediate.Verify(ctx, root, b.Dir); err != nil {
				t.Fatal(err)
			}
			latest, err := remediate.LatestBackup(ctx, root, "sms-replies")
			if err != nil || latest == nil || latest.Dir != b.Dir || latest.Manifest.Source != store.Location() {
				t.Fatalf("latest %+v, %v", latest, err)
			}

			p, err := remediate.PlanRepair(ctx, store, when)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{".metadata.5e6f.tmp", "offsets/.9.3f2a9c1e.tmp", "offsets/8"}
			if got := planPaths(p); !slices.Equal(got, want) {
				t.Fatalf("plan %q, want %q", got, want)
			}
			local, err := storage.Open(dir, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if lp, err := remediate.PlanRepair(ctx, local, when); err != nil || !slices.Equal(planPaths(lp), want) {
				t.Fatalf("local plan %q, %v; want the %s one", planPaths(lp), err, be.Name)
			}
			res, err := remediate.Quarantine(ctx, store, root, b, p)
			if err != nil || len(res.Moved) != len(want) || res.Destination != b.Location+"/quarantine" {
				t.Fatalf("quarantine %+v, %v", res, err)
			}
			for _, name := range want {
				if _, err := store.Stat(ctx, name); storage.Class(err) != storage.ClassNotFound {
					t.Errorf("%s still in the checkpoint: %v", name, err)
				}
			}

			rp, err := remediate.PlanRestore(ctx, store, root, b.Dir)
			if err != nil || len(rp.Files) != len(want) || len(rp.Problems) > 0 {
				t.Fatalf("restore plan %+v, %v", rp, err)
			}
			out, err := remediate.Restore(ctx, store, root, rp, now.Add(time.Hour))
			if err != nil || len(out.Restored) != len(want) {
				t.Fatalf("restore %+v, %v", out, err)
			}
			for name, data := range before {
				got, err := storage.ReadAll(ctx, store, name, 0)
				if err != nil || !bytes.Equal(got, data) {
					t.Errorf("%s after restore: %q, %v; want %q", name, got, err, data)
				}
			}
			if again, _ := remediate.PlanRestore(ctx, store, root, b.Dir); len(again.Files) != 0 {
				t.Errorf("a second restore plans %+v", again)
			}
		})
	}
}
