package spark_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// TestFixturesFromAzure: every real Spark checkpoint fixture, uploaded to Azurite and read
// through abfss:// with the official client (azblob), diagnoses exactly as from disk: the same
// query, latest batch, offsets, state files and findings.
func TestFixturesFromAzure(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	srv := storagetest.NewAzureServer(t, "spark-checkpoints")
	n := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "kafka-source-files" { // a source's own files, no checkpoint
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			dir := copyFixture(t, e.Name())
			// Azure stamps each blob's time; Upload gives the local files the same ones.
			srv.Upload(t, dir, "fixtures/"+e.Name())
			store, err := storage.Open(srv.Location("fixtures/"+e.Name()), srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			opts := spark.Options{Now: at(time.Now().Add(time.Hour).Truncate(time.Second))}
			local := diagnose(t, dir, opts)
			remote, err := spark.Diagnose(t.Context(), store, opts)
			if err != nil {
				t.Fatal(err)
			}
			if remote.Location != store.Location() {
				t.Errorf("location = %q", remote.Location)
			}
			remote.Location = local.Location
			normalize(remote, store.Location(), dir)
			lj, _ := json.MarshalIndent(local, "", " ")
			rj, _ := json.MarshalIndent(remote, "", " ")
			if string(lj) != string(rj) {
				t.Errorf("abfss:// report differs from the local one:\n%s\nlocal:\n%s", rj, lj)
			}
			if local.Offsets.Batches == 0 {
				t.Errorf("fixture %s read no batches: %+v", e.Name(), local.Offsets)
			}
		})
	}
	if n < 5 {
		t.Fatalf("%d checkpoint fixtures, want at least 5", n)
	}
}

// TestDiagnoseAzureDenied: an abfss:// checkpoint whose commits streamwatch may not list is
// UNREADABLE, with Azure's own refusal as evidence; one with no blobs is MISSING.
func TestDiagnoseAzureDenied(t *testing.T) {
	t.Parallel()
	spec := healthy()
	srv := storagetest.NewAzureServer(t, "spark-checkpoints")
	srv.Upload(t, writeCheckpoint(t, spec), "pipelines/sms-replies")
	store, err := storage.Open(srv.Location("pipelines/sms-replies"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	now := at(time.Now().Add(20 * time.Second))
	srv.DenyPrefix("pipelines/sms-replies/commits/")
	r, err := spark.Diagnose(t.Context(), store, spark.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	f := unreadableFinding(t, r, "commits/")
	if f.ErrClass != storage.ClassPermission || !evidenceContains(f, "list commits: access denied (Azure AuthorizationPermissionMismatch, HTTP 403)") {
		t.Errorf("UNREADABLE commits/ = %+v", f)
	}
	empty, err := storage.Open(srv.Location("pipelines/nothing-here"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	r, err = spark.Diagnose(t.Context(), empty, spark.Options{Now: now})
	if err != nil || codes(r) != "MISSING" || !strings.HasPrefix(r.Findings[0].Summary, "no checkpoint at abfss://spark-checkpoints@devstoreaccount1.dfs.core.windows.net/pipelines/nothing-here") {
		t.Errorf("findings = %+v, %v", r.Findings, err)
	}
}
