// Package storagetest provides test doubles for package storage: an in-process S3 server that
// can answer AccessDenied for chosen prefixes, and helpers to provoke a real EACCES by running
// a test as an unprivileged user.
package storagetest

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// S3Server is an in-memory S3-compatible server (gofakes3) on a loopback port, addressed
// path-style. It is closed when the test ends.
type S3Server struct {
	URL    string // http://127.0.0.1:port
	Bucket string

	backend *s3mem.Backend
	clock   *clock

	refused  denyList
	mu       sync.Mutex
	requests map[string]int
}

// NewS3Server starts a server holding one empty bucket.
func NewS3Server(t testing.TB, bucket string) *S3Server {
	t.Helper()
	c := &clock{}
	backend := s3mem.New(s3mem.WithTimeSource(c))
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	faker := gofakes3.New(backend, gofakes3.WithTimeSource(c), gofakes3.WithTimeSkewLimit(0),
		gofakes3.WithLogger(gofakes3.DiscardLog()))
	s := &S3Server{Bucket: bucket, backend: backend, clock: c, requests: map[string]int{}}
	srv := httptest.NewServer(s.middleware(faker.Server()))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Options returns storage options that reach this server with test credentials.
func (s *S3Server) Options() storage.Options {
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":     "AKIDSTREAMWATCHTEST",
		"AWS_SECRET_ACCESS_KEY": "streamwatch-test-secret",
	}
	return storage.Options{
		S3:     storage.S3Options{Endpoint: s.URL, Region: "us-east-1", PathStyle: true, MaxRetries: 1},
		Getenv: func(k string) string { return env[k] },
	}
}

// Location is the s3:// location of a prefix in the bucket.
func (s *S3Server) Location(prefix string) string {
	return "s3://" + s.Bucket + "/" + strings.TrimPrefix(prefix, "/")
}

// DenyPrefix makes every request for a key under prefix (a bucket-relative key prefix), and
// every listing whose prefix starts with it, answer 403 AccessDenied as AWS does.
func (s *S3Server) DenyPrefix(prefix string) {
	s.refused.add(prefix)
}

// SetTime sets the server clock, which stamps LastModified on later writes. The zero time
// means the real clock.
func (s *S3Server) SetTime(t time.Time) { s.clock.set(t) }

// Requests counts the requests served of one kind: "list", "get", "head", "put", "delete".
func (s *S3Server) Requests(kind string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[kind]
}

// Upload copies every file under dir to keys under prefix, with the file's modification time
// as LastModified, so that a checkpoint written on disk can be served from S3.
func (s *S3Server) Upload(t testing.TB, dir, prefix string) {
	t.Helper()
	err := walkFiles(dir, prefix, func(key string, info fs.FileInfo, data []byte) error {
		s.clock.set(info.ModTime())
		// gofakes3 keeps Last-Modified as metadata; its own PUT handler sets it like this.
		meta := map[string]string{"Last-Modified": info.ModTime().UTC().Format(http.TimeFormat)}
		_, err := s.backend.PutObject(s.Bucket, key, meta, bytes.NewReader(data), int64(len(data)), nil)
		return err
	})
	s.clock.set(time.Time{})
	if err != nil {
		t.Fatalf("upload %s to s3: %v", dir, err)
	}
}

func (s *S3Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		q := r.URL.Query()
		kind := strings.ToLower(r.Method)
		listing := r.Method == http.MethodGet && key == "" && !q.Has("location")
		if listing {
			kind = "list"
			key = q.Get("prefix")
		}
		s.mu.Lock()
		s.requests[kind]++
		s.mu.Unlock()
		if s.refused.denies(key) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			if r.Method != http.MethodHead {
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
					`<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>STREAMWATCHTEST</RequestId><HostId>streamwatch</HostId></Error>`)
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clock is a settable gofakes3.TimeSource.
type clock struct {
	mu sync.Mutex
	at time.Time
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = t
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() {
		return time.Now().UTC()
	}
	return c.at
}

func (c *clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// NobodyID is the uid and gid RunUnprivileged runs tests as.
const NobodyID = 65534

const childEnv = "STREAMWATCH_STORAGETEST_UNPRIVILEGED"

// InUnprivilegedChild reports whether this process is a test binary re-executed by
// RunUnprivileged.
func InUnprivilegedChild() bool { return os.Getenv(childEnv) == "1" }

// RunUnprivileged re-executes the running test binary as uid and gid 65534, running only the
// test t (with env, "KEY=VALUE", added to the environment), and fails t unless that test passed
// there. The child finds itself with InUnprivilegedChild. The caller must be root; the binary is
// copied to a directory the unprivileged user can reach.
func RunUnprivileged(t *testing.T, env ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("RunUnprivileged needs root (euid %d)", os.Geteuid())
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("find test binary: %v", err)
	}
	dir := SharedTempDir(t)
	bin := filepath.Join(dir, filepath.Base(self))
	if err := copyFile(self, bin, 0o755); err != nil {
		t.Fatalf("copy test binary: %v", err)
	}
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.run="+strings.Join(parts, "/"), "-test.v", "-test.count=1", "-test.timeout=2m")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: NobodyID, Gid: NobodyID}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test %s as uid %d: %v\n%s", t.Name(), NobodyID, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("test %s as uid %d did not run:\n%s", t.Name(), NobodyID, out)
	}
	t.Logf("ran as uid %d:\n%s", NobodyID, out)
}

// SharedTempDir returns a new directory under os.TempDir with mode 0755, so that an
// unprivileged user can reach it. It is removed when the test ends, after restoring
// permissions the test may have taken away.
func SharedTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(reachableTempDir(), "streamwatch-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if d != nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// reachableTempDir is os.TempDir when every directory on its path lets others through, else
// /tmp (a TMPDIR under /root would keep the unprivileged user out).
func reachableTempDir() string {
	dir := os.TempDir()
	for p := dir; ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil || info.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if p == filepath.Dir(p) {
			return dir
		}
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// walkFiles calls fn for every file under dir with its object name (prefix + "/" + the
// slash-separated path relative to dir), its info and its content: what Upload copies.
func walkFiles(dir, prefix string, fn func(name string, info fs.FileInfo, data []byte) error) error {
	prefix = strings.Trim(prefix, "/")
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
		return fn(name, info, data)
	})
}
