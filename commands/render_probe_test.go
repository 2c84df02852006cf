package commands_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestProbeLines: a probe laid out step by step, with the ownership of the folder, the access
// judgment and the verdict.
func TestProbeLines(t *testing.T) {
	spec := sparktest.Spec{FirstBatch: 0, LatestBatch: 5, LatestCommit: 5,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 10}}}
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, spec); err != nil {
		t.Fatal(err)
	}
	now := spec.CommittedAt(5).Add(90 * time.Second)
	r := probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, Write: true, StaleAfter: 10 * time.Minute,
		Now: func() time.Time { return now }})
	lines := commands.ProbeLines(r)
	for i, want := range []string{
		"probe of sms-replies at " + ckpt,
		"✓ stat ",
		"✓ list ",
		"✓ read metadata ",
		"✓ read offsets ",
		"✓ read commits ",
		"✓ write ",
		"✓ read back ",
		"✓ delete ",
		"dir " + ckpt + " owner ",
		"✓ access (judged without writing): uid ",
		"OK: the checkpoint at " + ckpt + " is readable and writable; the newest commit is 1m30s old (took 0s)",
	} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d: want a line starting %q in:\n%s", i, want, strings.Join(lines, "\n"))
		}
	}
	// A failed step and the steps it leaves undone.
	os.RemoveAll(ckpt)
	r = probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, Write: true})
	text := strings.Join(commands.ProbeLines(r), "\n")
	for _, want := range []string{"✗ stat ", "- list ", "FAILED NOT_FOUND: "} {
		if !strings.Contains(text, want) {
			t.Errorf("failed probe lacks %q:\n%s", want, text)
		}
	}
}

// TestProbeLinesGCS: on gs:// the access line says whose access the bucket's
// testIamPermissions judged (streamwatch's identity, not the job's), or why it was not judged.
func TestProbeLinesGCS(t *testing.T) {
	spec := sparktest.Spec{FirstBatch: 0, LatestBatch: 2, LatestCommit: 2,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 1, RecordsPerBatch: 10}}}
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, spec); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		iam   func(*storagetest.GCSServer)
		lines []string
	}{
		{"granted", func(s *storagetest.GCSServer) { s.Grant(access.GCSWrite...) }, []string{
			"✓ access of streamwatch's identity (judged without writing): may create and delete objects in gs://spark (testIamPermissions)",
			"  testIamPermissions answers for the identity streamwatch calls GCS with, not for the job's; job_user was not judged",
		}},
		{"lacks create", func(s *storagetest.GCSServer) { s.Grant("storage.objects.delete") }, []string{
			"✗ access of streamwatch's identity (judged without writing): lacks storage.objects.create in gs://spark (testIamPermissions), so it may not create objects there",
			"  testIamPermissions answers for the identity streamwatch calls GCS with, not for the job's; job_user was not judged",
			"FAILED PERMISSION_DENIED: streamwatch's identity lacks storage.objects.create in gs://spark",
		}},
		{"no IAM", func(*storagetest.GCSServer) {}, []string{
			"access of streamwatch's identity: not judged: gs://spark's testIamPermissions did not answer (Not Found (GCS HTTP 404)): the write probe and the driver logs tell",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := storagetest.NewGCSServer(t, "spark")
			srv.Upload(t, ckpt, "cp")
			c.iam(srv)
			r := probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: srv.Location("cp"), Storage: srv.Options(),
				JobUser: &access.User{UID: 185, GIDs: []int{185}, Whose: "job_user"}})
			text := strings.Join(commands.ProbeLines(r), "\n")
			for _, want := range c.lines {
				if !strings.Contains(text, want) {
					t.Errorf("lacks %q:\n%s", want, text)
				}
			}
		})
	}
}

