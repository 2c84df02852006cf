package driverlog

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// LastWrite returns the most recently modified file the globs match and its modification
// time: a running driver writes its log all the time, a stopped one does not. No file at all
// is a zero time and no error. Object-store entries are skipped; LastWriteIn lists them.
func LastWrite(paths []string) (string, time.Time, error) {
	return LastWriteIn(context.Background(), paths, nil)
}

// LastWriteIn is LastWrite that also lists object-store prefixes and globs (s3://, gs://)
// through storage opened with opts; nil opts skips them.
func LastWriteIn(ctx context.Context, paths []string, opts *storage.Options) (string, time.Time, error) {
	var newest string
	var at time.Time
	for _, pattern := range paths {
		if isRemote(pattern) {
			if opts == nil {
				continue
			}
			i := strings.LastIndex(pattern, "/")
			dir, glob := pattern[:i], pattern[i+1:]
			if glob == "" {
				glob = "*"
			}
			store, err := storage.Open(dir, *opts)
			if err != nil {
				return "", time.Time{}, fmt.Errorf("logs.paths %q: %w", pattern, err)
			}
			entries, err := store.List(ctx, "")
			if storage.Class(err) == storage.ClassNotFound {
				continue
			}
			if err != nil {
				return "", time.Time{}, fmt.Errorf("logs.paths %q: %w", pattern, err)
			}
			for _, e := range entries {
				if ok, _ := path.Match(glob, e.Name); ok && !e.IsDir && e.ModTime.After(at) {
					newest, at = dir+"/"+e.Name, e.ModTime
				}
			}
			continue
		}
		names, err := filepath.Glob(pattern)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("logs.paths %q: %w", pattern, err)
		}
		for _, name := range names {
			info, err := os.Stat(name)
			if err != nil || info.IsDir() {
				continue
			}
			if info.ModTime().After(at) {
				newest, at = name, info.ModTime()
			}
		}
	}
	return newest, at, nil
}
