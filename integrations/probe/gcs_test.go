package probe_test

import (
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// gcsIAMCases are the probe's gs:// cases of TestRunObjectStores. Access is judged without
// writing from the bucket's testIamPermissions (answered as GCS documents it in front of the
// emulator, which has no IAM): a missing storage.objects.create fails the probe with that
// evidence even when the write test is off; an IAM call that fails (the emulator's own 404, a
// 403) leaves access not judged, with the reason.
func gcsIAMCases() []probeCase {
	gcs := func(srv storagetest.Server) *storagetest.GCSServer { return srv.(*storagetest.GCSServer) }
	return []probeCase{
		{
			name: "healthy, IAM grants create and delete",
			setup: func(srv storagetest.Server, _ *probe.Options) {
				gcs(srv).Grant("storage.objects.create", "storage.objects.delete")
			},
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: "healthy {loc} write committed age 1m0s",
			access: "judged gcs_writable gs://" + objBucket,
		},
		{
			name: "IAM lacks create, no write test",
			setup: func(srv storagetest.Server, opt *probe.Options) {
				gcs(srv).Grant("storage.objects.get", "storage.objects.delete")
				opt.Write = false
			},
			want:   probe.StatusFailed,
			class:  probe.ClassPermissionDenied,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓"},
			reason: "access_refused",
			access: "judged gcs_missing gs://" + objBucket + " storage.objects.create",
		},
		{
			name:   "IAM refused",
			setup:  func(srv storagetest.Server, _ *probe.Options) { gcs(srv).RefuseIAM(403) },
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: "healthy {loc} write",
			access: "not judged iam_unanswered gs://" + objBucket + " access denied (GCS HTTP 403: Request is prohibited by organization's policy.)",
		},
	}
}
