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
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

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
		access    string // how accessKey(Access) starts
		judged    bool
	}{
		{"named entry allows", rwx, job, probe.StatusOK, "judged writable", true},
		{"commits/ lacks write", rx, job, probe.StatusFailed, "judged not_writable", true},
		{"only a group would allow", byGroup, job, probe.StatusOK, "not judged create_by_groups", false},
		{"no principal", rwx, "", probe.StatusOK, "not judged no_principal", false},
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
			if r.Status != tc.want || a == nil || a.Judged() != tc.judged || !strings.HasPrefix(accessKey(a), tc.access) || (a.Judged() && !a.ByACLs) {
				t.Fatalf("status %s (%+v), access %+v; want %s, judged %v, saying %q", r.Status, r.Why, a, tc.want, tc.judged, tc.access)
			}
			if tc.want == probe.StatusFailed && (r.Class != probe.ClassPermissionDenied || !r.RefusedByAccess() || !deniedCommits(a, job)) {
				t.Errorf("failed probe %s: %+v", r.Class, r.Why)
			}
		})
	}
}

// deniedCommits says whether the judgment denies commits/ alone, by the ACL entry naming
// principal (r-x under mask::r-x).
func deniedCommits(a *access.Report, principal string) bool {
	for _, d := range a.Dirs {
		commits := strings.HasSuffix(d.Dir.Path, "/commits")
		if d.Writable == commits {
			return false
		}
		if commits && (d.Denied == nil || d.Denied.Code != access.DeniedObjectEntry || d.Denied.Entry != "user:"+principal+":" ||
			!strings.Contains(d.Dir.ObjectACL, "user:"+principal+":r-x")) {
			return false
		}
	}
	return true
}
