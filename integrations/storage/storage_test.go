package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, loc := range []string{dir, "file://" + dir, "file:" + dir, "file://localhost" + dir} {
		s, err := storage.Open(loc, storage.Options{})
		if err != nil {
			t.Fatalf("Open(%q): %v", loc, err)
		}
		if s.Location() != loc {
			t.Errorf("Location() = %q, want %q", s.Location(), loc)
		}
		name := fmt.Sprintf("f%d", len(loc))
		if err := s.Write(t.Context(), name, strings.NewReader(loc)); err != nil {
			t.Fatalf("%s: write: %v", loc, err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != loc {
			t.Errorf("%s: wrote %q, %v into %s", loc, got, err, dir)
		}
	}
	for _, loc := range []string{"s3://bucket/prefix", "s3a://bucket/a/b", "s3n://bucket", "S3://bucket/x"} {
		if _, err := storage.Open(loc, storage.Options{}); err != nil {
			t.Errorf("Open(%q): %v", loc, err)
		}
	}
	for loc, want := range map[string]string{
		"":                    "empty location",
		"hdfs://nn:8020/ckpt": `unsupported scheme "hdfs"`,
		"file://otherhost/x":  `names host "otherhost"`,
		"s3:///prefix":        "no bucket",
		"file:relative":       "not an absolute path",
	} {
		_, err := storage.Open(loc, storage.Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) error = %v, want it to contain %q", loc, err, want)
		}
	}
	_, err := storage.Open("s3://b/p", storage.Options{S3: storage.S3Options{Endpoint: "ftp://host"}})
	if err == nil || !strings.Contains(err.Error(), "scheme must be http or https") {
		t.Errorf("ftp endpoint: %v", err)
	}
}

