// Package storage reads and writes files under a checkpoint location: a local or mounted path
// (plain path or file://, including NFS, PVC and FUSE mounts), an S3-compatible bucket
// (s3://bucket/prefix; s3a:// and s3n:// are accepted as Spark spells them), a Google Cloud
// Storage bucket (gs://bucket/prefix) or an Azure Storage container, ADLS Gen2
// (abfss://container@account.dfs.core.windows.net/prefix) or Blob
// (wasbs://container@account.blob.core.windows.net/prefix), both through the Blob API; on
// abfss:// the directories' owners, permissions and ACLs are read too (AccessControl).
//
// A Store names files relative to its root with slash-separated names ("offsets/42"); "" is the
// root itself. Errors keep their class (see Class) and say what was being done:
// "read offsets/42: permission denied".
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
	"path/filepath"
	"strings"
	"time"
)

// Store is a checkpoint location. The probe and remediation features use Write, Delete and
// Rename; the checkpoint reader uses List and Read.
type Store interface {
	// Location is the location the store was opened with, for messages.
	Location() string
	// List returns the direct children of dir, sorted by name. Sub-directories (S3 common
	// prefixes) have IsDir set. A directory that does not exist (a prefix with no keys) is a
	// ClassNotFound error.
	List(ctx context.Context, dir string) ([]Entry, error)
	// Stat describes one file or directory.
	Stat(ctx context.Context, name string) (Entry, error)
	// Read opens a file for reading; the caller closes it.
	Read(ctx context.Context, name string) (io.ReadCloser, error)
	// Write creates or replaces a file with the contents of r. Local writes go through a hidden
	// temp file and a rename, so readers never see a partial file; parent directories are created.
	Write(ctx context.Context, name string, r io.Reader) error
	// Delete removes a file. A missing file is a ClassNotFound error on every backend.
	Delete(ctx context.Context, name string) error
	// Rename moves a file, creating the target's parent directories. It refuses to replace an
	// existing target (the error matches fs.ErrExist). On S3 it is a copy then a delete, so it is
	// not atomic, and objects over 5 GiB cannot be renamed.
	Rename(ctx context.Context, from, to string) error
}

// NameLister is implemented by stores whose List costs a stat per entry (local directories).
// ListNames returns the same entries with Name and IsDir only, which such stores get without
// the stats, in no particular order; Size and ModTime are zero. Use the ListNames function
// to fall back to List.
type NameLister interface {
	ListNames(ctx context.Context, dir string) ([]Entry, error)
}

// ListNames lists dir through NameLister when s implements it, else through List.
func ListNames(ctx context.Context, s interface {
	List(ctx context.Context, dir string) ([]Entry, error)
}, dir string) ([]Entry, error) {
	if nl, ok := s.(NameLister); ok {
		return nl.ListNames(ctx, dir)
	}
	return s.List(ctx, dir)
}

// Entry describes a file or a directory.
type Entry struct {
	Name    string // base name, no slashes
	Size    int64
	ModTime time.Time // zero for S3 common prefixes
	IsDir   bool
	// ETag is an S3 object's entity tag (quotes removed), "" for local files: S3's
	// LastModified has a resolution of one second, the ETag changes with the content.
	ETag string
}

// Options configures Open. The zero value opens local paths and AWS S3 with credentials from
// the environment.
type Options struct {
	S3    S3Options
	GCS   GCSOptions
	Azure AzureOptions
	// Getenv reads the AWS_* variables, STORAGE_EMULATOR_HOST and
	// AZURE_STORAGE_CONNECTION_STRING; nil means os.Getenv. (azidentity's chain reads its own
	// AZURE_* variables from the process environment.)
	Getenv func(string) string
}

// S3Options configures s3:// locations.
type S3Options struct {
	// Endpoint is host[:port] or a URL (http:// turns TLS off). Empty: AWS_ENDPOINT_URL_S3,
	// then AWS_ENDPOINT_URL, then AWS S3.
	Endpoint string
	// Region is the signing region. Empty: AWS_REGION, then AWS_DEFAULT_REGION, then the
	// client asks the bucket for its location.
	Region string
	// PathStyle addresses buckets as endpoint/bucket/key (MinIO, Ceph, most S3-compatible
	// servers); false uses virtual-host style (bucket.endpoint/key).
	PathStyle bool
	// Transport replaces the HTTP transport (tests, proxies); nil uses a default transport.
	Transport http.RoundTripper
	// MaxRetries bounds the attempts per request; 0 means 3.
	MaxRetries int
	// ListPageSize is the number of keys asked for per list request; 0 means 1000 (the S3 maximum).
	ListPageSize int
}

