package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	raw "google.golang.org/api/storage/v1"
)

// GCSOptions configures gs:// locations.
type GCSOptions struct {
	// Endpoint is a URL or host[:port] of a GCS-compatible JSON API (http:// for an emulator).
	// Empty: STORAGE_EMULATOR_HOST, then Google's. An emulator is reached without credentials;
	// Google with the usual ones (GOOGLE_APPLICATION_CREDENTIALS, workload identity, metadata).
	Endpoint string
	// Transport replaces the HTTP transport of an emulator or http:// endpoint (tests).
	Transport http.RoundTripper
}

// gcsStore is a prefix in a GCS bucket. Object names are prefix + name; "directories" are
// name prefixes ending in "/".
//
// It uses Google's generated JSON API client (google.golang.org/api/storage/v1) rather than
// cloud.google.com/go/storage: the same API, auth and retries for what a Store needs, without
// the gRPC transport, xDS and OpenTelemetry that the latter links in (it doubled the binary).
type gcsStore struct {
	objectRoot
	bucket string
	svc    *raw.Service
}

func newGCS(location, bucket, prefix string, opts Options) (Store, error) {
	endpoint := firstNonEmpty(opts.GCS.Endpoint, opts.Getenv("STORAGE_EMULATOR_HOST"))
	var copts []option.ClientOption
	if endpoint != "" {
		u, err := gcsEndpoint(endpoint)
		if err != nil {
			return nil, fmt.Errorf("open storage %s: endpoint %q: %w", location, endpoint, err)
		}
		copts = append(copts, option.WithEndpoint(u))
		// An emulator (or any plain-http endpoint) takes no credentials.
		if opts.GCS.Endpoint == "" || strings.HasPrefix(u, "http://") {
			copts = append(copts, option.WithoutAuthentication())
			if opts.GCS.Transport != nil {
				copts = append(copts, option.WithHTTPClient(&http.Client{Transport: opts.GCS.Transport}))
			}
		}
	} else {
		copts = append(copts, option.WithScopes(raw.DevstorageReadWriteScope))
	}
	// Nothing is dialled until the first request; credentials are looked up here.
	svc, err := raw.NewService(context.Background(), copts...)
	if err != nil {
		return nil, fmt.Errorf("open storage %s: %w", location, err)
	}
	prefix = strings.Trim(path.Clean("/"+prefix), "/")
	if prefix != "" {
		prefix += "/"
	}
	return &gcsStore{objectRoot: objectRoot{location, prefix}, bucket: bucket, svc: svc}, nil
}

// gcsEndpoint turns host[:port] or a URL into the JSON API base URL the client wants.
func gcsEndpoint(endpoint string) (string, error) {
	if !strings.Contains(endpoint, "://") {
		endpoint = "http://" + endpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("scheme must be http or https")
	}
	if u.Host == "" {
		return "", errors.New("no host")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/storage/v1") {
		u.Path += "/storage/v1"
	}
	u.Path += "/"
	return u.String(), nil
}

