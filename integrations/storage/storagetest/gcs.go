package storagetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
}

// NewGCSServer starts an emulator holding one empty bucket.
func NewGCSServer(t testing.TB, bucket string) *GCSServer {
	t.Helper()
	// Without PublicHost the XML download path the Go client reads through answers 404.
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1", Port: 0,
	})
	if err != nil {
		t.Fatalf("start fake-gcs-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: bucket})
	return &GCSServer{URL: srv.URL(), Bucket: bucket, srv: srv}
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
	prefix = strings.Trim(prefix, "/")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if prefix != "" {
			name = prefix + "/" + name
		}
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
