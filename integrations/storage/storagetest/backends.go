package storagetest

import (
	"strings"
	"sync"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// Server is an object-store emulator of these tests: S3Server, GCSServer and AzureServer.
type Server interface {
	// Location is the location of a prefix in the bucket (container) as a user writes it.
	Location(prefix string) string
	// Options reach the server as a user's environment reaches the real service.
	Options() storage.Options
	// Upload copies every file under dir to objects under prefix; afterwards the files' and
	// the objects' modification times are the same.
	Upload(t testing.TB, dir, prefix string)
	// DenyPrefix makes requests for objects under prefix answer 403 as the service does.
	DenyPrefix(prefix string)
}

// Backend is one object store that tests of code reading checkpoints and logs run against.
type Backend struct {
	Name  string                                   // "s3", "gcs", "azure": the subtest's name
	Start func(t testing.TB, bucket string) Server // a server holding one empty bucket
	// WantLocation is the location a prefix in bucket has, written out apart from Location,
	// so that a test comparing a location string checks Location too.
	WantLocation func(bucket, prefix string) string
	// Denied is how the service's 403 reads in an error, e.g. "access denied (GCS HTTP 403".
	Denied string
	// StampsTimes: the service stamps each object's modification time itself (Azure: the
	// upload's), so Upload gives the files the objects' times rather than the reverse, and a
	// test judging ages takes its "now" from the real clock rather than a fixed date.
	StampsTimes bool
}

// ObjectStores lists the object-store backends; a new one is a new row.
func ObjectStores() []Backend {
	return []Backend{
		{
			Name:         "s3",
			Start:        func(t testing.TB, bucket string) Server { return NewS3Server(t, bucket) },
			WantLocation: func(bucket, prefix string) string { return "s3://" + bucket + "/" + prefix },
			Denied:       "access denied (S3 AccessDenied, HTTP 403",
		},
		{
			Name:         "gcs",
			Start:        func(t testing.TB, bucket string) Server { return NewGCSServer(t, bucket) },
			WantLocation: func(bucket, prefix string) string { return "gs://" + bucket + "/" + prefix },
			Denied:       "access denied (GCS HTTP 403",
		},
		{
			Name:  "azure",
			Start: func(t testing.TB, ctr string) Server { return NewAzureServer(t, ctr) },
			WantLocation: func(ctr, prefix string) string {
				return "abfss://" + ctr + "@devstoreaccount1.dfs.core.windows.net/" + prefix
			},
			Denied:      "access denied (Azure AuthorizationPermissionMismatch, HTTP 403)",
			StampsTimes: true,
		},
	}
}

// UploadInOrder is srv.Upload keeping the order of the files' modification times on a server
// that stamps its own (AzureServer.UploadInOrder); the others keep the files' times anyway.
func UploadInOrder(t testing.TB, srv Server, dir, prefix string) {
	t.Helper()
	if o, ok := srv.(interface {
		UploadInOrder(t testing.TB, dir, prefix string)
	}); ok {
		o.UploadInOrder(t, dir, prefix)
		return
	}
	srv.Upload(t, dir, prefix)
}

// denyList is what a test server refuses: the names under the prefixes DenyPrefix gave it.
type denyList struct {
	mu       sync.Mutex
	prefixes []string
}

func (d *denyList) add(prefix string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.prefixes = append(d.prefixes, prefix)
}

// denies says whether any of names is under a denied prefix.
func (d *denyList) denies(names ...string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.prefixes {
		for _, n := range names {
			if strings.HasPrefix(n, p) {
				return true
			}
		}
	}
	return false
}
