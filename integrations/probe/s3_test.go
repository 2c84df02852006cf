package probe_test

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

func TestRunS3(t *testing.T) {
	const bucket, prefix = "ckpt-bucket", "pipelines/sms-replies"
	tests := []struct {
		name   string
		setup  func(t *testing.T, srv *storagetest.S3Server, opt *probe.Options)
		want   probe.Status
		class  probe.Class
		steps  []string
		reason string // a prefix of whyKey(Result); {loc} is the checkpoint location
	}{
		{
			name:   "healthy",
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: "healthy {loc} write committed age 1m0s",
		},
		{
			name: "write test refused",
			setup: func(t *testing.T, srv *storagetest.S3Server, _ *probe.Options) {
				srv.DenyPrefix(prefix + "/" + probe.DefaultDir + "/")
			},
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓", "write ✗", "read back -", "delete -"},
			reason: "permission_denied write {loc}/" + probe.DefaultDir + "/probe-",
		},
		{
			name:   "checkpoint refused",
			setup:  func(t *testing.T, srv *storagetest.S3Server, _ *probe.Options) { srv.DenyPrefix(prefix) },
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "permission_denied stat {loc}",
		},
		{
			name:   "offsets refused",
			setup:  func(t *testing.T, srv *storagetest.S3Server, _ *probe.Options) { srv.DenyPrefix(prefix + "/offsets/") },
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✗", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "permission_denied list {loc}/offsets",
		},
		{
			name: "missing prefix",
			setup: func(t *testing.T, srv *storagetest.S3Server, opt *probe.Options) {
				opt.Location = srv.Location("pipelines/nothing-here")
			},
			want:   probe.StatusFailed,
			class:  probe.ClassNotFound,
			steps:  []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "no_location s3://" + bucket + "/pipelines/nothing-here",
		},
		{
			name: "connection refused",
			setup: func(t *testing.T, srv *storagetest.S3Server, opt *probe.Options) {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := l.Addr().String()
				l.Close()
				opt.Storage.S3.Endpoint = "http://" + addr
			},
			want:   probe.StatusFailed,
			class:  probe.ClassUnavailable,
			steps:  []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "step_failed stat {loc} cause ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := storagetest.NewS3Server(t, bucket)
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
				tc.setup(t, srv, &opt)
			}
			r := probe.Run(t.Context(), opt)
			checkResult(t, r, tc.want, tc.class, tc.steps)
			if want := strings.ReplaceAll(tc.reason, "{loc}", opt.Location); !strings.HasPrefix(whyKey(r), want) {
				t.Errorf("why %q, want it to start %q", whyKey(r), want)
			}
			if r.Owner != nil {
				t.Errorf("ownership %+v for an S3 location", r.Owner)
			}
			// Access to S3 cannot be judged without writing, and the result says so.
			if a := r.Access; tc.want == probe.StatusOK && (a == nil || a.Judged() ||
				a.Code != access.NotJudgedObjectStore || a.Location != opt.Location) {
				t.Errorf("access %+v for an S3 location", a)
			}
			if tc.want == probe.StatusOK && !r.NewestCommit.Equal(lastCommit) {
				t.Errorf("newest commit %v, want %v", r.NewestCommit, lastCommit)
			}
			// The write test leaves no object behind (where the test lets anyone look).
			s, err := storage.Open(srv.Location(prefix), srv.Options())
			if err != nil {
				t.Fatal(err)
			}
			entries, err := s.List(t.Context(), probe.DefaultDir)
			if refused := storage.Class(err) == storage.ClassPermission && tc.class == probe.ClassPermissionDenied; !refused && storage.Class(err) != storage.ClassNotFound {
				t.Errorf("probe prefix after the probe: %+v, %v; want no keys", entries, err)
			}
			if t.Failed() {
				t.Logf("result: %+v", r)
			}
		})
	}
}