// TestProbeMessage: every message a probe stores or posts, worded as the incident's title, its
// thread and resolve, and the channel's notices show it.
func TestProbeMessage(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 40, 5, 0, time.UTC)
	const failure = "NOT_FOUND: no checkpoint at /cp"
	for _, c := range []struct {
		msg  pipeline.ProbeMessage
		want string
	}{
		{pipeline.ProbeMessage{Kind: pipeline.ProbeTitle, Pipeline: "sms-replies", Reason: "no checkpoint at /cp"},
			"Checkpoint probe failed for sms-replies: no checkpoint at /cp"},
		{pipeline.ProbeMessage{Kind: pipeline.ProbeFailingAgain, Pipeline: "sms-replies", At: at, Failure: failure},
			"Failing again since 10:40:05Z: NOT_FOUND: no checkpoint at /cp"},
		{pipeline.ProbeMessage{Kind: pipeline.ProbeFailsDifferently, Pipeline: "sms-replies", At: at, Failure: "CORRUPT: holds no metadata", Before: failure},
			"The probe now fails differently (10:40:05Z): CORRUPT: holds no metadata\nbefore: NOT_FOUND: no checkpoint at /cp"},
		{pipeline.ProbeMessage{Kind: pipeline.ProbeFailed, Pipeline: "sms-replies", Class: probe.ClassNotFound, Reason: "no checkpoint at /cp"},
			"Checkpoint probe of sms-replies FAILED (NOT_FOUND): no checkpoint at /cp"},
		{pipeline.ProbeMessage{Kind: pipeline.ProbeOKAgain, Pipeline: "sms-replies", Status: probe.StatusOK, At: at},
			"checkpoint probe of sms-replies is OK again (10:40:05Z)"},
		{pipeline.ProbeMessage{Kind: pipeline.ProbeRecovered, Pipeline: "sms-replies", Status: probe.StatusOK},
			"Checkpoint probe of sms-replies recovered: OK"},
	} {
		if got := commands.ProbeMessage(c.msg); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.msg.Kind, got, c.want)
		}
	}
}

