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

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
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
type gcsStore struct {
	location string
	bucket   *gcs.BucketHandle
	prefix   string // "" or ending in "/"
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
	}
	// The client dials nothing until the first request; credentials are looked up here.
	client, err := gcs.NewClient(context.Background(), copts...)
	if err != nil {
		return nil, fmt.Errorf("open storage %s: %w", location, err)
	}
	prefix = strings.Trim(path.Clean("/"+prefix), "/")
	if prefix != "" {
		prefix += "/"
	}
	return &gcsStore{location: location, bucket: client.Bucket(bucket), prefix: prefix}, nil
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

func (s *gcsStore) Location() string { return s.location }

func (s *gcsStore) display(name string) string {
	if name == "" {
		return s.location
	}
	return name
}

func (s *gcsStore) dirPrefix(name string) string {
	if name == "" {
		return s.prefix
	}
	return s.prefix + name + "/"
}

func (s *gcsStore) List(ctx context.Context, dir string) ([]Entry, error) {
	name, err := cleanName(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Class: ClassOther, Err: err}
	}
	p := s.dirPrefix(name)
	it := s.bucket.Objects(ctx, &gcs.Query{Prefix: p, Delimiter: "/"})
	found := false
	var out []Entry
	for {
		a, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, wrap("list", s.display(name), err)
		}
		found = true
		if a.Prefix != "" {
			if rel := strings.TrimSuffix(strings.TrimPrefix(a.Prefix, p), "/"); rel != "" {
				out = append(out, Entry{Name: rel, IsDir: true})
			}
			continue
		}
		rel := strings.TrimPrefix(a.Name, p)
		if rel == "" || strings.HasSuffix(rel, "/") { // a "directory marker" object
			continue
		}
		out = append(out, gcsEntry(rel, a))
	}
	if !found {
		return nil, &Error{Op: "list", Path: s.display(name), Class: ClassNotFound, Err: errors.New("no such prefix")}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func gcsEntry(name string, a *gcs.ObjectAttrs) Entry {
	return Entry{Name: name, Size: a.Size, ModTime: a.Updated, ETag: strings.Trim(a.Etag, `"`)}
}

func (s *gcsStore) Stat(ctx context.Context, name string) (Entry, error) {
	clean, err := cleanName(name)
	if err != nil {
		return Entry{}, &Error{Op: "stat", Path: name, Class: ClassOther, Err: err}
	}
	if clean != "" {
		a, err := s.bucket.Object(s.prefix + clean).Attrs(ctx)
		if err == nil {
			return gcsEntry(path.Base(clean), a), nil
		}
		if classify(err) != ClassNotFound {
			return Entry{}, wrap("stat", clean, err)
		}
	}
	it := s.bucket.Objects(ctx, &gcs.Query{Prefix: s.dirPrefix(clean)})
	it.PageInfo().MaxSize = 1
	if _, err := it.Next(); errors.Is(err, iterator.Done) {
		return Entry{}, &Error{Op: "stat", Path: s.display(clean), Class: ClassNotFound, Err: os.ErrNotExist}
	} else if err != nil {
		return Entry{}, wrap("stat", s.display(clean), err)
	}
	base := path.Base("/" + strings.TrimSuffix(s.dirPrefix(clean), "/"))
	if base == "/" {
		base = s.bucket.BucketName()
	}
	return Entry{Name: base, IsDir: true}, nil
}

func (s *gcsStore) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	clean, err := cleanName(name)
	if err == nil && clean == "" {
		err = errors.New("cannot read the location itself")
	}
	if err != nil {
		return nil, &Error{Op: "read", Path: name, Class: ClassOther, Err: err}
	}
	// ReadCompressed keeps gzip-encoded objects as stored, like the other backends.
	r, err := s.bucket.Object(s.prefix + clean).ReadCompressed(true).NewReader(ctx)
	if err != nil {
		return nil, wrap("read", clean, err)
	}
	return &gcsReader{r: r, name: clean}, nil
}

type gcsReader struct {
	r    *gcs.Reader
	name string
}

func (r *gcsReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		return n, wrap("read", r.name, err)
	}
	return n, err
}

func (r *gcsReader) Close() error { return r.r.Close() }

func (s *gcsStore) Write(ctx context.Context, name string, r io.Reader) error {
	clean, err := cleanName(name)
	if err == nil && clean == "" {
		err = errors.New("cannot write the location itself")
	}
	if err != nil {
		return &Error{Op: "write", Path: name, Class: ClassOther, Err: err}
	}
	// A cancelled context aborts the upload, so a failed copy leaves no partial object.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := s.bucket.Object(s.prefix + clean).NewWriter(wctx)
	w.ContentType = "application/octet-stream"
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		_ = w.Close()
		return wrap("write", clean, err)
	}
	return wrap("write", clean, w.Close())
}

func (s *gcsStore) Delete(ctx context.Context, name string) error {
	clean, err := cleanName(name)
	if err == nil && clean == "" {
		err = errors.New("cannot delete the location itself")
	}
	if err != nil {
		return &Error{Op: "delete", Path: name, Class: ClassOther, Err: err}
	}
	return wrap("delete", clean, s.bucket.Object(s.prefix+clean).Delete(ctx))
}

func (s *gcsStore) Rename(ctx context.Context, from, to string) error {
	cf, err1 := cleanName(from)
	ct, err2 := cleanName(to)
	what := from + " to " + to
	if err := errors.Join(err1, err2); err != nil {
		return &Error{Op: "rename", Path: what, Class: ClassOther, Err: err}
	}
	if cf == "" || ct == "" {
		return &Error{Op: "rename", Path: what, Class: ClassOther, Err: errors.New("cannot rename the location itself")}
	}
	what = cf + " to " + ct
	src := s.bucket.Object(s.prefix + cf)
	if _, err := src.Attrs(ctx); err != nil {
		return wrap("rename", what, err)
	}
	// Stat the target first (not every GCS-compatible server honours the precondition), and
	// keep the copy conditional on the target not existing, so two renames cannot both win.
	if _, err := s.bucket.Object(s.prefix + ct).Attrs(ctx); err == nil {
		return &Error{Op: "rename", Path: what, Class: ClassOther, Err: os.ErrExist}
	} else if classify(err) != ClassNotFound {
		return wrap("rename", what, err)
	}
	dst := s.bucket.Object(s.prefix + ct).If(gcs.Conditions{DoesNotExist: true})
	if _, err := dst.CopierFrom(src).Run(ctx); err != nil {
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed {
			return &Error{Op: "rename", Path: what, Class: ClassOther, Err: os.ErrExist}
		}
		return wrap("rename", what, err)
	}
	return wrap("rename", what, src.Delete(ctx))
}
