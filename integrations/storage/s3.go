package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Store is a prefix in an S3-compatible bucket. Keys are prefix + name; "directories" are
// key prefixes ending in "/".
type s3Store struct {
	objectRoot
	bucket   string
	client   *minio.Client
	pageSize int
}

func newS3(location, bucket, prefix string, opts Options) (Store, error) {
	getenv, o := opts.Getenv, opts.S3
	endpoint := firstNonEmpty(o.Endpoint, getenv("AWS_ENDPOINT_URL_S3"), getenv("AWS_ENDPOINT_URL"))
	onAWS := endpoint == ""
	if onAWS {
		endpoint = "s3.amazonaws.com"
	}
	host, secure := endpoint, true
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil {
			return nil, fmt.Errorf("open storage %s: endpoint %q: %w", location, endpoint, err)
		}
		switch u.Scheme {
		case "http":
			secure = false
		case "https":
		default:
			return nil, fmt.Errorf("open storage %s: endpoint %q: scheme must be http or https", location, endpoint)
		}
		if strings.Trim(u.Path, "/") != "" {
			return nil, fmt.Errorf("open storage %s: endpoint %q: a path in the endpoint is not supported", location, endpoint)
		}
		host = u.Host
	}
	lookup := minio.BucketLookupDNS
	if o.PathStyle {
		lookup = minio.BucketLookupPath
	}
	retries := o.MaxRetries
	if retries <= 0 {
		retries = 3
	}
	pageSize := o.ListPageSize
	if pageSize <= 0 || pageSize > 1000 {
		pageSize = 1000
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        awsCredentials(getenv, onAWS),
		Secure:       secure,
		Transport:    o.Transport,
		Region:       firstNonEmpty(o.Region, getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION")),
		BucketLookup: lookup,
		MaxRetries:   retries,
	})
	if err != nil {
		return nil, fmt.Errorf("open storage %s: %w", location, err)
	}
	prefix = strings.Trim(path.Clean("/"+prefix), "/")
	if prefix != "" {
		prefix += "/"
	}
	return &s3Store{objectRoot: objectRoot{location, prefix}, bucket: bucket, client: client, pageSize: pageSize}, nil
}

// awsCredentials resolves credentials the way AWS tools do: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; then the shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE); then, on AWS or when the environment names a
// web identity or container credentials, IAM roles. With none of them requests are anonymous.
func awsCredentials(getenv func(string) string, onAWS bool) *credentials.Credentials {
	providers := []credentials.Provider{
		&envCredentials{getenv: getenv},
		&credentials.FileAWSCredentials{
			Filename: getenv("AWS_SHARED_CREDENTIALS_FILE"),
			Profile:  getenv("AWS_PROFILE"),
		},
	}
	if onAWS || getenv("AWS_WEB_IDENTITY_TOKEN_FILE") != "" ||
		getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") != "" || getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI") != "" {
		providers = append(providers, &credentials.IAM{})
	}
	return credentials.NewChainCredentials(providers)
}

// envCredentials reads the AWS variables through an injectable getenv.
type envCredentials struct{ getenv func(string) string }

func (e *envCredentials) Retrieve() (credentials.Value, error) {
	id := firstNonEmpty(e.getenv("AWS_ACCESS_KEY_ID"), e.getenv("AWS_ACCESS_KEY"))
	secret := firstNonEmpty(e.getenv("AWS_SECRET_ACCESS_KEY"), e.getenv("AWS_SECRET_KEY"))
	if id == "" || secret == "" {
		return credentials.Value{SignerType: credentials.SignatureAnonymous}, errors.New("AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY not set")
	}
	return credentials.Value{
		AccessKeyID:     id,
		SecretAccessKey: secret,
		SessionToken:    e.getenv("AWS_SESSION_TOKEN"),
		SignerType:      credentials.SignatureV4,
	}, nil
}

func (e *envCredentials) RetrieveWithCredContext(*credentials.CredContext) (credentials.Value, error) {
	return e.Retrieve()
}

// IsExpired is true so that changed variables are picked up; reading them is cheap.
func (e *envCredentials) IsExpired() bool { return true }

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func (s *s3Store) List(ctx context.Context, dir string) ([]Entry, error) {
	name, err := cleanName(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Class: ClassOther, Err: err}
	}
	p := s.dirPrefix(name)
	found := false
	var out []Entry
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: p, MaxKeys: s.pageSize}) {
		if obj.Err != nil {
			return nil, wrap("list", s.display(name), obj.Err)
		}
		found = true
		rel := strings.TrimPrefix(obj.Key, p)
		switch {
		case rel == "": // a "directory marker" object
		case strings.HasSuffix(rel, "/"):
			out = append(out, Entry{Name: strings.TrimSuffix(rel, "/"), IsDir: true})
		default:
			out = append(out, Entry{Name: rel, Size: obj.Size, ModTime: obj.LastModified, ETag: strings.Trim(obj.ETag, `"`)})
		}
	}
	if !found {
		return nil, &Error{Op: "list", Path: s.display(name), Class: ClassNotFound, Err: errors.New("no such prefix")}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	// Some servers repeat a common prefix on the next page; keep one.
	uniq := out[:0]
	for i, e := range out {
		if i > 0 && e.Name == out[i-1].Name && e.IsDir == out[i-1].IsDir {
			continue
		}
		uniq = append(uniq, e)
	}
	return uniq, nil
}

