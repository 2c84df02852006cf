package probe_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// TestRunAzure: the probe on wasbs:// (the official client against Azurite) reads, writes,
// reads back and deletes as on s3://, and names an unwritable or missing location; access is
// not judged, as wasbs:// has no ACLs.
func TestRunAzure(t *testing.T) {
	const bucket, prefix = "ckpt", "pipelines/sms-replies"
	tests := []struct {
		name   string
		setup  func(srv *storagetest.AzureServer, opt *probe.Options)
		want   probe.Status
		class  probe.Class
		steps  []string
		reason string // a prefix of Result.Reason; {loc} is the checkpoint location
	}{
		{
			name:   "healthy",
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: "the checkpoint at {loc} is readable and writable; the newest commit is 1m old",
		},
		{
			name: "write test refused",
			setup: func(srv *storagetest.AzureServer, _ *probe.Options) {
				srv.DenyPrefix(prefix + "/" + probe.DefaultDir + "/")
			},
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓", "write ✗", "read back -", "delete -"},
			reason: "permission denied writing {loc}/" + probe.DefaultDir + "/probe-",
		},
		{
			name:   "offsets refused",
			setup:  func(srv *storagetest.AzureServer, _ *probe.Options) { srv.DenyPrefix(prefix + "/offsets/") },
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✗", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "permission denied listing {loc}/offsets",
		},
		{
			name: "missing prefix",
			setup: func(srv *storagetest.AzureServer, opt *probe.Options) {
				opt.Location = srv.BlobLocation("pipelines/nothing-here")
			},
			want:   probe.StatusFailed,
			class:  probe.ClassNotFound,
			steps:  []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "no checkpoint at wasbs://" + bucket + "@devstoreaccount1.blob.core.windows.net/pipelines/nothing-here: the location does not exist",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := storagetest.NewAzureServer(t, bucket)
			dir := filepath.Join(t.TempDir(), "ckpt")
			if err := sparktest.WriteCheckpoint(dir, healthy()); err != nil {
				t.Fatal(err)
			}
			srv.Upload(t, dir, prefix) // the blobs' times become the files'
			lastCommit := newestIn(t, filepath.Join(dir, "commits"))
			opt := probe.Options{
				Pipeline:   "sms-replies",
				Location:   srv.BlobLocation(prefix),
				Write:      true,
				StaleAfter: 10 * time.Minute,
				Storage:    srv.Options(),
				Now:        fixed(lastCommit.Add(time.Minute)),
			}
			if tc.setup != nil {
				tc.setup(srv, &opt)
			}
			r := probe.Run(t.Context(), opt)
			checkResult(t, r, tc.want, tc.class, tc.steps)
			if want := strings.ReplaceAll(tc.reason, "{loc}", opt.Location); !strings.HasPrefix(r.Reason, want) {
				t.Errorf("reason %q, want it to start %q", r.Reason, want)
			}
			if a := r.Access; tc.want == probe.StatusOK && (a == nil || a.Judged() ||
				!strings.Contains(a.Err, "access to "+opt.Location+" cannot be judged without writing")) {
				t.Errorf("access %+v for a wasbs:// location", a)
			}
			if tc.want == probe.StatusOK && !r.NewestCommit.Equal(lastCommit) {
				t.Errorf("newest commit %v, want %v", r.NewestCommit, lastCommit)
			}
			// The write test leaves no object behind.
			s, err := storage.Open(srv.BlobLocation(prefix), srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			entries, err := s.List(t.Context(), probe.DefaultDir)
			if refused := storage.Class(err) == storage.ClassPermission && tc.class == probe.ClassPermissionDenied; !refused && storage.Class(err) != storage.ClassNotFound {
				t.Errorf("probe prefix after the probe: %+v, %v; want no objects", entries, err)
			}
			if t.Failed() {
				t.Logf("result: %+v", r)
			}
		})
	}
}

// newestIn is the newest modification time of the files in dir.
func newestIn(t *testing.T, dir string) time.Time {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var newest time.Time
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.ModTime().After(newest) {
			newest = info.ModTime()
		}
	}
	return newest
}
