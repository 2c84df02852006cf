package storagetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// GCSServer is fake-gcs-server's in-process GCS emulator (JSON and XML APIs) on a loopback
// port, reached by the official client as through STORAGE_EMULATOR_HOST. It is stopped when
// the test ends.
type GCSServer struct {
	URL    string // http://127.0.0.1:port
	Bucket string
	srv    *fakestorage.Server

	mu      sync.Mutex
	refused denyList
	iam     *iamAnswer // nil: testIamPermissions reaches the emulator, which has no IAM (404)
}

// iamAnswer is how the bucket's testIamPermissions answers.
type iamAnswer struct {
	granted []string
	status  int // 0: 200 with the granted subset of the asked permissions
}

// NewGCSServer starts an emulator holding one empty bucket.
func NewGCSServer(t testing.TB, bucket string) *GCSServer {
	t.Helper()
	// Without PublicHost the XML download path the Go client reads through answers 404.
	// The emulator serves through our listener so that DenyPrefix can answer before it.
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1", NoListener: true,
	})
	if err != nil {
		t.Fatalf("start fake-gcs-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
	s := &GCSServer{Bucket: bucket, srv: srv}
	hs := httptest.NewServer(s.deny(srv.HTTPHandler()))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// DenyPrefix makes every request for an object under prefix (a bucket-relative name prefix),
// and every listing whose prefix starts with it, answer 403 as GCS does for a missing IAM
// permission.
func (s *GCSServer) DenyPrefix(prefix string) {
	s.refused.add(prefix)
}

// Grant makes the bucket's testIamPermissions answer as GCS does for a caller holding perms:
// 200 with those of the asked permissions it holds. fake-gcs-server has no IAM: until Grant
// or RefuseIAM, the request reaches it and it answers 404.
func (s *GCSServer) Grant(perms ...string) {
	s.mu.Lock()
	s.iam = &iamAnswer{granted: perms}
	s.mu.Unlock()
}

// RefuseIAM makes the bucket's testIamPermissions answer status (403, 404) with GCS's error body.
func (s *GCSServer) RefuseIAM(status int) {
	s.mu.Lock()
	s.iam = &iamAnswer{status: status}
	s.mu.Unlock()
}

// testPermissions answers GET /storage/v1/b/{bucket}/iam/testPermissions?permissions=…
// as the JSON API reference documents it; false when it is not that request or no answer is set.
func (s *GCSServer) testPermissions(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/b/"+s.Bucket+"/iam/testPermissions") {
		return false
	}
	s.mu.Lock()
	a := s.iam
	s.mu.Unlock()
	if a == nil {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	if a.status != 0 {
		// testIamPermissions needs no permission of its own: GCS refuses it for a missing
		// bucket or a perimeter (VPC Service Controls) around it.
		reason, msg := "notFound", "The specified bucket does not exist."
		if a.status == http.StatusForbidden {
			reason, msg = "vpcServiceControls", "Request is prohibited by organization's policy."
		}
		w.WriteHeader(a.status)
		fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"errors":[{"reason":%q,"message":%q}]}}`, a.status, msg, reason, msg)
		return true
	}
	held := []string{}
	for _, p := range r.URL.Query()["permissions"] {
		for _, g := range a.granted {
			if p == g {
				held = append(held, p)
			}
		}
	}
	json.NewEncoder(w).Encode(map[string]any{"kind": "storage#testIamPermissionsResponse", "permissions": held})
	return true
}

func (s *GCSServer) deny(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.testPermissions(w, r) {
			return
		}
		var names []string
		q := r.URL.Query()
		if v := q.Get("name"); v != "" {
			names = append(names, v)
		}
		if q.Has("prefix") {
			names = append(names, q.Get("prefix"))
		}
		if n := uploadName(r); n != "" {
			names = append(names, n)
		}
		p := r.URL.Path
		if _, obj, ok := strings.Cut(p, "/b/"+s.Bucket+"/o/"); ok {
			// copyTo/rewriteTo name the target after the source.
			for _, sep := range []string{"/copyTo/b/", "/rewriteTo/b/"} {
				if src, rest, ok := strings.Cut(obj, sep); ok {
					obj = src
					if _, dst, ok := strings.Cut(rest, "/o/"); ok {
						names = append(names, dst)
					}
				}
			}
			names = append(names, obj)
		} else if obj, ok := strings.CutPrefix(p, "/"+s.Bucket+"/"); ok { // the XML API's reads
			names = append(names, obj)
		}
		if s.refused.denies(names...) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"error":{"code":403,"message":"streamwatch@test.iam.gserviceaccount.com does not have storage.objects access to the Google Cloud Storage object.","errors":[{"reason":"forbidden","message":"Permission denied"}]}}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Options returns storage options that reach this emulator the way STORAGE_EMULATOR_HOST does.
func (s *GCSServer) Options() storage.Options {
	host := strings.TrimPrefix(s.URL, "http://")
	return storage.Options{Getenv: func(k string) string {
		if k == "STORAGE_EMULATOR_HOST" {
			return host
		}
		return ""
	}}
}

// Location is the gs:// location of a prefix in the bucket.
func (s *GCSServer) Location(prefix string) string {
	return "gs://" + s.Bucket + "/" + strings.TrimPrefix(prefix, "/")
}

// Upload copies every file under dir to objects under prefix, with the file's modification
// time as the object's update time, so that a checkpoint written on disk can be served from GCS.
func (s *GCSServer) Upload(t testing.TB, dir, prefix string) {
	t.Helper()
	err := walkFiles(dir, prefix, func(name string, info fs.FileInfo, data []byte) error {
		s.srv.CreateObject(fakestorage.Object{
			ObjectAttrs: fakestorage.ObjectAttrs{BucketName: s.Bucket, Name: name,
				Created: info.ModTime(), Updated: info.ModTime()},
			Content: data,
		})
		return nil
	})
	if err != nil {
		t.Fatalf("upload %s to gcs: %v", dir, err)
	}
}

// Put stores one object with the given content (tests of a single file).
func (s *GCSServer) Put(name string, data []byte) {
	s.srv.CreateObject(fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: s.Bucket, Name: name},
		Content:     data,
	})
}

// uploadName is the object name in a multipart upload's metadata part ("" for other requests);
// the request body is kept for the emulator.
func uploadName(r *http.Request) string {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if !strings.HasPrefix(r.URL.Path, "/upload/") || err != nil || !strings.HasPrefix(mt, "multipart/") {
		return ""
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	part, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).NextPart()
	if err != nil {
		return ""
	}
	var meta struct {
		Name string `json:"name"`
	}
	if json.NewDecoder(part).Decode(&meta) != nil {
		return ""
	}
	return meta.Name
}