// TestProbeFinding: every code of a probe's findings, worded in full.
func TestProbeFinding(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 5, 30, 0, time.UTC)
	obj := "/cp/_streamwatch_probe/probe-1-00000000"
	cases := []struct {
		f    probe.Finding
		want string
	}{
		{probe.Finding{Code: probe.CodeDirExists}, "directory exists"},
		{probe.Finding{Code: probe.CodeListed, N: 4, Logs: []probe.LogDir{{Dir: "offsets", Present: true, Files: 6, First: 0, Last: 5}, {Dir: "commits", Present: true}}},
			"4 entries, offsets/ 0..5 (6 files), commits/ empty"},
		{probe.Finding{Code: probe.CodeListed, N: 1, Logs: []probe.LogDir{{Dir: "offsets", Present: true, Files: 1, First: 3, Last: 3}, {Dir: "commits"}}, NoMetadata: true},
			"1 entries, offsets/ 3..3 (1 files), commits/ absent, no metadata"},
		{probe.Finding{Code: probe.CodeNoMetadata}, "no metadata file (Spark writes a new query id on restart)"},
		{probe.Finding{Code: probe.CodeQueryID, ID: "3f1c"}, "query id 3f1c"},
		{probe.Finding{Code: probe.CodeNoBatchPlanned}, "no batch planned yet"},
		{probe.Finding{Code: probe.CodeOffsetsRead, Batch: 5, N: 1, At: at.Add(-30 * time.Second), Age: 2 * time.Minute},
			"offsets/5: 1 source(s), planned 2025-01-01T00:05:00Z (2m ago)"},
		{probe.Finding{Code: probe.CodeOffsetsRead, Batch: 5, N: 2}, "offsets/5: 2 source(s)"},
		{probe.Finding{Code: probe.CodeNoBatchCommitted}, "no batch committed yet"},
		{probe.Finding{Code: probe.CodeCommitRead, Batch: 5, At: at, Age: 90 * time.Second}, "commits/5: committed 2025-01-01T00:05:30Z (1m30s ago)"},
		{probe.Finding{Code: probe.CodeWrote, N: 60, Path: obj}, "wrote 60 bytes to " + obj},
		{probe.Finding{Code: probe.CodeBytesMatch, N: 60}, "60 bytes match"},
		{probe.Finding{Code: probe.CodeDeleted, Path: obj}, "deleted " + obj},
		{probe.Finding{Code: probe.CodeCleanup, Of: &probe.Finding{Code: probe.CodeDeleted, Path: obj}}, "cleanup after the failed read back: deleted " + obj},
		{probe.Finding{Code: probe.CodeCleanup, Of: &probe.Finding{Code: probe.CodePermissionDenied, Step: probe.StepDelete, Path: obj}},
			"cleanup after the failed read back: permission denied deleting " + obj},
		{probe.Finding{Code: probe.CodeCorruptFile, Path: "/cp/offsets/5", Line: 2, Problem: "truncated"}, "corrupt /cp/offsets/5: line 2: truncated"},
		{probe.Finding{Code: probe.CodeCancelled, Step: probe.StepStat, Path: "/cp"}, "the probe was cancelled while checking /cp"},
		{probe.Finding{Code: probe.CodeTimedOut, Step: probe.StepReadMetadata, Path: "/cp/metadata"}, "timed out reading /cp/metadata"},
		{probe.Finding{Code: probe.CodePermissionDenied, Step: probe.StepWrite, Path: obj}, "permission denied writing " + obj},
		{probe.Finding{Code: probe.CodePermissionDenied, Step: probe.StepList, Path: "s3://b/p/offsets"}, "permission denied listing s3://b/p/offsets"},
		{probe.Finding{Code: probe.CodeNotFound, Step: probe.StepReadBack, Path: obj}, obj + " not found while reading back it"},
		{probe.Finding{Code: probe.CodeStepFailed, Step: probe.StepStat, Path: "s3://b/p", Cause: "connection refused"}, "checking s3://b/p failed: connection refused"},
		{probe.Finding{Code: probe.CodeCannotOpen, Path: "hdfs://namenode:8020/ckpt", Cause: `unsupported scheme "hdfs"`},
			`cannot open checkpoint location "hdfs://namenode:8020/ckpt": unsupported scheme "hdfs"`},
		{probe.Finding{Code: probe.CodeNoLocation, Path: "/cp"}, "no checkpoint at /cp: the location does not exist"},
		{probe.Finding{Code: probe.CodeIsFile, Path: "/cp"}, "no checkpoint at /cp: it is a file, not a directory"},
		{probe.Finding{Code: probe.CodeNoCheckpointFiles, Path: "/cp"}, "no checkpoint at /cp: it holds no metadata, offsets/ or commits/"},
		{probe.Finding{Code: probe.CodeBadProbePath, Path: "offsets/probe", Cause: "it is inside the checkpoint's offsets/, which belongs to Spark"},
			`cannot use probe path "offsets/probe": it is inside the checkpoint's offsets/, which belongs to Spark`},
		{probe.Finding{Code: probe.CodeNoProbeName, Cause: "EOF"}, "cannot name the probe object: EOF"},
		{probe.Finding{Code: probe.CodeReadBackDiffers, Path: obj}, "reading back " + obj + " returned other bytes than were written"},
		{probe.Finding{Code: probe.CodeCrashed, Path: "/cp", Cause: "boom"}, "the probe of /cp crashed: boom"},
		{probe.Finding{Code: probe.CodeHealthy, Path: "/cp", Write: true, Committed: true, Age: time.Minute}, "the checkpoint at /cp is readable and writable; the newest commit is 1m old"},
		{probe.Finding{Code: probe.CodeHealthy, Path: "/cp"}, "the checkpoint at /cp is readable"},
		{probe.Finding{Code: probe.CodeStale, Batch: 5, Age: 30 * time.Minute, After: 10 * time.Minute},
			"the checkpoint is stale: the newest commit, commits/5, is 30m old (stale after 10m)"},
		{probe.Finding{Code: probe.CodeNeverCommitted, After: 10 * time.Minute}, "the checkpoint is stale: no batch has been committed yet (stale after 10m)"},
		{probe.Finding{Code: probe.CodeSlow, After: 500 * time.Millisecond, Slow: []probe.Timing{{Step: "stat", Took: time.Second}, {Step: "delete", Took: time.Second}}},
			"the storage is slow: stat took 1s, delete took 1s (slow after 500ms)"},
	}
	for _, c := range cases {
		if got := commands.ProbeFinding(c.f); got != c.want {
			t.Errorf("%s: got %q, want %q", c.f.Code, got, c.want)
		}
	}
}