// testContract exercises the behaviour every backend shares.
func testContract(t *testing.T, s storage.Store) {
	ctx := t.Context()
	mustWrite := func(name, data string) {
		t.Helper()
		if err := s.Write(ctx, name, strings.NewReader(data)); err != nil {
			t.Fatalf("write %s: %v", name, err)
		}
	}
	mustWrite("offsets/0", "v1\nzero")
	mustWrite("offsets/1", "v1\none")
	mustWrite("offsets/.1.crc", "crc")
	mustWrite("state/0/0/1.delta", "d")

	// The probe: write a small object, read it back, delete it.
	mustWrite(".probe.tmp", "probe")
	got, err := storage.ReadAll(ctx, s, ".probe.tmp", 1024)
	if err != nil || string(got) != "probe" {
		t.Fatalf("read probe = %q, %v", got, err)
	}
	if err := s.Delete(ctx, ".probe.tmp"); err != nil {
		t.Fatalf("delete probe: %v", err)
	}
	if _, err := s.Stat(ctx, ".probe.tmp"); storage.Class(err) != storage.ClassNotFound {
		t.Fatalf("stat deleted probe: %v (class %v)", err, storage.Class(err))
	}

	root, err := s.List(ctx, "")
	if err != nil {
		t.Fatalf("list root: %v", err)
	}
	if want := []storage.Entry{{Name: "offsets", IsDir: true}, {Name: "state", IsDir: true}}; !sameNames(root, want) {
		t.Errorf("list root = %+v, want %+v", root, want)
	}
	offsets, err := s.List(ctx, "offsets/")
	if err != nil {
		t.Fatalf("list offsets: %v", err)
	}
	if want := []storage.Entry{{Name: ".1.crc"}, {Name: "0"}, {Name: "1"}}; !sameNames(offsets, want) {
		t.Errorf("list offsets = %+v, want %+v", offsets, want)
	}
	for _, e := range offsets {
		if e.Name == "1" && (e.Size != 6 || e.ModTime.IsZero()) {
			t.Errorf("entry %+v: want size 6 and a modification time", e)
		}
	}
	if e, err := s.Stat(ctx, "offsets/0"); err != nil || e.Size != 7 || e.IsDir || e.Name != "0" {
		t.Errorf("stat offsets/0 = %+v, %v", e, err)
	}
	if e, err := s.Stat(ctx, "state/0"); err != nil || !e.IsDir {
		t.Errorf("stat state/0 = %+v, %v", e, err)
	}

	// Missing things are ClassNotFound, and the error says what was done to what.
	_, err = s.Read(ctx, "offsets/7")
	checkErr(t, err, storage.ClassNotFound, "read offsets/7: ")
	_, err = s.List(ctx, "commits")
	checkErr(t, err, storage.ClassNotFound, "list commits: ")
	checkErr(t, s.Delete(ctx, "offsets/7"), storage.ClassNotFound, "delete offsets/7: ")
	checkErr(t, s.Rename(ctx, "offsets/7", "q/7"), storage.ClassNotFound, "rename offsets/7 to q/7: ")

	// Remediation: copy to a backup, then move into quarantine; never over an existing file.
	if err := storage.Copy(ctx, s, "backup/offsets/1", s, "offsets/1"); err != nil {
		t.Fatalf("copy: %v", err)
	}
	if err := s.Rename(ctx, "offsets/1", "quarantine/offsets/1"); err != nil {
		t.Fatalf("rename: %v", err)
	}
	if got, err := storage.ReadAll(ctx, s, "quarantine/offsets/1", 0); err != nil || string(got) != "v1\none" {
		t.Errorf("quarantined file = %q, %v", got, err)
	}
	if got, err := storage.ReadAll(ctx, s, "backup/offsets/1", 0); err != nil || string(got) != "v1\none" {
		t.Errorf("backup file = %q, %v", got, err)
	}
	if _, err := s.Stat(ctx, "offsets/1"); storage.Class(err) != storage.ClassNotFound {
		t.Errorf("offsets/1 still there after rename: %v", err)
	}
	err = s.Rename(ctx, "offsets/0", "quarantine/offsets/1")
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("rename over an existing file: %v, want fs.ErrExist", err)
	}
	if _, err := storage.ReadAll(ctx, s, "offsets/0", 3); err == nil || !strings.Contains(err.Error(), "read offsets/0: larger than the 3-byte limit") {
		t.Errorf("read over the limit: %v", err)
	}
	for _, bad := range []string{"../x", "/abs", "a/../../b"} {
		if _, err := s.Read(ctx, bad); err == nil || storage.Class(err) != storage.ClassOther {
			t.Errorf("read %q: %v, want a ClassOther error", bad, err)
		}
	}
}

func sameNames(got, want []storage.Entry) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].IsDir != want[i].IsDir {
			return false
		}
	}
	return true
}

func checkErr(t *testing.T, err error, class storage.ErrorClass, prefix string) {
	t.Helper()
	if err == nil {
		t.Errorf("want a %v error starting %q, got nil", class, prefix)
		return
	}
	if storage.Class(err) != class || !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("error %q (class %v), want class %v and prefix %q", err, storage.Class(err), class, prefix)
	}
}

// TestContract: every backend behaves as the others (list, stat, read, write, delete, rename
// refusing an existing target): local paths, s3:// against gofakes3, gs:// through the
// official client against fake-gcs-server, and the in-memory store of the tests.
func TestContract(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) (storage.Store, error)
	}{
		{"local", func(t *testing.T) (storage.Store, error) { return storage.Open(t.TempDir(), storage.Options{}) }},
		{"s3", func(t *testing.T) (storage.Store, error) {
			srv := storagetest.NewS3Server(t, "ckpt-bucket")
			return storage.Open(srv.Location("pipelines/sms"), srv.Options())
		}},
		{"gcs", func(t *testing.T) (storage.Store, error) {
			srv := storagetest.NewGCSServer(t, "ckpt-bucket")
			return storage.Open(srv.Location("pipelines/sms"), srv.Options())
		}},
		{"mem", func(*testing.T) (storage.Store, error) { return storagetest.NewMemStore("mem://ckpt"), nil }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s, err := b.open(t)
			if err != nil {
				t.Fatal(err)
			}
			testContract(t, s)
		})
	}
}

