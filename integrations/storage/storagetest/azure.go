package storagetest

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/internal/testazurite"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// AzureServer is a real Azurite (internal/testazurite) holding one empty container, reached by
// the official client through a proxy that can answer 403 for chosen prefixes. Azurite is
// stopped when the test ends.
type AzureServer struct {
	URL       string // the Blob service URL through the proxy, account included
	Container string
	client    *container.Client

	refused denyList
}

// NewAzureServer starts Azurite and creates the container.
func NewAzureServer(t testing.TB, ctr string) *AzureServer {
	t.Helper()
	az := testazurite.Start(t)
	target, err := url.Parse(az.URL)
	if err != nil {
		t.Fatal(err)
	}
	s := &AzureServer{Container: ctr}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	hs := httptest.NewServer(s.deny(proxy))
	t.Cleanup(hs.Close)
	s.URL = hs.URL + target.Path
	cred, err := azblob.NewSharedKeyCredential(testazurite.Account, testazurite.Key)
	if err != nil {
		t.Fatal(err)
	}
	s.client, err = container.NewClientWithSharedKeyCredential(az.URL+"/"+ctr, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.Create(t.Context(), nil); err != nil {
		t.Fatalf("create container %s: %v", ctr, err)
	}
	return s
}

// DenyPrefix makes every request for a blob under prefix (a container-relative name prefix),
// and every listing whose prefix starts with it, answer 403 AuthorizationPermissionMismatch as
// Azure does when the identity's role or ACL does not allow the operation.
func (s *AzureServer) DenyPrefix(prefix string) {
	s.refused.add(prefix)
}

func (s *AzureServer) deny(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /devstoreaccount1/<container>/<blob>
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
		var names []string
		if len(parts) == 3 {
			names = append(names, parts[2])
		}
		if r.URL.Query().Has("prefix") {
			names = append(names, r.URL.Query().Get("prefix"))
		}
		if src := r.Header.Get("x-ms-copy-source"); src != "" {
			if u, err := url.Parse(src); err == nil {
				if p := strings.SplitN(strings.TrimPrefix(u.Path, "/"), "/", 3); len(p) == 3 {
					names = append(names, p[2])
				}
			}
		}
		if s.refused.denies(names...) {
			w.Header().Set("Content-Type", "application/xml")
			w.Header().Set("x-ms-error-code", "AuthorizationPermissionMismatch")
			w.WriteHeader(http.StatusForbidden)
			if r.Method != http.MethodHead {
				fmt.Fprint(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthorizationPermissionMismatch</Code><Message>This request is not authorized to perform this operation using this permission.</Message></Error>`)
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Options returns storage options that reach this server the way a user reaches Azurite:
// AZURE_STORAGE_CONNECTION_STRING with its BlobEndpoint.
func (s *AzureServer) Options() storage.Options {
	conn := (&testazurite.Server{URL: s.URL}).ConnectionString()
	return storage.Options{Getenv: func(k string) string {
		if k == "AZURE_STORAGE_CONNECTION_STRING" {
			return conn
		}
		return ""
	}}
}

// Location is the abfss:// location of a prefix in the container.
func (s *AzureServer) Location(prefix string) string {
	return "abfss://" + s.Container + "@" + testazurite.Account + ".dfs.core.windows.net/" + strings.TrimPrefix(prefix, "/")
}

// Upload copies every file under dir to blobs under prefix. Azure stamps Last-Modified itself
// (to the second), so Upload then sets each local file's modification time to its blob's: the
// directory and the container read alike.
func (s *AzureServer) Upload(t testing.TB, dir, prefix string) {
	t.Helper()
	s.upload(t, dir, prefix, false)
}

// UploadInOrder is Upload keeping the order of the files' modification times: oldest first,
// files whose times differ in different seconds (it waits for the clock to turn a second
// between them), so keep their number small.
func (s *AzureServer) UploadInOrder(t testing.TB, dir, prefix string) {
	t.Helper()
	s.upload(t, dir, prefix, true)
}

func (s *AzureServer) upload(t testing.TB, dir, prefix string, ordered bool) {
	t.Helper()
	prefix = strings.Trim(prefix, "/")
	type file struct {
		path, name string
		mod        time.Time
	}
	var files []file
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
		name := filepath.ToSlash(rel)
		if prefix != "" {
			name = prefix + "/" + name
		}
		files = append(files, file{p, name, info.ModTime()})
		return nil
	})
	if err != nil {
		t.Fatalf("upload %s to azurite: %v", dir, err)
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	var last time.Time // the previous blob's Last-Modified
	for i, f := range files {
		if ordered && i > 0 && f.mod.After(files[i-1].mod) {
			wait.For(t, 5*time.Second, "the clock to pass "+last.String(), func() bool {
				return time.Now().Truncate(time.Second).After(last)
			})
		}
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.client.NewBlockBlobClient(f.name).UploadBuffer(t.Context(), data, nil); err != nil {
			t.Fatalf("upload %s: %v", f.name, err)
		}
		last = s.modTime(t, f.name)
		if err := os.Chtimes(f.path, last, last); err != nil {
			t.Fatal(err)
		}
	}
}

// Put stores one blob.
func (s *AzureServer) Put(t testing.TB, name string, data []byte) {
	t.Helper()
	if _, err := s.client.NewBlockBlobClient(name).UploadBuffer(t.Context(), bytes.Clone(data), nil); err != nil {
		t.Fatalf("put %s: %v", name, err)
	}
}

func (s *AzureServer) modTime(t testing.TB, name string) time.Time {
	t.Helper()
	props, err := s.client.NewBlobClient(name).GetProperties(t.Context(), nil)
	if err != nil || props.LastModified == nil {
		t.Fatalf("properties of %s: %v", name, err)
	}
	return *props.LastModified
}

// BlobLocation is the wasbs:// location of a prefix in the container (a flat namespace: no ACLs).
func (s *AzureServer) BlobLocation(prefix string) string {
	return "wasbs://" + s.Container + "@" + testazurite.Account + ".blob.core.windows.net/" + strings.TrimPrefix(prefix, "/")
}
