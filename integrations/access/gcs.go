package access

import (
	"fmt"
	"slices"
	"strings"
)

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
	r := Report{Location: location, Identity: GCSIdentity,
		Note: "testIamPermissions answers for the identity streamwatch calls GCS with, not for the job's"}
	if jobUser {
		r.Note += "; job_user was not judged"
	}
	for _, p := range GCSWrite {
		if !slices.Contains(granted, p) {
			r.Missing = append(r.Missing, p)
		}
	}
	if len(r.Missing) == 0 {
		r.Writable = true
		r.Reason = fmt.Sprintf("%s may create and delete objects in %s (testIamPermissions)", GCSIdentity, bucket)
		return r
	}
	r.Reason = fmt.Sprintf("%s lacks %s in %s (testIamPermissions), so it may not %s objects there",
		GCSIdentity, strings.Join(r.Missing, " and "), bucket, gcsVerbs(r.Missing))
	return r
}

func gcsVerbs(missing []string) string {
	var v []string
	for _, p := range missing {
		v = append(v, strings.TrimPrefix(p, "storage.objects."))
	}
	return strings.Join(v, " or ")
}