// hasKeys reports whether any key starts with p.
func (s *s3Store) hasKeys(ctx context.Context, p string) (bool, error) {
	for obj := range s.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: p, MaxKeys: 1}) {
		if obj.Err != nil {
			return false, obj.Err
		}
		return true, nil
	}
	return false, nil
}

func (s *s3Store) Stat(ctx context.Context, name string) (Entry, error) {
	clean, err := cleanName(name)
	if err != nil {
		return Entry{}, &Error{Op: "stat", Path: name, Class: ClassOther, Err: err}
	}
	if clean != "" {
		info, err := s.client.StatObject(ctx, s.bucket, s.prefix+clean, minio.StatObjectOptions{})
		if err == nil {
			return Entry{Name: path.Base(clean), Size: info.Size, ModTime: info.LastModified, ETag: strings.Trim(info.ETag, `"`)}, nil
		}
		if classify(err) != ClassNotFound {
			return Entry{}, wrap("stat", clean, err)
		}
	}
	ok, err := s.hasKeys(ctx, s.dirPrefix(clean))
	return s.dirEntry(clean, s.bucket, ok, err)
}

func (s *s3Store) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	clean, err := fileName("read", name)
	if err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+clean, minio.GetObjectOptions{})
	if err != nil {
		return nil, wrap("read", clean, err)
	}
	// GetObject is lazy; Stat sends the GET so that a missing or forbidden key fails here.
	if _, err := obj.Stat(); err != nil {
		obj.Close()
		return nil, wrap("read", clean, err)
	}
	return &objectReader{body: obj, name: clean}, nil
}

func (s *s3Store) Write(ctx context.Context, name string, r io.Reader) error {
	clean, err := fileName("write", name)
	if err != nil {
		return err
	}
	r, size, err := sized(r)
	if err != nil {
		return wrap("write", clean, err)
	}
	_, err = s.client.PutObject(ctx, s.bucket, s.prefix+clean, r, size, putOptions(size))
	return wrap("write", clean, err)
}

// putOptions are the upload options for an object of size bytes (-1: unknown).
//
// Over plain http minio-go signs uploads with an aws-chunked streaming signature. For an empty
// object that stream still holds its final signed chunk, but minio-go declares its length as 0,
// so net/http sends it with Transfer-Encoding: chunked and S3 answers 411 MissingContentLength.
// An empty object goes out instead as a plain PUT with Content-Length: 0, an unsigned payload
// and a Content-MD5, which the server checks.
func putOptions(size int64) minio.PutObjectOptions {
	o := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	if size == 0 {
		o.DisableContentSha256 = true
		o.SendContentMd5 = true
	}
	return o
}

// smallWrite is the size up to which a reader of unknown length is buffered, so that the upload
// is one PUT with a known length.
const smallWrite = 16 << 20

// sized finds the length of r, buffering up to smallWrite bytes when it cannot be known
// otherwise; -1 means larger than that (a streamed multipart upload).
func sized(r io.Reader) (io.Reader, int64, error) {
	switch v := r.(type) {
	case interface{ Len() int }:
		return r, int64(v.Len()), nil
	case *os.File:
		if info, err := v.Stat(); err == nil && info.Mode().IsRegular() {
			if off, err := v.Seek(0, io.SeekCurrent); err == nil {
				return r, info.Size() - off, nil
			}
		}
	}
	buf, err := io.ReadAll(io.LimitReader(r, smallWrite+1))
	if err != nil {
		return nil, 0, err
	}
	if len(buf) <= smallWrite {
		return bytes.NewReader(buf), int64(len(buf)), nil
	}
	return io.MultiReader(bytes.NewReader(buf), r), -1, nil
}

func (s *s3Store) Delete(ctx context.Context, name string) error {
	clean, err := fileName("delete", name)
	if err != nil {
		return err
	}
	// S3 deletes of missing keys succeed; stat first so that every backend reports them.
	if _, err := s.client.StatObject(ctx, s.bucket, s.prefix+clean, minio.StatObjectOptions{}); err != nil {
		return wrap("delete", clean, err)
	}
	return wrap("delete", clean, s.client.RemoveObject(ctx, s.bucket, s.prefix+clean, minio.RemoveObjectOptions{}))
}

func (s *s3Store) Rename(ctx context.Context, from, to string) error {
	cf, ct, what, err := renameNames(from, to)
	if err != nil {
		return err
	}
	if _, err := s.client.StatObject(ctx, s.bucket, s.prefix+cf, minio.StatObjectOptions{}); err != nil {
		return wrap("rename", what, err)
	}
	if _, err := s.client.StatObject(ctx, s.bucket, s.prefix+ct, minio.StatObjectOptions{}); err == nil {
		return &Error{Op: "rename", Path: what, Class: ClassOther, Err: os.ErrExist}
	} else if classify(err) != ClassNotFound {
		return wrap("rename", what, err)
	}
	_, err = s.client.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: s.bucket, Object: s.prefix + ct},
		minio.CopySrcOptions{Bucket: s.bucket, Object: s.prefix + cf})
	if err != nil {
		return wrap("rename", what, err)
	}
	return wrap("rename", what, s.client.RemoveObject(ctx, s.bucket, s.prefix+cf, minio.RemoveObjectOptions{}))
}
