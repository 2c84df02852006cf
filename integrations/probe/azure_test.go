package probe_test

import (
	"net/http"
	"net/http/httptest"
	"os"
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
			name:   "stale: the newest blob under commits/ is older than stale_after",
			setup:  func(_ *storagetest.AzureServer, opt *probe.Options) { opt.StaleAfter = 30 * time.Second },
			want:   probe.StatusDegraded,
			steps:  allSteps,
			reason: "the checkpoint is stale: the newest commit, commits/5, is 1m old (stale after 30s)",
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

// dfsACLServer answers Path - Get Properties with action=getAccessControl as the ADLS Gen2
// dfs endpoint documents it (HEAD /{filesystem}/{path}?action=getAccessControl&upn=false;
// x-ms-owner, x-ms-group, x-ms-permissions and x-ms-acl in the reply), for the paths in acls
// (filesystem-relative, "" the root); other paths are 404 PathNotFound. A request that is not
// signed with the account's Shared Key, or not of that shape, is 400.
type dfsACLServer struct {
	*httptest.Server
	acls map[string][3]string // path -> owner, permissions, ACL
}

const dfsGroup = "33333333-3333-3333-3333-333333333333"

func newDFSACLServer(t *testing.T, filesystem string, acls map[string][3]string) *dfsACLServer {
	s := &dfsACLServer{acls: acls}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		fsName, p, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if r.Method != http.MethodHead || fsName != filesystem || q.Get("action") != "getAccessControl" || q.Get("upn") != "false" ||
			r.Header.Get("x-ms-version") == "" || !strings.HasPrefix(r.Header.Get("Authorization"), "SharedKey devstoreaccount1:") {
			w.Header().Set("x-ms-error-code", "InvalidQueryParameterValue")
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		a, ok := s.acls[strings.TrimSuffix(p, "/")]
		if !ok {
			w.Header().Set("x-ms-error-code", "PathNotFound")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		h := w.Header()
		h.Set("x-ms-owner", a[0])
		h.Set("x-ms-group", dfsGroup)
		h.Set("x-ms-permissions", a[1])
		h.Set("x-ms-acl", a[2])
		h.Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		h.Set("x-ms-resource-type", "directory")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestRunAzureACL: on abfss://, job_user's principal is judged from the ACLs the dfs endpoint
// returns, without writing: writable where its named entry allows, FAILED PERMISSION_DENIED
// naming commits/ where the entry lacks write (though streamwatch's own write test passed),
// and not judged where only its group memberships would decide, or when no principal is set.
func TestRunAzureACL(t *testing.T) {
	const ctr, prefix = "ckpt", "pipelines/sms-replies"
	const job, admin = "11111111-1111-1111-1111-111111111111", "44444444-4444-4444-4444-444444444444"
	rwx := "user::rwx,user:" + job + ":rwx,group::r-x,mask::rwx,other::--x"
	rx := "user::rwx,user:" + job + ":r-x,group::r-x,mask::r-x,other::--x"
	byGroup := "user::rwx,group::r-x,group:55555555-5555-5555-5555-555555555555:rwx,mask::rwx,other::--x"
	tests := []struct {
		name      string
		commits   string // the ACL of commits/
		principal string
		want      probe.Status
		access    string // in Access.Reason, or in Access.Err when not judged
		judged    bool
	}{
		{"named entry allows", rwx, job, probe.StatusOK, "principal " + job + " (job_user) may create files in", true},
		{"commits/ lacks write", rx, job, probe.StatusFailed, "may not create files in abfss://" + ctr + "@devstoreaccount1.dfs.core.windows.net/" + prefix + "/commits (owner " + admin, true},
		{"only a group would allow", byGroup, job, probe.StatusOK, "cannot see group memberships", false},
		{"no principal", rwx, "", probe.StatusOK, "job_user: {principal: <object id>}, which is not set", false},
	}
	srv := storagetest.NewAzureServer(t, ctr)
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(dir, healthy()); err != nil {
		t.Fatal(err)
	}
	srv.Upload(t, dir, prefix)
	lastCommit := newestIn(t, filepath.Join(dir, "commits"))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dfs := newDFSACLServer(t, ctr, map[string][3]string{
				"":                             {"$superuser", "rwxr-x--x+", rwx},
				"pipelines":                    {admin, "rwxr-x--x+", rwx},
				prefix:                         {admin, "rwxrwx--x+", rwx},
				prefix + "/offsets":            {admin, "rwxrwx--x+", rwx},
				prefix + "/commits":            {admin, "rwxrwx--x+", tc.commits},
				prefix + "/_streamwatch_probe": {admin, "rwxrwx--x+", rwx},
			})
			opt := probe.Options{
				Pipeline: "sms-replies", Location: srv.Location(prefix), Write: true,
				StaleAfter: 10 * time.Minute, Storage: srv.Options(), Now: fixed(lastCommit.Add(time.Minute)),
			}
			opt.Storage.Azure.DFSEndpoint = dfs.URL
			if tc.principal != "" {
				opt.JobUser = &access.User{Principal: tc.principal, Whose: "job_user"}
			}
			r := probe.Run(t.Context(), opt)
			a := r.Access
			if r.Status != tc.want || a == nil || a.Judged() != tc.judged || !strings.Contains(a.Reason+a.Err, tc.access) {
				t.Fatalf("status %s (%s), access %+v; want %s, judged %v, saying %q", r.Status, r.Reason, a, tc.want, tc.judged, tc.access)
			}
			if tc.want == probe.StatusFailed && (r.Class != probe.ClassPermissionDenied || r.Reason != a.Reason || !strings.Contains(r.Reason, "ACL user::rwx,user:"+job+":r-x")) {
				t.Errorf("failed probe %s: %s", r.Class, r.Reason)
			}
		})
	}
}
