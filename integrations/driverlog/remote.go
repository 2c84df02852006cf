package driverlog

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// isRemote reports whether a logs.paths entry is an object-store prefix or glob
// (s3://bucket/driver/*, gs://bucket/logs/driver/stderr*, abfss://…/driver/) rather than a local path.
func isRemote(pattern string) bool { return strings.Contains(pattern, "://") }

// remoteCandidates lists the objects a remote pattern matches: the last path element is a
// glob over the objects under the prefix before it; a pattern ending in "/" means every object
// directly under that prefix.
func (s *scanner) remoteCandidates(ctx context.Context, pattern string) []candidate {
	dir, glob := pattern, "*"
	if !strings.HasSuffix(pattern, "/") {
		i := strings.LastIndex(pattern, "/")
		dir, glob = pattern[:i], pattern[i+1:]
	}
	dir = strings.TrimSuffix(dir, "/")
	if _, err := path.Match(glob, ""); err != nil {
		s.fail(fmt.Errorf("bad log path pattern %q: %w", pattern, err))
		return nil
	}
	store, err := storage.Open(dir, s.opt.Storage)
	if err != nil {
		s.errorf("%v", err)
		return nil
	}
	entries, err := store.List(ctx, "")
	if err != nil {
		s.errorf("list %s: %v", dir, err)
		return nil
	}
	var out []candidate
	for _, e := range entries {
		if ok, _ := path.Match(glob, e.Name); ok && !e.IsDir {
			out = append(out, candidate{path: dir + "/" + e.Name, info: objectInfo{e}, store: store, object: e.Name})
		}
	}
	if len(out) == 0 {
		s.skip(Skip{Kind: SkipNoObject, Path: pattern})
	}
	return out
}

// objectInfo is an object's listing as an fs.FileInfo, for ordering by modification time.
type objectInfo struct{ e storage.Entry }

func (o objectInfo) Name() string       { return o.e.Name }
func (o objectInfo) Size() int64        { return o.e.Size }
func (o objectInfo) Mode() fs.FileMode  { return 0o444 }
func (o objectInfo) ModTime() time.Time { return o.e.ModTime }
func (o objectInfo) IsDir() bool        { return false }
func (o objectInfo) Sys() any           { return nil }

// openObject reads the newest maxBytes of an object, gunzipped when its name ends in .gz. The
// Store has no range reads, so the object is streamed and only its tail kept.
func openObject(ctx context.Context, store storage.Store, name string, info fs.FileInfo, maxBytes int64) (logFile, error) {
	rc, err := store.Read(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var r io.Reader = rc
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(rc)
		if err != nil {
			return nil, fmt.Errorf("gunzip: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	return keepTail(r, info, maxBytes)
}

// keepTail reads r to its end and keeps its newest maxBytes (and one byte before them, so a
// partial first line can be told).
func keepTail(r io.Reader, info fs.FileInfo, maxBytes int64) (*objectFile, error) {
	keep := maxBytes + 1
	var buf []byte
	var total int64
	chunk := make([]byte, 256<<10)
	for {
		n, err := r.Read(chunk)
		buf = append(buf, chunk[:n]...)
		total += int64(n)
		if int64(len(buf)) > 2*keep {
			buf = append(buf[:0], buf[int64(len(buf))-keep:]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(buf)) > keep {
		buf = buf[int64(len(buf))-keep:]
	}
	return &objectFile{Reader: bytes.NewReader(buf), info: info, skipped: total - int64(len(buf))}, nil
}

// objectFile is an object's kept tail as a logFile.
type objectFile struct {
	*bytes.Reader
	info    fs.FileInfo
	skipped int64 // bytes before the kept tail
}

func (f *objectFile) Close() error { return nil }

func (f *objectFile) Stat() (fs.FileInfo, error) {
	return tailInfo{FileInfo: f.info, size: f.Reader.Size()}, nil
}

// tailInfo reports the kept tail's size, which is what the scanner reads from.
type tailInfo struct {
	fs.FileInfo
	size int64
}

func (t tailInfo) Size() int64       { return t.size }
func (t tailInfo) Mode() fs.FileMode { return 0o444 }