// Open returns the Store for a location: "s3://bucket/prefix" (also s3a://, s3n://),
// "gs://bucket/prefix", "abfss://container@account.dfs.core.windows.net/prefix" (also abfs://,
// wasbs://container@account.blob.core.windows.net/prefix, wasb://),
// "file:///path", "file:/path" (Hadoop's spelling) or a plain path. It does not touch the
// location, so a missing checkpoint shows up on the first List or Read.
func Open(location string, opts Options) (Store, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if strings.TrimSpace(location) == "" {
		return nil, errors.New("open storage: empty location")
	}
	scheme, rest, hasScheme := strings.Cut(location, "://")
	if !hasScheme && strings.HasPrefix(location, "file:") {
		scheme, rest, hasScheme = "file", strings.TrimPrefix(location, "file:"), true
		if !strings.HasPrefix(rest, "/") {
			return nil, fmt.Errorf("open storage %s: file: location is not an absolute path", location)
		}
		rest = "/" + strings.TrimLeft(rest, "/")
		return newLocal(location, rest), nil
	}
	if !hasScheme {
		return newLocal(location, location), nil
	}
	switch strings.ToLower(scheme) {
	case "file":
		u, err := url.Parse(location)
		if err != nil {
			return nil, fmt.Errorf("open storage %s: %w", location, err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("open storage %s: file:// location names host %q; only local or mounted paths are supported", location, u.Host)
		}
		if u.Path == "" {
			return nil, fmt.Errorf("open storage %s: no path", location)
		}
		return newLocal(location, u.Path), nil
	case "s3", "s3a", "s3n":
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return nil, fmt.Errorf("open storage %s: no bucket", location)
		}
		return newS3(location, bucket, prefix, opts)
	case "gs":
		bucket, prefix, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return nil, fmt.Errorf("open storage %s: no bucket", location)
		}
		return newGCS(location, bucket, prefix, opts)
	case "abfss", "abfs", "wasbs", "wasb":
		return newAzure(location, strings.ToLower(scheme), rest, opts)
	default:
		return nil, fmt.Errorf("open storage %s: unsupported scheme %q (want a path, file://, s3://, gs://, abfss:// or wasbs://)", location, scheme)
	}
}

// cleanName turns a store-relative name into a clean slash path; "" is the root.
func cleanName(name string) (string, error) {
	if strings.Contains(name, "\\") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("invalid name %q", name)
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("invalid name %q: names are relative to the location", name)
	}
	c := path.Clean(name)
	if c == "." {
		return "", nil
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("invalid name %q: outside the location", name)
	}
	return c, nil
}

// fileName is cleanName for op on one file: the location itself ("") is refused too.
func fileName(op, name string) (string, error) {
	clean, err := cleanName(name)
	if err == nil && clean == "" {
		err = errors.New("cannot " + op + " the location itself")
	}
	if err != nil {
		return "", &Error{Op: op, Path: name, Class: ClassOther, Err: err}
	}
	return clean, nil
}

// renameNames is cleanName for a rename's two files, neither of which may be the location
// itself, and what errors call the rename ("from to to").
func renameNames(from, to string) (cf, ct, what string, err error) {
	cf, err1 := cleanName(from)
	ct, err2 := cleanName(to)
	what = from + " to " + to
	if err := errors.Join(err1, err2); err != nil {
		return "", "", "", &Error{Op: "rename", Path: what, Class: ClassOther, Err: err}
	}
	if cf == "" || ct == "" {
		return "", "", "", &Error{Op: "rename", Path: what, Class: ClassOther, Err: errors.New("cannot rename the location itself")}
	}
	return cf, ct, cf + " to " + ct, nil
}

// objectReader is an object store's download: its read errors keep their class and name the file.
type objectReader struct {
	body io.ReadCloser
	name string
}

func (r *objectReader) Read(p []byte) (int, error) {
	n, err := r.body.Read(p)
	if err != nil && err != io.EOF {
		return n, wrap("read", r.name, err)
	}
	return n, err
}

func (r *objectReader) Close() error { return r.body.Close() }

// ReadAll reads a whole file, refusing files larger than limit bytes (limit <= 0: no limit).
func ReadAll(ctx context.Context, s interface {
	Read(ctx context.Context, name string) (io.ReadCloser, error)
}, name string, limit int64) ([]byte, error) {
	rc, err := s.Read(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var r io.Reader = rc
	if limit > 0 {
		r = io.LimitReader(rc, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if limit > 0 && int64(len(data)) > limit {
		return nil, &Error{Op: "read", Path: name, Class: ClassOther, Err: fmt.Errorf("larger than the %d-byte limit", limit)}
	}
	return data, nil
}

// Copy copies one file, possibly between stores (e.g. a checkpoint file to a backup location).
func Copy(ctx context.Context, dst Store, dstName string, src Store, srcName string) error {
	rc, err := src.Read(ctx, srcName)
	if err != nil {
		return err
	}
	defer rc.Close()
	return dst.Write(ctx, dstName, rc)
}

// localPath joins a clean name to a root directory.
func localPath(root, name string) string {
	if name == "" {
		return root
	}
	return filepath.Join(root, filepath.FromSlash(name))
}

// objectRoot is where an object store's location starts, which the S3, GCS and Azure stores
// embed: the location as given, and the key prefix it stands for ("" or ending in "/").
type objectRoot struct {
	location string
	prefix   string
}

func (r objectRoot) Location() string { return r.location }

// display is name as errors show it: the location itself for "".
func (r objectRoot) display(name string) string {
	if name == "" {
		return r.location
	}
	return name
}

// dirEntry is Stat's answer for directory clean once a listing under its prefix found
// something (found) or failed (err); root (the bucket or container) names the location's own.
func (r objectRoot) dirEntry(clean, root string, found bool, err error) (Entry, error) {
	if err != nil {
		return Entry{}, wrap("stat", r.display(clean), err)
	}
	if !found {
		return Entry{}, &Error{Op: "stat", Path: r.display(clean), Class: ClassNotFound, Err: os.ErrNotExist}
	}
	base := path.Base("/" + strings.TrimSuffix(r.dirPrefix(clean), "/"))
	if base == "/" {
		base = root
	}
	return Entry{Name: base, IsDir: true}, nil
}

// dirPrefix is the key prefix of a directory name ("" is the root).
func (r objectRoot) dirPrefix(name string) string {
	if name == "" {
		return r.prefix
	}
	return r.prefix + name + "/"
}
