package commands_test

import (
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
