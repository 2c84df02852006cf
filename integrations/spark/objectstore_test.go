package spark_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// TestFixturesFromObjectStores: every real Spark checkpoint fixture, uploaded to each object
// store (s3://, gs://, abfss:// through their official clients) and read from there, diagnoses
// exactly as from disk: the same query, latest batch, offsets, state files and findings.
func TestFixturesFromObjectStores(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	for _, be := range storagetest.ObjectStores() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			srv := be.Start(t, "spark-checkpoints")
			n := 0
			for _, e := range entries {
				if !e.IsDir() || e.Name() == "kafka-source-files" { // a source's own files, no checkpoint
					continue
				}
				n++
				t.Run(e.Name(), func(t *testing.T) {
					dir := copyFixture(t, e.Name())
					// Whole seconds: every backend keeps them exactly.
					base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
					i := 0
					_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
						if err == nil && !d.IsDir() {
							i++
							setMtime(t, p, base.Add(time.Duration(i)*time.Second))
						}
						return err
					})
					srv.Upload(t, dir, "fixtures/"+e.Name()) // the files and the objects now have the same times
					if be.StampsTimes {                      // the objects are as old as the upload
						base = time.Now().Truncate(time.Second)
					}
					store, err := storage.Open(srv.Location("fixtures/"+e.Name()), srv.Options())
					if err != nil {
						t.Fatal(err)
					}
					opts := spark.Options{Now: at(base.Add(time.Hour))}
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
					// JSON compares what a report says; time.Time's location pointer may differ.
					lj, _ := json.MarshalIndent(local, "", " ")
					rj, _ := json.MarshalIndent(remote, "", " ")
					if string(lj) != string(rj) {
						t.Errorf("%s report differs from the local one:\n%s\nlocal:\n%s", store.Location(), rj, lj)
					}
					if local.Offsets.Batches == 0 {
						t.Errorf("fixture %s read no batches: %+v", e.Name(), local.Offsets)
					}
				})
			}
			if n < 5 {
				t.Fatalf("%d checkpoint fixtures, want at least 5", n)
			}
		})
	}
}

// normalize replaces the object store's location in a report's findings by the local
// directory, the one place the two reports may rightly differ.
func normalize(r *spark.Report, location, dir string) {
	for i := range r.Findings {
		s := &r.Findings[i].Summary
		s.File, s.Text = strings.ReplaceAll(s.File, location, dir), strings.ReplaceAll(s.Text, location, dir)
	}
}

// TestDiagnoseObjectStoreDenied: on each object store, a checkpoint whose commits streamwatch
// may not list is UNREADABLE, with the service's own refusal as evidence; one with no objects
// is MISSING.
func TestDiagnoseObjectStoreDenied(t *testing.T) {
	t.Parallel()
	for _, be := range storagetest.ObjectStores() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			spec := healthy()
			srv := be.Start(t, "spark-checkpoints")
			srv.Upload(t, writeCheckpoint(t, spec), "pipelines/sms-replies")
			store, err := storage.Open(srv.Location("pipelines/sms-replies"), srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			now := at(spec.CommittedAt(140).Add(20 * time.Second))
			if be.StampsTimes { // the commits are as old as the upload
				now = at(time.Now().Add(20 * time.Second))
			}
			srv.DenyPrefix("pipelines/sms-replies/commits/")
			r, err := spark.Diagnose(t.Context(), store, spark.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			f := unreadableFinding(t, r, "commits/")
			if f.ErrClass != storage.ClassPermission || !hasLine(f, errorLine("list commits: "+be.Denied)) {
				t.Errorf("UNREADABLE commits/ = %+v", f)
			}
			empty, err := storage.Open(srv.Location("pipelines/nothing-here"), srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			r, err = spark.Diagnose(t.Context(), empty, spark.Options{Now: now})
			if err != nil || codes(r) != "MISSING" || !lineMatches(r.Findings[0].Summary, spark.Line{Kind: spark.LineNoCheckpoint, File: be.WantLocation("spark-checkpoints", "pipelines/nothing-here")}) {
				t.Errorf("findings = %+v, %v", r.Findings, err)
			}
		})
	}
}
