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

const objBucket, objPrefix = "ckpt-bucket", "pipelines/sms-replies"

// probeCase is one probe of a checkpoint in an object store.
type probeCase struct {
	name   string
	setup  func(srv storagetest.Server, opt *probe.Options)
	want   probe.Status
	class  probe.Class
	steps  []string
	reason string // a prefix of whyKey(Result); {loc} is the checkpoint location, {missing} the one of pipelines/nothing-here
	// access is how accessKey(Result.Access) starts; "" on an OK probe is the backend's
	// unjudged.
	access string
}

// probeBackend is what the probe on one object store does beyond the common cases.
type probeBackend struct {
	// location is the location of a prefix the probe is given.
	location func(srv storagetest.Server, prefix string) string
	// wantLocation is that location written out, for the reasons that name it.
	wantLocation func(bucket, prefix string) string
	// unjudged is how accessKey(Access) starts on an OK probe that judged no access; {loc} is the
	// checkpoint location.
	unjudged string
	// who is how Access names whom it judged access for; "" is not checked (s3:// and wasbs://
	// judge nobody and name streamwatch's local uid).
	who   string
	cases []probeCase // the backend's own
}

// probeBackends has a row for each of storagetest.ObjectStores.
var probeBackends = map[string]probeBackend{
	"s3": {
		location:     storagetest.Server.Location,
		wantLocation: func(b, p string) string { return "s3://" + b + "/" + p },
		unjudged:     "not judged object_store",
	},
	"gcs": {
		location:     storagetest.Server.Location,
		wantLocation: func(b, p string) string { return "gs://" + b + "/" + p },
		// The emulator has no IAM: its testIamPermissions answers 404.
		unjudged: "not judged iam_unanswered gs://" + objBucket + " Not Found (GCS HTTP 404)",
		who:      "streamwatch's identity",
		cases:    gcsIAMCases(),
	},
	"azure": {
		// wasbs://: Azurite has no dfs endpoint to read abfss:// ACLs from (TestRunAzureACL
		// judges those against a faithful one), and wasbs:// has no ACLs.
		location: func(srv storagetest.Server, p string) string {
			return srv.(*storagetest.AzureServer).BlobLocation(p)
		},
		wantLocation: func(b, p string) string { return "wasbs://" + b + "@devstoreaccount1.blob.core.windows.net/" + p },
		unjudged:     "not judged wasbs",
	},
}

// TestRunObjectStores: the probe on every object store (s3://, gs://, wasbs:// through their
// official clients against gofakes3, fake-gcs-server and Azurite) reads, writes, reads back
// and deletes, tells a stale checkpoint, names an unwritable or missing location, says why
// access is not judged, and leaves no object behind; plus each backend's own cases.
func TestRunObjectStores(t *testing.T) {
	common := []probeCase{
		{
			name:   "healthy",
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: "healthy {loc} write committed age 1m0s",
		},
		{
			name:   "stale: the newest object under commits/ is older than stale_after",
			setup:  func(_ storagetest.Server, opt *probe.Options) { opt.StaleAfter = 30 * time.Second },
			want:   probe.StatusDegraded,
			steps:  allSteps,
			reason: "stale batch 5 age 1m0s after 30s",
		},
		{
			name: "write test refused",
			setup: func(srv storagetest.Server, _ *probe.Options) {
				srv.DenyPrefix(objPrefix + "/" + probe.DefaultDir + "/")
			},
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓", "write ✗", "read back -", "delete -"},
			reason: "permission_denied write {loc}/" + probe.DefaultDir + "/probe-",
		},
		{
			name:   "offsets refused",
			setup:  func(srv storagetest.Server, _ *probe.Options) { srv.DenyPrefix(objPrefix + "/offsets/") },
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✗", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "permission_denied list {loc}/offsets",
		},
		{
			name:   "missing prefix",
			want:   probe.StatusFailed,
			class:  probe.ClassNotFound,
			steps:  []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: "no_location {missing}",
		},
	}
	for _, be := range storagetest.ObjectStores() {
		pb, ok := probeBackends[be.Name]
		if !ok {
			t.Fatalf("no row in probeBackends for the object store %s", be.Name)
		}
		missing := pb.wantLocation(objBucket, "pipelines/nothing-here")
		for _, tc := range append(append([]probeCase(nil), common...), pb.cases...) {
			t.Run(be.Name+"/"+tc.name, func(t *testing.T) {
				srv := be.Start(t, objBucket)
				dir := filepath.Join(t.TempDir(), "ckpt")
				if err := sparktest.WriteCheckpoint(dir, healthy()); err != nil {
					t.Fatal(err)
				}
				srv.Upload(t, dir, objPrefix)                        // the files and the objects now have the same times
				newest := newestIn(t, filepath.Join(dir, "commits")) // lastCommit where the store keeps the files' times
				opt := probe.Options{
					Pipeline:   "sms-replies",
					Location:   pb.location(srv, objPrefix),
					Write:      true,
					StaleAfter: 10 * time.Minute,
					Storage:    srv.Options(),
					Now:        fixed(newest.Add(time.Minute)),
				}
				if tc.name == "missing prefix" {
					opt.Location = pb.location(srv, "pipelines/nothing-here")
				}
				if tc.setup != nil {
					tc.setup(srv, &opt)
				}
				r := probe.Run(t.Context(), opt)
				checkResult(t, r, tc.want, tc.class, tc.steps)
				if want := strings.NewReplacer("{loc}", opt.Location, "{missing}", missing).Replace(tc.reason); !strings.HasPrefix(whyKey(r), want) {
					t.Errorf("why %q, want it to start %q", whyKey(r), want)
				}
				access := tc.access
				if access == "" && tc.want == probe.StatusOK {
					access = strings.ReplaceAll(pb.unjudged, "{loc}", opt.Location)
				}
				if access != "" {
					a, got := r.Access, accessKey(r.Access)
					if !strings.HasPrefix(got, access) || (a != nil && pb.who != "" && a.Who() != pb.who) {
						t.Errorf("access %q of %s, want %q of %s", got, a.Who(), access, pb.who)
					}
				}
				if tc.want == probe.StatusOK && !r.NewestCommit.Equal(newest) {
					t.Errorf("newest commit %v, want %v", r.NewestCommit, newest)
				}
				if !be.StampsTimes && !newest.Equal(lastCommit) {
					t.Errorf("the upload changed the files' times: newest commit %v, written %v", newest, lastCommit)
				}
				// The write test leaves no object behind.
				s, err := storage.Open(pb.location(srv, objPrefix), srv.Options())
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
}
