package probe_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// TestRunGCS: the probe on gs:// (the official client against fake-gcs-server) reads, writes,
// reads back and deletes as on s3://, and names an unwritable or missing location. Access is
// judged without writing from the bucket's testIamPermissions (answered as GCS documents it in
// front of the emulator, which has no IAM): a missing storage.objects.create fails the probe
// with that evidence even when the write test is off; an IAM call that fails (the emulator's
// own 404, a 403) leaves access not judged, with the reason.
func TestRunGCS(t *testing.T) {
	const bucket, prefix = "ckpt-bucket", "pipelines/sms-replies"
	tests := []struct {
		name   string
		setup  func(srv *storagetest.GCSServer, opt *probe.Options)
		want   probe.Status
		class  probe.Class
		steps  []string
		reason string // a prefix of Result.Reason; {loc} is the checkpoint location
		// access is what Result.Access says: "judged: " + its Reason, or "not judged: " + its Err.
		access string
	}{
		{
			name:   "healthy, the emulator has no IAM",
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: "the checkpoint at {loc} is readable and writable; the newest commit is 1m old",
			access: "not judged: gs://" + bucket + "'s testIamPermissions did not answer (Not Found (GCS HTTP 404)): the write probe and the driver logs tell",
		},
		{
			name: "healthy, IAM grants create and delete",
			setup: func(srv *storagetest.GCSServer, _ *probe.Options) {
				srv.Grant("storage.objects.create", "storage.objects.delete")
			},
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: "the checkpoint at {loc} is readable and writable; the newest commit is 1m old",
			access: "judged: streamwatch's identity may create and delete objects in gs://" + bucket + " (testIamPermissions)",
		},
		{
			name: "IAM lacks create, no write test",
			setup: func(srv *storagetest.GCSServer, opt *probe.Options) {
				srv.Grant("storage.objects.get", "storage.objects.delete")
				opt.Write = false
			},
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓"},
			reason: "streamwatch's identity lacks storage.objects.create in gs://" + bucket + " (testIamPermissions), so it may not create objects there",
			access: "judged: streamwatch's identity lacks storage.objects.create in gs://" + bucket,
		},
		{
			name:   "IAM refused",
			setup:  func(srv *storagetest.GCSServer, _ *probe.Options) { srv.RefuseIAM(403) },
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: "the checkpoint at {loc} is readable and writable",
			access: "not judged: gs://" + bucket + "'s testIamPermissions did not answer (access denied (GCS HTTP 403: Request is prohibited by organization's policy.)): the write probe and the driver logs tell",
		},
		{
			name: "write test refused",
			setup: func(srv *storagetest.GCSServer, _ *probe.Options) {
				srv.DenyPrefix(prefix + "/" + probe.DefaultDir + "/")
			},
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓", "write ✗", "read back -", "delete -"},
			reason: "permission denied writing {loc}/" + probe.DefaultDir + "/probe-",
		},
		{
			name:   "offsets refused",
			setup:  func(srv *storagetest.GCSServer, _ *probe.Options) { srv.DenyPrefix(prefix + "/offsets/") },
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✗", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "permission denied listing {loc}/offsets",
		},
		{
			name: "missing prefix",
			setup: func(srv *storagetest.GCSServer, opt *probe.Options) {
				opt.Location = srv.Location("pipelines/nothing-here")
			},
			want:   probe.StatusFailed,
			class:  probe.ClassNotFound,
			steps:  []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "no checkpoint at gs://" + bucket + "/pipelines/nothing-here: the location does not exist",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := storagetest.NewGCSServer(t, bucket)
			dir := filepath.Join(t.TempDir(), "ckpt")
			if err := sparktest.WriteCheckpoint(dir, healthy()); err != nil {
				t.Fatal(err)
			}
			srv.Upload(t, dir, prefix)
			opt := probe.Options{
				Pipeline:   "sms-replies",
				Location:   srv.Location(prefix),
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
			if tc.access != "" {
				a, got := r.Access, "nil"
				switch {
				case a.Judged():
					got = "judged: " + a.Reason
				case a != nil:
					got = "not judged: " + a.Err
				}
				if !strings.HasPrefix(got, tc.access) || (a != nil && a.Who() != "streamwatch's identity") {
					t.Errorf("access %q of %s, want %q of streamwatch's identity", got, a.Who(), tc.access)
				}
			}
			if tc.want == probe.StatusOK && !r.NewestCommit.Equal(lastCommit) {
				t.Errorf("newest commit %v, want %v", r.NewestCommit, lastCommit)
			}
			// The write test leaves no object behind.
			s, err := storage.Open(srv.Location(prefix), srv.Options())
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
