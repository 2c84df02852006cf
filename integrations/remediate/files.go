package remediate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// probeDir is where the probe writes (probe.DefaultDir); it is not part of the checkpoint.
const probeDir = "_streamwatch_probe"

// workers bounds the files copied or verified at once.
const workers = 8

// copyHashed copies one file between stores and returns the size and SHA-256 of the bytes it
// read from the source.
func copyHashed(ctx context.Context, dst storage.Store, dstName string, src storage.Store, srcName string) (int64, string, error) {
	rc, err := src.Read(ctx, srcName)
	if err != nil {
		return 0, "", err
	}
	defer rc.Close()
	h := sha256.New()
	cr := &storage.CountingReader{R: io.TeeReader(rc, h)}
	if err := dst.Write(ctx, dstName, cr); err != nil {
		return 0, "", err
	}
	// A store that stopped reading early would make the hash describe a prefix of the file.
	if n, err := io.Copy(io.Discard, cr); err != nil {
		return 0, "", err
	} else if n > 0 {
		return 0, "", &storage.Error{Op: "write", Path: dstName, Class: storage.ClassOther,
			Err: fmt.Errorf("the store stopped reading %d bytes before the end", n)}
	}
	return cr.N, hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile reads one file and returns its size and SHA-256.
func hashFile(ctx context.Context, s storage.Store, name string) (int64, string, error) {
	rc, err := s.Read(ctx, name)
	if err != nil {
		return 0, "", err
	}
	defer rc.Close()
	h := sha256.New()
	n, err := io.Copy(h, rc)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// forEach calls f for 0..n-1 on up to workers goroutines and returns the first error; the
// context f receives ends once one call has failed.
func forEach(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				if err := f(inner, i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-inner.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// joinLocation names a path under a store's location, for messages.
func joinLocation(location, rel string) string {
	if rel == "" {
		return location
	}
	return strings.TrimRight(location, "/") + "/" + rel
}

// checkPipeline accepts a pipeline name that is one visible path segment.
func checkPipeline(pipeline string) error {
	switch {
	case pipeline == "":
		return errors.New("no pipeline name")
	case strings.ContainsAny(pipeline, "/\\\x00"), strings.HasPrefix(pipeline, "."):
		return fmt.Errorf("pipeline name %q cannot name a backup directory (it has a slash or starts with a dot)", pipeline)
	}
	return nil
}

// overlaps reports whether two locations are the same place or one holds the other, as far as
// their spelling tells (plain paths, file://, s3:// and gs://; s3a:// and s3n:// are s3://).
func overlaps(a, b string) bool {
	sa, pa := normLocation(a)
	sb, pb := normLocation(b)
	if sa != sb || sa == "" {
		return false
	}
	inside := func(in, out string) bool {
		return in == out || out == "/" || strings.HasPrefix(in, strings.TrimSuffix(out, "/")+"/")
	}
	return inside(pa, pb) || inside(pb, pa)
}

func normLocation(loc string) (scheme, p string) {
	s, rest, ok := strings.Cut(loc, "://")
	switch {
	case ok && (strings.EqualFold(s, "s3") || strings.EqualFold(s, "s3a") || strings.EqualFold(s, "s3n")):
		return "s3", "/" + strings.Trim(path.Clean("/"+rest), "/")
	case ok && strings.EqualFold(s, "gs"):
		return "gs", "/" + strings.Trim(path.Clean("/"+rest), "/")
	case ok && strings.EqualFold(s, "file"):
		u, err := url.Parse(loc)
		if err != nil {
			return "", ""
		}
		return "file", filepath.Clean(u.Path)
	case ok:
		return "", ""
	case strings.HasPrefix(loc, "file:"):
		return "file", filepath.Clean("/" + strings.TrimLeft(strings.TrimPrefix(loc, "file:"), "/"))
	}
	abs, err := filepath.Abs(loc)
	if err != nil {
		return "", ""
	}
	return "file", abs
}
