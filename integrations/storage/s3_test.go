package storage_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// putRecorder notes the PUTs whose length net/http cannot know: a body declared as 0 bytes
// long goes out chunked, without a Content-Length.
type putRecorder struct {
	mu        sync.Mutex
	puts      int
	unsized   []string
	transport http.RoundTripper
}

func (p *putRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut {
		p.mu.Lock()
		p.puts++
		if len(r.TransferEncoding) > 0 || (r.ContentLength == 0 && r.Body != nil && r.Body != http.NoBody) {
			p.unsized = append(p.unsized, r.URL.Path)
		}
		p.mu.Unlock()
	}
	return p.transport.RoundTrip(r)
}

// TestS3WritesEmptyObjects: a zero-length object over plain http is one PUT with a length
// (minio-go's streaming signature used to make it a chunked upload of declared length 0, which
// S3 refuses with 411 MissingContentLength), and it reads back empty.
func TestS3WritesEmptyObjects(t *testing.T) {
	t.Parallel()
	srv := storagetest.NewS3Server(t, "ckpt-b")
	opts := srv.Options()
	rec := &putRecorder{transport: http.DefaultTransport}
	opts.S3.Transport = rec
	s, err := storage.Open(srv.Location("ckpt"), opts)
	if err != nil {
		t.Fatal(err)
	}
	emptyFile, err := os.Create(filepath.Join(t.TempDir(), "empty"))
	if err != nil {
		t.Fatal(err)
	}
	defer emptyFile.Close()
	readers := map[string]io.Reader{
		"bytes":   bytes.NewReader(nil),
		"strings": strings.NewReader(""),
		"file":    emptyFile,
		"unknown": io.MultiReader(), // no Len: sized buffers it
	}
	for name, r := range readers {
		if err := s.Write(t.Context(), "empty/"+name, r); err != nil {
			t.Errorf("write an empty object from a %s reader: %v", name, err)
		}
	}
	// Overwriting with nothing empties an object.
	if err := s.Write(t.Context(), "empty/overwritten", strings.NewReader("v1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), "empty/overwritten", strings.NewReader("")); err != nil {
		t.Fatalf("overwrite with an empty object: %v", err)
	}
	for name := range readers {
		checkEmpty(t, s, "empty/"+name)
	}
	checkEmpty(t, s, "empty/overwritten")
	entries, err := s.List(t.Context(), "empty")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(readers)+1 {
		t.Errorf("list empty/ = %+v, want %d objects", entries, len(readers)+1)
	}
	for _, e := range entries {
		if e.Size != 0 || e.IsDir {
			t.Errorf("listed %+v, want an empty object", e)
		}
	}
	rec.mu.Lock()
	if len(rec.unsized) > 0 || rec.puts == 0 {
		t.Errorf("%d PUTs, of which without a length: %v", rec.puts, rec.unsized)
	}
	rec.mu.Unlock()

	// A backup copies empty files too.
	local, err := storage.Open("file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := local.Write(t.Context(), "commits/0", strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	if err := storage.Copy(t.Context(), s, "backup/commits/0", local, "commits/0"); err != nil {
		t.Fatalf("copy an empty file to S3: %v", err)
	}
	checkEmpty(t, s, "backup/commits/0")
}

func checkEmpty(t *testing.T, s storage.Store, name string) {
	t.Helper()
	e, err := s.Stat(t.Context(), name)
	if err != nil {
		t.Errorf("stat %s: %v", name, err)
		return
	}
	if e.Size != 0 || e.IsDir {
		t.Errorf("stat %s = %+v, want an empty object", name, e)
	}
	data, err := storage.ReadAll(t.Context(), s, name, 0)
	if err != nil || len(data) != 0 {
		t.Errorf("read %s = %q, %v; want nothing", name, data, err)
	}
}
