package driverlog

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// LastWrite returns the most recently modified file the globs match and its modification
// time: a running driver writes its log all the time, a stopped one does not. No file at all
// is a zero time and no error.
func LastWrite(paths []string) (string, time.Time, error) {
	var newest string
	var at time.Time
	for _, pattern := range paths {
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
