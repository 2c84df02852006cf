package spark_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

func unreadableFinding(t *testing.T, r *spark.Report, file string) *spark.Finding {
	t.Helper()
	for i, f := range r.Findings {
		if f.Code == spark.CodeUnreadable && f.File == file {
			return &r.Findings[i]
		}
	}
	t.Fatalf("no UNREADABLE finding for %q; findings: %+v", file, r.Findings)
	return nil
}

// TestDiagnoseUnreadable provokes a real EACCES. Tests run as root in CI, and root reads
// everything, so the diagnosis runs in a re-executed test binary as uid 65534.
func TestDiagnoseUnreadable(t *testing.T) {
	t.Parallel()
	spec := healthy()
	now := at(spec.CommittedAt(140).Add(time.Second))
	check := func(t *testing.T, base string) {
		r := diagnose(t, filepath.Join(base, "ckpt"), spark.Options{Now: now})
		for file, want := range map[string]string{
			"commits/":    "list commits: permission denied",
			"offsets/140": "read offsets/140: permission denied",
			"state/0/2/":  "list state/0/2: permission denied",
		} {
			f := unreadableFinding(t, r, file)
			if f.ErrClass != storage.ClassPermission || f.Severity != spark.SeverityCritical || !hasLine(f, errorLine(want)) {
				t.Errorf("UNREADABLE %s = %+v, want class permission and %q", file, f, want)
			}
		}
		// What could be read is still reported; what depends on the unreadable files is not guessed.
		if r.QueryID != sparktest.DefaultQueryID || r.Planned == nil || r.Planned.Offsets != nil || r.Committed != nil || r.Commits.Readable {
			t.Errorf("report: query %q planned %+v committed %+v commits %+v", r.QueryID, r.Planned, r.Committed, r.Commits)
		}
		if r.Has(spark.CodeUncommittedBatch) || r.Has(spark.CodeStale) || r.Has(spark.CodeOK) {
			t.Errorf("findings = %s", codes(r))
		}
		if !r.Commits.Present || r.Commits.Readable {
			t.Errorf("commits/ should be present and unreadable: %+v", r.Commits)
		}

		// The whole location unreadable.
		loc := filepath.Join(base, "locked")
		r = diagnose(t, loc, spark.Options{Now: now})
		f := unreadableFinding(t, r, "")
		if f.ErrClass != storage.ClassPermission || !lineMatches(f.Summary, spark.Line{Kind: spark.LineCannotError, Text: "list " + loc + ": permission denied"}) || len(r.Findings) != 1 {
			t.Errorf("findings = %+v", r.Findings)
		}
	}
	if storagetest.InUnprivilegedChild() {
		check(t, os.Getenv("SPARK_TEST_DIR"))
		return
	}

	base := storagetest.SharedTempDir(t)
	for _, name := range []string{"ckpt", "locked"} {
		if err := sparktest.WriteCheckpoint(filepath.Join(base, name), spec); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"ckpt/commits", "ckpt/offsets/140", "ckpt/state/0/2", "locked"} {
		if err := os.Chmod(filepath.Join(base, p), 0o000); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		storagetest.RunUnprivileged(t, "SPARK_TEST_DIR="+base)
		return
	}
	check(t, base)
}

func TestDiagnoseS3(t *testing.T) {
	t.Parallel()
	spec := healthy()
	dir := writeCheckpoint(t, spec)
	srv := storagetest.NewS3Server(t, "spark-checkpoints")
	srv.Upload(t, dir, "pipelines/sms-replies")
	opts := srv.Options()
	opts.S3.ListPageSize = 4 // offsets/ and commits/ hold 22 keys each: several pages
	store, err := storage.Open(srv.Location("pipelines/sms-replies"), opts)
	if err != nil {
		t.Fatal(err)
	}
	now := at(spec.CommittedAt(140).Add(20 * time.Second))
	diag := func() *spark.Report {
		t.Helper()
		r, err := spark.Diagnose(t.Context(), store, spark.Options{Now: now, LogEndOffsets: logEnd(140, 7)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	r := diag()
	local := diagnose(t, dir, spark.Options{Now: now, LogEndOffsets: logEnd(140, 7)})
	if codes(r) != "OK" || r.QueryID != local.QueryID || r.Planned.ID != 140 || r.Committed.ID != 140 ||
		!r.Committed.ModTime.Equal(local.Committed.ModTime) || r.PendingTotal != local.PendingTotal || r.Offsets.Batches != 11 ||
		len(r.State[0].Stores) != 4 || r.State[0].MinVersion != 141 {
		t.Fatalf("s3 report differs from the local one:\n%+v\nlocal:\n%+v", r, local)
	}

	srv.DenyPrefix("pipelines/sms-replies/commits/")
	srv.DenyPrefix("pipelines/sms-replies/offsets/140")
	r = diag()
	for file, want := range map[string]string{
		"commits/":    "list commits: access denied (S3 AccessDenied, HTTP 403",
		"offsets/140": "read offsets/140: access denied (S3 AccessDenied, HTTP 403",
	} {
		f := unreadableFinding(t, r, file)
		if f.ErrClass != storage.ClassPermission || !hasLine(f, errorLine(want)) {
			t.Errorf("UNREADABLE %s = %+v, want %q", file, f, want)
		}
	}

	// A prefix with nothing under it is no checkpoint.
	empty, err := storage.Open(srv.Location("pipelines/nothing-here"), opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err = spark.Diagnose(t.Context(), empty, spark.Options{Now: now})
	if err != nil || codes(r) != "MISSING" || !lineMatches(r.Findings[0].Summary, spark.Line{Kind: spark.LineNoCheckpoint, File: "s3://spark-checkpoints/pipelines/nothing-here"}) {
		t.Errorf("findings = %+v, %v", r.Findings, err)
	}
}