// TestProbeReasons: the reasons of real probes of local checkpoints, in full, and a result
// stored by an earlier version (its reason and details in words) as it was.
func TestProbeReasons(t *testing.T) {
	spec := sparktest.Spec{FirstBatch: 0, LatestBatch: 5, LatestCommit: 5,
		Topics: []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 10}}}
	last := spec.CommittedAt(5)
	cases := []struct {
		name  string
		setup func(t *testing.T, ckpt string)
		opt   probe.Options
		want  string // {ckpt} is the checkpoint directory
	}{
		{"healthy", nil, probe.Options{Write: true, StaleAfter: 10 * time.Minute},
			"the checkpoint at {ckpt} is readable and writable; the newest commit is 1m old"},
		{"missing", func(t *testing.T, ckpt string) { os.RemoveAll(ckpt) }, probe.Options{Write: true},
			"no checkpoint at {ckpt}: the location does not exist"},
		{"empty", func(t *testing.T, ckpt string) { os.RemoveAll(ckpt); os.Mkdir(ckpt, 0o755) }, probe.Options{},
			"no checkpoint at {ckpt}: it holds no metadata, offsets/ or commits/"},
		{"corrupt offsets", func(t *testing.T, ckpt string) {
			os.WriteFile(filepath.Join(ckpt, "offsets", "5"), []byte("v1\n{\"batchWatermarkMs\":0,\"batchTimes"), 0o644)
		}, probe.Options{}, "corrupt {ckpt}/offsets/5: line 2: truncated"},
		{"stale", nil, probe.Options{StaleAfter: 10 * time.Minute, Now: func() time.Time { return last.Add(30 * time.Minute) }},
			"the checkpoint is stale: the newest commit, commits/5, is 30m old (stale after 10m)"},
		{"probe path in offsets/", nil, probe.Options{Write: true, Path: "offsets/probe"},
			`cannot use probe path "offsets/probe": it is inside the checkpoint's offsets/, which belongs to Spark`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ckpt := filepath.Join(t.TempDir(), "ckpt")
			if err := sparktest.WriteCheckpoint(ckpt, spec); err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(t, ckpt)
			}
			opt := c.opt
			opt.Location = ckpt
			if opt.Now == nil {
				opt.Now = func() time.Time { return last.Add(time.Minute) }
			}
			r := probe.Run(t.Context(), opt)
			if got, want := commands.ProbeReason(r), strings.ReplaceAll(c.want, "{ckpt}", ckpt); got != want {
				t.Errorf("reason %q, want %q", got, want)
			}
			if got := commands.ProbeMessage(pipeline.ProbeMessage{Kind: pipeline.ProbeReason, Result: &r}); got != commands.ProbeReason(r) {
				t.Errorf("the stored reason %q, want %q", got, commands.ProbeReason(r))
			}
		})
	}
	// A result an earlier version stored: words where the codes are now.
	var old probe.Result
	if err := json.Unmarshal([]byte(`{"pipeline":"p","location":"/cp","status":"FAILED","class":"NOT_FOUND",
		"reason":"no checkpoint at /cp: the location does not exist","error":"stat /cp: no such file",
		"steps":[{"name":"stat","ok":false,"took":0,"detail":"no checkpoint at /cp: the location does not exist","error":"stat /cp: no such file"},
		{"name":"list","ok":false,"skipped":true,"took":0,"detail":"skipped"}],"started":"2025-01-01T00:00:00Z","took":0}`), &old); err != nil {
		t.Fatal(err)
	}
	want := []string{"probe of p at /cp",
		"✗ stat               0s  no checkpoint at /cp: the location does not exist",
		"    error: stat /cp: no such file",
		"- list                   skipped",
		"FAILED NOT_FOUND: no checkpoint at /cp: the location does not exist (took 0s)"}
	if got := commands.ProbeLines(old); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("an earlier version's result:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOwnershipLine: who owns a local directory and who the probe runs as, on one line.
func TestOwnershipLine(t *testing.T) {
	o := probe.Ownership{Dir: "/var/lib/spark/cp", Owner: "spark", Group: "spark", Mode: fs.ModeDir | 0o755, ProcUID: 1000, ProcGroups: []int{1000, 27}, CanWrite: true}
	if got, want := commands.OwnershipLine(o), "dir /var/lib/spark/cp owner spark:spark mode drwxr-xr-x; probe runs as uid 1000 groups [1000 27]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	o.Mode, o.CanWrite = fs.ModeDir|0o555, false
	if got, want := commands.OwnershipLine(o), "dir /var/lib/spark/cp owner spark:spark mode dr-xr-xr-x; probe runs as uid 1000 groups [1000 27] (the mode bits do not let it write there)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
