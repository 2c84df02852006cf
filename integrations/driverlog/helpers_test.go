package driverlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testOptions scans paths with timestamps read as UTC and a fixed clock.
func testOptions(paths ...string) Options {
	return Options{Paths: paths, Location: time.UTC, Now: func() time.Time { return testNow }}
}

func scanPaths(t testing.TB, paths ...string) Report {
	t.Helper()
	r, err := Scan(context.Background(), testOptions(paths...))
	if err != nil {
		t.Fatalf("Scan(%v): %v", paths, err)
	}
	return r
}

// ts parses "2006-01-02 15:04:05.000" in UTC, or RFC 3339 with a zone.
func ts(t testing.TB, s string) time.Time {
	t.Helper()
	for _, layout := range []string{"2006-01-02 15:04:05.000", "2006-01-02 15:04:05", time.RFC3339Nano} {
		if v, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return v
		}
	}
	t.Fatalf("bad test time %q", s)
	return time.Time{}
}

func matchByID(r Report, id string) *Match {
	for i := range r.Matches {
		if r.Matches[i].Signature.ID == id {
			return &r.Matches[i]
		}
	}
	return nil
}

func matchedIDs(r Report) []string {
	var ids []string
	for _, m := range r.Matches {
		ids = append(ids, m.Signature.ID)
	}
	return ids
}

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// setModTime gives files distinct, ordered modification times.
func setModTime(t testing.TB, path string, mod time.Time) {
	t.Helper()
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func hasError(r Report, substr string) bool {
	for _, e := range r.Errors {
		if strings.Contains(e, substr) {
			return true
		}
	}
	return false
}

// testdataLines returns every line of every testdata log, for seeds.
func testdataLines(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.log"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimRight(string(b), "\n"), "\n")...)
	}
	return lines
}