func (s *gcsStore) List(ctx context.Context, dir string) ([]Entry, error) {
	name, err := cleanName(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Class: ClassOther, Err: err}
	}
	p := s.dirPrefix(name)
	found := false
	var out []Entry
	err = s.svc.Objects.List(s.bucket).Prefix(p).Delimiter("/").Pages(ctx, func(page *raw.Objects) error {
		for _, sub := range page.Prefixes {
			found = true
			if rel := strings.TrimSuffix(strings.TrimPrefix(sub, p), "/"); rel != "" {
				out = append(out, Entry{Name: rel, IsDir: true})
			}
		}
		for _, o := range page.Items {
			found = true
			rel := strings.TrimPrefix(o.Name, p)
			if rel == "" || strings.HasSuffix(rel, "/") { // a "directory marker" object
				continue
			}
			out = append(out, gcsEntry(rel, o))
		}
		return nil
	})
	if err != nil {
		return nil, wrap("list", s.display(name), err)
	}
	if !found {
		return nil, &Error{Op: "list", Path: s.display(name), Class: ClassNotFound, Err: errors.New("no such prefix")}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func gcsEntry(name string, o *raw.Object) Entry {
	mod, _ := time.Parse(time.RFC3339Nano, o.Updated)
	return Entry{Name: name, Size: int64(o.Size), ModTime: mod, ETag: strings.Trim(o.Etag, `"`)}
}

func (s *gcsStore) attrs(ctx context.Context, name string) (*raw.Object, error) {
	return s.svc.Objects.Get(s.bucket, s.prefix+name).Context(ctx).Do()
}

func (s *gcsStore) Stat(ctx context.Context, name string) (Entry, error) {
	clean, err := cleanName(name)
	if err != nil {
		return Entry{}, &Error{Op: "stat", Path: name, Class: ClassOther, Err: err}
	}
	if clean != "" {
		o, err := s.attrs(ctx, clean)
		if err == nil {
			return gcsEntry(path.Base(clean), o), nil
		}
		if classify(err) != ClassNotFound {
			return Entry{}, wrap("stat", clean, err)
		}
	}
	page, err := s.svc.Objects.List(s.bucket).Prefix(s.dirPrefix(clean)).MaxResults(1).Context(ctx).Do()
	return s.dirEntry(clean, s.bucket, err == nil && (len(page.Items) > 0 || len(page.Prefixes) > 0), err)
}

func (s *gcsStore) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	clean, err := fileName("read", name)
	if err != nil {
		return nil, err
	}
	resp, err := s.svc.Objects.Get(s.bucket, s.prefix+clean).Context(ctx).Download()
	if err != nil {
		return nil, wrap("read", clean, err)
	}
	return &objectReader{body: resp.Body, name: clean}, nil
}

func (s *gcsStore) Write(ctx context.Context, name string, r io.Reader) error {
	clean, err := fileName("write", name)
	if err != nil {
		return err
	}
	obj := &raw.Object{Name: s.prefix + clean, ContentType: "application/octet-stream"}
	_, err = s.svc.Objects.Insert(s.bucket, obj).Media(r, googleapi.ContentType("application/octet-stream")).Context(ctx).Do()
	return wrap("write", clean, err)
}

func (s *gcsStore) Delete(ctx context.Context, name string) error {
	clean, err := fileName("delete", name)
	if err != nil {
		return err
	}
	return wrap("delete", clean, s.svc.Objects.Delete(s.bucket, s.prefix+clean).Context(ctx).Do())
}

func (s *gcsStore) Rename(ctx context.Context, from, to string) error {
	cf, ct, what, err := renameNames(from, to)
	if err != nil {
		return err
	}
	if _, err := s.attrs(ctx, cf); err != nil {
		return wrap("rename", what, err)
	}
	// Stat the target first (not every GCS-compatible server honours the precondition), and
	// keep the copy conditional on the target not existing, so two renames cannot both win.
	if _, err := s.attrs(ctx, ct); err == nil {
		return &Error{Op: "rename", Path: what, Class: ClassOther, Err: os.ErrExist}
	} else if classify(err) != ClassNotFound {
		return wrap("rename", what, err)
	}
	// Rewrite (not copy) so that large objects and objects in other storage classes move too.
	call := s.svc.Objects.Rewrite(s.bucket, s.prefix+cf, s.bucket, s.prefix+ct, &raw.Object{}).IfGenerationMatch(0).Context(ctx)
	for {
		res, err := call.Do()
		if err != nil {
			var ge *googleapi.Error
			if errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed {
				return &Error{Op: "rename", Path: what, Class: ClassOther, Err: os.ErrExist}
			}
			return wrap("rename", what, err)
		}
		if res.Done {
			break
		}
		call = call.RewriteToken(res.RewriteToken)
	}
	return wrap("rename", what, s.svc.Objects.Delete(s.bucket, s.prefix+cf).Context(ctx).Do())
}

// Bucket is gs://bucket, the resource whose IAM policy TestPermissions asks about.
func (s *gcsStore) Bucket() string { return "gs://" + s.bucket }

// TestPermissions asks GCS which of perms the caller holds on the bucket
// (buckets.testIamPermissions), without writing anything. The answer is about the identity
// streamwatch calls with, not about any other principal (the job's service account).
func (s *gcsStore) TestPermissions(ctx context.Context, perms []string) ([]string, error) {
	res, err := s.svc.Buckets.TestIamPermissions(s.bucket, perms).Context(ctx).Do()
	if err != nil {
		return nil, wrap("test permissions", s.Bucket(), err)
	}
	return res.Permissions, nil
}
