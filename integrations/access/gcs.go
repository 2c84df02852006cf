package access

import "slices"

// GCSIdentity is how replies name whom GCS's testIamPermissions judges: the identity
// streamwatch calls with (its service account or workload identity), not the job's.
const GCSIdentity = "streamwatch's identity"

// GCSWrite are the permissions Spark's writes need in a bucket: creating objects (every
// checkpoint file) and deleting them (the GCS connector renames by copy and delete, and Spark
// purges old batches).
var GCSWrite = []string{"storage.objects.create", "storage.objects.delete"}

// GCS judges a gs:// location from the permissions the bucket's testIamPermissions says the
// caller holds: writable when it holds every one of GCSWrite. jobUser says whether the
// configuration names the job's user, which this judgment cannot cover.
func GCS(location, bucket string, granted []string, jobUser bool) Report {
	r := Report{Location: location, Identity: GCSIdentity, Bucket: bucket, JobUserUnjudged: jobUser}
	for _, p := range GCSWrite {
		if !slices.Contains(granted, p) {
			r.Missing = append(r.Missing, p)
		}
	}
	r.Code, r.Writable = ReportGCSWritable, len(r.Missing) == 0
	if !r.Writable {
		r.Code = ReportGCSMissing
	}
	return r
}