func TestCopyBetweenBackends(t *testing.T) {
	t.Parallel()
	srv := storagetest.NewS3Server(t, "ckpt-b")
	remote, err := storage.Open(srv.Location("ckpt"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	local, err := storage.Open("file://"+t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(t.Context(), "commits/3", bytes.NewReader([]byte("v1\n{}"))); err != nil {
		t.Fatal(err)
	}
	if err := storage.Copy(t.Context(), local, "backup/commits/3", remote, "commits/3"); err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "src")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, "from a file")
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(t.Context(), "from-file", f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for s, name := range map[storage.Store]string{local: "backup/commits/3", remote: "from-file"} {
		got, err := storage.ReadAll(t.Context(), s, name, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"backup/commits/3": "v1\n{}", "from-file": "from a file"}[name]; string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestS3ListPaginates(t *testing.T) {
	t.Parallel()
	srv := storagetest.NewS3Server(t, "ckpt-b")
	opts := srv.Options()
	opts.S3.ListPageSize = 2
	s, err := storage.Open(srv.Location("ckpt/"), opts)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("offsets/%d", i)
		if err := s.Write(t.Context(), name, strings.NewReader("v1")); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprint(i))
	}
	for _, name := range []string{"offsets/sub/a", "offsets/sub/b", "offsets/zz/a"} {
		if err := s.Write(t.Context(), name, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	want = append(want, "sub/", "zz/")
	before := srv.Requests("list")
	entries, err := s.List(t.Context(), "offsets")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		n := e.Name
		if e.IsDir {
			n += "/"
		}
		got = append(got, n)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("list = %v, want %v", got, want)
	}
	if n := srv.Requests("list") - before; n < 5 {
		t.Errorf("%d list requests for 9 entries in pages of 2, want at least 5", n)
	}
}

func TestS3AccessDenied(t *testing.T) {
	t.Parallel()
	srv := storagetest.NewS3Server(t, "ckpt-b")
	s, err := storage.Open(srv.Location("ckpt"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"offsets/42", "commits/41", "metadata"} {
		if err := s.Write(t.Context(), name, strings.NewReader("v1")); err != nil {
			t.Fatal(err)
		}
	}
	srv.DenyPrefix("ckpt/offsets/")
	_, err = s.Read(t.Context(), "offsets/42")
	checkErr(t, err, storage.ClassPermission, "read offsets/42: access denied (S3 AccessDenied, HTTP 403")
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) || resp.Code != "AccessDenied" {
		t.Errorf("the S3 answer is not kept in the chain: %v", err)
	}
	_, err = s.List(t.Context(), "offsets")
	checkErr(t, err, storage.ClassPermission, "list offsets: access denied")
	_, err = s.Stat(t.Context(), "offsets/42")
	checkErr(t, err, storage.ClassPermission, "stat offsets/42: access denied")
	checkErr(t, s.Write(t.Context(), "offsets/43", strings.NewReader("v1")), storage.ClassPermission, "write offsets/43: access denied")
	checkErr(t, s.Delete(t.Context(), "offsets/42"), storage.ClassPermission, "delete offsets/42: access denied")
	if _, err := s.Read(t.Context(), "commits/41"); err != nil {
		t.Errorf("read outside the denied prefix: %v", err)
	}
}

func TestLocalPermissionDenied(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, dir string) {
		s, err := storage.Open(dir, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.List(t.Context(), "locked")
		checkErr(t, err, storage.ClassPermission, "list locked: permission denied")
		_, err = s.Read(t.Context(), "offsets/42")
		checkErr(t, err, storage.ClassPermission, "read offsets/42: permission denied")
		checkErr(t, s.Write(t.Context(), "locked/x", strings.NewReader("x")), storage.ClassPermission, "write locked/x: permission denied")
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("errors.Is(%v, fs.ErrPermission) = false", err)
		}
	}
	if storagetest.InUnprivilegedChild() {
		check(t, os.Getenv("STORAGE_TEST_DIR"))
		return
	}
	dir := storagetest.SharedTempDir(t)
	for _, d := range []string{"locked", "offsets"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "offsets", "42"), []byte("v1"), 0o000); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "locked"), 0o000); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		storagetest.RunUnprivileged(t, "STORAGE_TEST_DIR="+dir)
		return
	}
	check(t, dir)
}

func TestLocalTimeoutOnHungOpen(t *testing.T) {
	t.Parallel()
	// A FIFO without a writer blocks open(2) the way a hung NFS mount does.
	dir := t.TempDir()
	fifo := filepath.Join(dir, "hung")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = s.Read(ctx, "hung")
	checkErr(t, err, storage.ClassTimeout, "read hung: context deadline exceeded")
	// Release the blocked open so its goroutine ends (and closes the file it opened).
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
}

func TestS3Timeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	s, err := storage.Open("s3://ckpt-b/ckpt", storage.Options{
		S3:     storage.S3Options{Endpoint: srv.URL, Region: "us-east-1", PathStyle: true},
		Getenv: func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = s.List(ctx, "offsets")
	checkErr(t, err, storage.ClassTimeout, "list offsets: ")
}

// recorder answers every request 404 and remembers what it was asked.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	body := `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>`
	return &http.Response{
		StatusCode: 404, Status: "404 Not Found", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/xml"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: req,
	}, nil
}

func TestS3SettingsFromEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":     "AKIDFROMENV",
		"AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN":     "session-token",
		"AWS_REGION":            "eu-west-3",
		"AWS_ENDPOINT_URL_S3":   "https://objects.example.test:9443",
	}
	for _, pathStyle := range []bool{true, false} {
		rec := &recorder{}
		s, err := storage.Open("s3://ckpt-bucket/p", storage.Options{
			S3:     storage.S3Options{PathStyle: pathStyle, Transport: rec, MaxRetries: 1},
			Getenv: func(k string) string { return env[k] },
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Read(t.Context(), "offsets/1")
		checkErr(t, err, storage.ClassNotFound, "read offsets/1: ")
		if len(rec.reqs) == 0 {
			t.Fatal("no request sent")
		}
		req := rec.reqs[len(rec.reqs)-1]
		host, p := "objects.example.test:9443", "/ckpt-bucket/p/offsets/1"
		if !pathStyle {
			host, p = "ckpt-bucket.objects.example.test:9443", "/p/offsets/1"
		}
		if req.URL.Scheme != "https" || req.URL.Host != host || req.URL.Path != p {
			t.Errorf("path style %v: request to %s, want https://%s%s", pathStyle, req.URL, host, p)
		}
		auth := req.Header.Get("Authorization")
		if !strings.Contains(auth, "Credential=AKIDFROMENV/") || !strings.Contains(auth, "/eu-west-3/s3/aws4_request") {
			t.Errorf("authorization %q: want the key id and region from the environment", auth)
		}
		if req.Header.Get("X-Amz-Security-Token") != "session-token" {
			t.Errorf("session token header = %q", req.Header.Get("X-Amz-Security-Token"))
		}
	}
}

func TestClass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want storage.ErrorClass
	}{
		{nil, storage.ClassOther},
		{errors.New("boom"), storage.ClassOther},
		{fmt.Errorf("x: %w", fs.ErrPermission), storage.ClassPermission},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, storage.ClassPermission},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, storage.ClassNotFound},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), storage.ClassTimeout},
		{syscall.ETIMEDOUT, storage.ClassTimeout},
		{minio.ErrorResponse{Code: "AccessDenied", StatusCode: 403}, storage.ClassPermission},
		{minio.ErrorResponse{Code: "InvalidAccessKeyId", StatusCode: 403}, storage.ClassPermission},
		{minio.ErrorResponse{Code: "NoSuchBucket", StatusCode: 404}, storage.ClassNotFound},
		{minio.ErrorResponse{Code: "RequestTimeout", StatusCode: 400}, storage.ClassTimeout},
		{minio.ErrorResponse{Code: "InternalError", StatusCode: 500}, storage.ClassOther},
		{&storage.Error{Op: "read", Path: "x", Class: storage.ClassTimeout, Err: errors.New("slow")}, storage.ClassTimeout},
	} {
		if got := storage.Class(tc.err); got != tc.want {
			t.Errorf("Class(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	for c, want := range map[storage.ErrorClass]string{storage.ClassPermission: "permission denied", storage.ClassNotFound: "not found", storage.ClassTimeout: "timeout", storage.ClassOther: "other"} {
		if c.String() != want {
			t.Errorf("%d.String() = %q, want %q", c, c.String(), want)
		}
	}
}

// TestAzureContract: abfss:// through the official client (azblob) against Azurite behaves as
// the other backends (list, stat, read, write, delete, rename refusing an existing target).
func TestAzureContract(t *testing.T) {
	t.Parallel()
	srv := storagetest.NewAzureServer(t, "ckpt")
	s, err := storage.Open(srv.Location("pipelines/sms"), srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	testContract(t, s)
}

// TestOpenAzure: Azure locations name their container and account; a connection string for
// another account is refused before any request, naming neither its key nor its signature.
func TestOpenAzure(t *testing.T) {
	t.Parallel()
	conn := "DefaultEndpointsProtocol=https;AccountName=other;AccountKey=c2VjcmV0LWtleQ==;EndpointSuffix=core.windows.net"
	env := storage.Options{Getenv: func(k string) string {
		if k == "AZURE_STORAGE_CONNECTION_STRING" {
			return conn
		}
		return ""
	}}
	for _, loc := range []string{"abfss://ckpt@other.dfs.core.windows.net/a/b", "abfs://ckpt@other.dfs.core.windows.net",
		"wasbs://ckpt@other.blob.core.windows.net/x", "WASB://ckpt@other.blob.core.windows.net/x"} {
		s, err := storage.Open(loc, env)
		if err != nil || s.Location() != loc {
			t.Errorf("Open(%q) = %v, %v", loc, s, err)
		}
	}
	for loc, want := range map[string]string{
		"abfss://other.dfs.core.windows.net/x":          "want container@account.dfs.core.windows.net/prefix",
		"abfss://ckpt@acme.dfs.core.windows.net/x":      `AZURE_STORAGE_CONNECTION_STRING is for account "other", the location names "acme"`,
		"wasbs://@other.blob.core.windows.net/x":        "want container@account",
		"abfss://ckpt@.dfs.core.windows.net/checkpoint": "no account",
	} {
		_, err := storage.Open(loc, env)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("Open(%q) error = %v, want it to contain %q", loc, err, want)
		}
	}
}

// TestAzureErrorsHideSAS: an Azure refusal says what Azure said, and never the request URL,
// which carries a SAS token's signature when the connection string has one.
func TestAzureErrorsHideSAS(t *testing.T) {
	t.Parallel()
	srv := storagetest.NewAzureServer(t, "ckpt")
	srv.DenyPrefix("cp/offsets/")
	conn := "BlobEndpoint=" + srv.URL + ";SharedAccessSignature=sv=2024-08-04&ss=b&srt=sco&sp=rl&sig=c2VjcmV0LXNpZw%3D%3D"
	s, err := storage.Open(srv.BlobLocation("cp"), storage.Options{Getenv: func(k string) string {
		if k == "AZURE_STORAGE_CONNECTION_STRING" {
			return conn
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.List(t.Context(), "offsets")
	if storage.Class(err) != storage.ClassPermission || err.Error() != "list offsets: access denied (Azure AuthorizationPermissionMismatch, HTTP 403)" {
		t.Errorf("list = %v (class %v)", err, storage.Class(err))
	}
}
