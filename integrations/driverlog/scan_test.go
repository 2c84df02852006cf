package driverlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

type wantMatch struct {
	count       int
	first, last string // "" for zero
	example     []string
	notExample  []string
}

func TestScanFixtures(t *testing.T) {
	tests := []struct {
		file string
		want map[string]wantMatch // exactly these signatures match
	}{
		{"driver-concurrent.log", map[string]wantMatch{
			// The ConcurrentModificationException, its FileAlreadyExistsException
			// cause and the ERROR line above them are one record.
			"CONCURRENT_QUERY": {count: 3, first: "2026-11-30 10:41:05", last: "2026-11-30 10:52:17",
				example:    []string{"26/11/30 10:52:17 ERROR ApplicationMaster", "Cannot start query with id 8f5c2a6e"},
				notExample: []string{"\t", "\n"}},
			"QUERY_TERMINATED": {count: 2, first: "2026-11-30 10:41:05", last: "2026-11-30 10:47:35",
				example: []string{"runId = 6d0a8b3c"}},
		}},
		{"driver-permission.log", map[string]wantMatch{
			"PERMISSION_DENIED": {count: 4, first: "2026-11-30 09:15:02.877", last: "2026-11-30 09:58:21.004",
				example:    []string{"java.nio.file.AccessDeniedException: s3a://AKIA***:***@sms-checkpoints/sms-replies/offsets/58"},
				notExample: []string{"IOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "EXAMPLEKEY"}},
			"QUERY_TERMINATED": {count: 3, first: "2026-11-30 09:15:02.877", last: "2026-11-30 09:58:21.004"},
		}},
		{"driver-state.log", map[string]wantMatch{
			"NON_ATOMIC_CHECKPOINT_FS": {count: 1, first: "2026-11-30 09:30:11.210", last: "2026-11-30 09:30:11.210"},
			"CONF_FROM_CHECKPOINT":     {count: 1, first: "2026-11-30 09:30:12.330", last: "2026-11-30 09:30:12.330"},
			"LOG_INCONSISTENT":         {count: 1, first: "2026-11-30 09:30:12.544", last: "2026-11-30 09:30:12.544"},
			"STALE_STATE_RECONSTRUCTION": {count: 3, first: "2026-11-30 09:30:20.118", last: "2026-11-30 10:05:12.845",
				example: []string{"2026-11-30T10:05:12.845Z WARN"}},
			// The WARN line's "+01:00" makes it the earlier of the two.
			"CHECKPOINT_WRITE_FAILED": {count: 2, first: "2026-11-30 08:40:00.001", last: "2026-11-30 09:40:00.003",
				example: []string{"java.io.IOException: Failed to rename temp file", "as rename returned false"}},
			"QUERY_TERMINATED": {count: 3, first: "2026-11-30 09:40:00.003", last: "2026-11-30 10:05:13.990"},
			"STATE_LOAD_FAILED": {count: 2, first: "2026-11-30 09:58:02.617", last: "2026-11-30 10:05:13.990",
				example: []string{"[CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS]"}},
		}},
		{"executor-stderr.log", map[string]wantMatch{
			"STALE_STATE_RECONSTRUCTION": {count: 1, first: "2026-11-30 10:20:05", last: "2026-11-30 10:20:05"},
			"CHECKPOINT_WRITE_FAILED": {count: 1, first: "2026-11-30 10:20:09", last: "2026-11-30 10:20:09",
				example: []string{"Error writing state store files for provider"}},
			"STORAGE_FULL":             {count: 2, first: "2026-11-30 10:20:09", last: "2026-11-30 10:20:10"},
			"STATE_MAINTENANCE_FAILED": {count: 1, first: "2026-11-30 10:20:10", last: "2026-11-30 10:20:10"},
		}},
		{"driver-structured.log", map[string]wantMatch{
			"QUERY_TERMINATED":       {count: 2, first: "2026-11-30 11:02:13.412", last: "2026-11-30 11:09:40.950"},
			"CHECKPOINT_LOG_CORRUPT": {count: 1, first: "2026-11-30 11:02:13.412", last: "2026-11-30 11:02:13.412", example: []string{"[MALFORMED_LOG_FILE] Log file was malformed"}},
			// A long JSON record: the example is cut around the match, and
			// the jaas password in its context is masked.
			"BATCHES_MISSING": {count: 1, first: "2026-11-30 11:09:40.950", last: "2026-11-30 11:09:40.950",
				example: []string{"batch 56 doesn't exist", "…"}, notExample: []string{"p4ssW0rd"}},
			"KAFKA_DATA_LOSS": {count: 1, first: "2026-11-30 11:15:03.007", last: "2026-11-30 11:15:03.007"},
		}},
		{"driver-clean.log", map[string]wantMatch{}},
		{"untimed.log", map[string]wantMatch{
			// Everything under `Exception in thread "main"` is one record.
			"CONCURRENT_QUERY":       {count: 1, example: []string{`Exception in thread "main"`}},
			"CHECKPOINT_LOG_CORRUPT": {count: 1, example: []string{"Incomplete log file in the offset commit log"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			r := scanPaths(t, path)
			if len(r.Errors) > 0 {
				t.Errorf("errors: %q", r.Errors)
			}
			if len(r.Files) != 1 || r.Files[0].Path != path || r.Files[0].Truncated || r.Files[0].BytesRead != r.Files[0].Size {
				t.Errorf("files: %+v", r.Files)
			}
			var wantIDs []string
			for id := range tt.want {
				wantIDs = append(wantIDs, id)
			}
			gotIDs := matchedIDs(r)
			slices.Sort(wantIDs)
			slices.Sort(gotIDs)
			if !slices.Equal(gotIDs, wantIDs) {
				t.Errorf("matched %v, want %v", gotIDs, wantIDs)
			}
			for id, w := range tt.want {
				m := matchByID(r, id)
				if m == nil {
					continue
				}
				if m.Count != w.count {
					t.Errorf("%s: count %d, want %d", id, m.Count, w.count)
				}
				checkTime(t, id+" first", m.First, w.first)
				checkTime(t, id+" last", m.Last, w.last)
				if m.File != path {
					t.Errorf("%s: file %q", id, m.File)
				}
				checkExample(t, id, m.Example, w.example, w.notExample)
			}
		})
	}
}

func checkTime(t *testing.T, what string, got time.Time, want string) {
	t.Helper()
	if want == "" {
		if !got.IsZero() {
			t.Errorf("%s: %v, want zero", what, got)
		}
		return
	}
	if w := ts(t, want); !got.Equal(w) {
		t.Errorf("%s: %v, want %v", what, got, w)
	}
}

func checkExample(t *testing.T, id, ex string, want, notWant []string) {
	t.Helper()
	if ex == "" || len(ex) > exampleBytes+2*len("…") || strings.ContainsAny(ex, "\n\r\t") {
		t.Errorf("%s: example %q is empty, too long or not one line", id, ex)
	}
	for _, s := range want {
		if !strings.Contains(ex, s) {
			t.Errorf("%s: example %q lacks %q", id, ex, s)
		}
	}
	for _, s := range notWant {
		if strings.Contains(ex, s) {
			t.Errorf("%s: example %q contains %q", id, ex, s)
		}
	}
}

func TestScanAllFixturesMergesAndSorts(t *testing.T) {
	dir := t.TempDir()
	// Copy with ordered modification times: the scan reads oldest first.
	var paths []string
	for i, name := range []string{"untimed.log", "driver-concurrent.log", "driver-state.log", "driver-permission.log"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		p := writeFile(t, dir, name, string(b))
		setModTime(t, p, testNow.Add(time.Duration(i-10)*time.Minute))
		paths = append(paths, p)
	}
	r := scanPaths(t, filepath.Join(dir, "*.log"))

	var order []string
	for _, f := range r.Files {
		order = append(order, filepath.Base(f.Path))
	}
	if want := []string{"untimed.log", "driver-concurrent.log", "driver-state.log", "driver-permission.log"}; !slices.Equal(order, want) {
		t.Errorf("scan order %v, want %v", order, want)
	}

	// Counted over all files; the example is the most recent timestamped
	// record, not the untimed file's.
	m := matchByID(r, "CONCURRENT_QUERY")
	if m == nil || m.Count != 4 || m.File != paths[1] || !strings.Contains(m.Example, "Cannot start query") {
		t.Errorf("CONCURRENT_QUERY: %+v", m)
	}
	m = matchByID(r, "QUERY_TERMINATED")
	if m == nil || m.Count != 2+3+3 || !m.First.Equal(ts(t, "2026-11-30 09:15:02.877")) || !m.Last.Equal(ts(t, "2026-11-30 10:47:35")) || m.File != paths[1] {
		t.Errorf("QUERY_TERMINATED: %+v", m)
	}

	// Most severe first, then most recent first.
	for i := 1; i < len(r.Matches); i++ {
		a, b := r.Matches[i-1], r.Matches[i]
		if a.Signature.Severity < b.Signature.Severity ||
			a.Signature.Severity == b.Signature.Severity && a.Last.Before(b.Last) {
			t.Errorf("match %d (%s %s %v) sorts before %d (%s %s %v)", i-1, a.Signature.ID, a.Signature.Severity, a.Last, i, b.Signature.ID, b.Signature.Severity, b.Last)
		}
	}
	if r.Matches[0].Signature.ID != "CONCURRENT_QUERY" { // the most recent critical one: 10:52:17
		t.Errorf("first match %s", r.Matches[0].Signature.ID)
	}
	if last := r.Matches[len(r.Matches)-1]; last.Signature.Severity != SeverityWarning {
		t.Errorf("last match %s is %s", last.Signature.ID, last.Signature.Severity)
	}
}

const (
	filler = "26/11/30 09:30:00 INFO MicroBatchExecution: Streaming query made progress: batch 41, 1022 input rows\n"
	early  = "26/11/30 09:00:00 ERROR MicroBatchExecution: java.util.ConcurrentModificationException: Multiple streaming queries are concurrently using /chk/offsets\n"
	late1  = "26/11/30 10:00:00 ERROR MicroBatchExecution: java.util.ConcurrentModificationException: Multiple streaming queries are concurrently using /chk/offsets\n"
	late2  = "26/11/30 10:00:01 ERROR MicroBatchExecution: java.util.ConcurrentModificationException: Multiple streaming queries are concurrently using /chk/commits\n"
)

func TestScanReadsOnlyTheTail(t *testing.T) {
	tail := strings.Repeat(filler, 5) + late1 + filler + late2 + filler
	tests := []struct {
		name     string
		head     string // before the tail
		maxBytes int64
		count    int
		first    string
	}{
		// MaxBytes ends inside the last early match: that partial line is
		// dropped, not counted.
		{"cut inside a match", strings.Repeat(early, 20) + strings.Repeat(filler, 50) + early, int64(len(tail)) + 40, 2, "2026-11-30 10:00:00"},
		// MaxBytes ends exactly on a line boundary: the first line is whole
		// and counts.
		{"cut on a line boundary", strings.Repeat(early, 20) + strings.Repeat(filler, 50) + early, int64(len(tail) + len(early)), 3, "2026-11-30 09:00:00"},
		{"cut inside filler", strings.Repeat(early, 200) + strings.Repeat(filler, 10), int64(len(tail)) + 30, 2, "2026-11-30 10:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "driver.log", tt.head+tail)
			opt := testOptions(path)
			opt.MaxBytes = tt.maxBytes
			r, err := Scan(context.Background(), opt)
			if err != nil {
				t.Fatal(err)
			}
			f := r.Files[0]
			if !f.Truncated || f.Size != int64(len(tt.head+tail)) || f.BytesRead != tt.maxBytes {
				t.Errorf("file %+v, want truncated, size %d, %d bytes read", f, len(tt.head+tail), tt.maxBytes)
			}
			m := matchByID(r, "CONCURRENT_QUERY")
			if m == nil || m.Count != tt.count || !m.First.Equal(ts(t, tt.first)) || !m.Last.Equal(ts(t, "2026-11-30 10:00:01")) {
				t.Fatalf("match %+v, want %d from %s", m, tt.count, tt.first)
			}
		})
	}
}

func TestScanDefaultMaxBytes(t *testing.T) {
	path := writeFile(t, t.TempDir(), "driver.log", late1)
	r := scanPaths(t, path)
	if f := r.Files[0]; f.Truncated || f.BytesRead != int64(len(late1)) {
		t.Errorf("file %+v", f)
	}
	if DefaultMaxBytes != 8<<20 {
		t.Errorf("DefaultMaxBytes %d", DefaultMaxBytes)
	}
}

func TestScanLongLines(t *testing.T) {
	long := "26/11/30 10:00:00 ERROR MicroBatchExecution: Multiple streaming queries are concurrently using /chk/offsets " +
		strings.Repeat("x", 3*MaxLineBytes) + " password=hunter2\n"
	// The match in this line lies beyond MaxLineBytes: it is not read.
	hidden := "26/11/30 10:00:01 ERROR X: " + strings.Repeat("y", MaxLineBytes) + " Incomplete log file\n"
	after := "26/11/30 10:00:02 ERROR MicroBatchExecution: Query q [id = 1, runId = 2] terminated with error\n"
	path := writeFile(t, t.TempDir(), "driver.log", long+hidden+after)
	r := scanPaths(t, path)

	if got, want := matchedIDs(r), []string{"QUERY_TERMINATED", "CONCURRENT_QUERY"}; !slices.Equal(got, want) { // the more recent first
		t.Fatalf("matched %v, want %v", got, want)
	}
	m := matchByID(r, "CONCURRENT_QUERY")
	if m.Count != 1 || !m.Last.Equal(ts(t, "2026-11-30 10:00:00")) {
		t.Errorf("long line: %+v", m)
	}
	checkExample(t, m.Signature.ID, m.Example, []string{"Multiple streaming queries", "…"}, []string{"hunter2"})
	if q := matchByID(r, "QUERY_TERMINATED"); q.Count != 1 || !q.Last.Equal(ts(t, "2026-11-30 10:00:02")) {
		t.Errorf("line after the long ones: %+v", q)
	}
}

func TestScanCRLFAndNoFinalNewline(t *testing.T) {
	path := writeFile(t, t.TempDir(), "driver.log",
		"26/11/30 10:00:00 INFO X: starting\r\n26/11/30 10:00:01 ERROR X: batch 41 doesn't exist\r\n26/11/30 10:00:02 ERROR X: Incomplete log file")
	r := scanPaths(t, path)
	if m := matchByID(r, "BATCHES_MISSING"); m == nil || strings.HasSuffix(m.Example, "\r") || !strings.HasSuffix(m.Example, "doesn't exist") {
		t.Errorf("BATCHES_MISSING: %+v", m)
	}
	if m := matchByID(r, "CHECKPOINT_LOG_CORRUPT"); m == nil || !m.Last.Equal(ts(t, "2026-11-30 10:00:02")) {
		t.Errorf("last line without newline: %+v", m)
	}
}

func TestScanLocation(t *testing.T) {
	path := writeFile(t, t.TempDir(), "driver.log", "26/11/30 10:00:00 ERROR X: batch 41 doesn't exist\n")
	zone := time.FixedZone("CET", 3600)
	opt := testOptions(path)
	opt.Location = zone
	r, err := Scan(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if m := matchByID(r, "BATCHES_MISSING"); m == nil || !m.Last.Equal(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("match %+v", m)
	}
}

// failingOpen fails for one path and opens the others.
func failingOpen(bad string, err error) func(string) (logFile, error) {
	return func(name string) (logFile, error) {
		if name == bad {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return openOSFile(name)
	}
}

// brokenFile fails reads past the first n bytes of its section.
type brokenFile struct {
	*os.File
	n int64
}

func (b brokenFile) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > b.n {
		if off >= b.n {
			return 0, errors.New("input/output error")
		}
		n, _ := b.File.ReadAt(p[:b.n-off], off)
		return n, errors.New("input/output error")
	}
	return b.File.ReadAt(p, off)
}

func TestScanKeepsGoingPastBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "driver-1.log", late1)
	locked := writeFile(t, dir, "driver-2.log", late2)
	broken := writeFile(t, dir, "driver-3.log", strings.Repeat(filler, 100)+late2)
	setModTime(t, good, testNow.Add(-3*time.Hour))
	setModTime(t, locked, testNow.Add(-2*time.Hour))
	setModTime(t, broken, testNow.Add(-1*time.Hour))
	if err := os.Mkdir(filepath.Join(dir, "driver-dir.log"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone.log"), filepath.Join(dir, "driver-dangling.log")); err != nil {
		t.Fatal(err)
	}

	open := func(name string) (logFile, error) {
		switch name {
		case locked:
			return failingOpen(locked, fs.ErrPermission)(name)
		case broken:
			f, err := os.Open(name)
			if err != nil {
				return nil, err
			}
			return brokenFile{f, int64(len(filler))*10 + 5}, nil
		}
		return openOSFile(name)
	}
	opt := testOptions(filepath.Join(dir, "driver-*.log"), filepath.Join(dir, "missing-*.log"), "/nonexistent/streamwatch/driver.log", "[")
	r, err := newScanner(opt, open).run(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	for _, want := range []string{
		"open " + locked + ": permission denied",
		"read " + broken + ": input/output error",
		"stat " + filepath.Join(dir, "driver-dangling.log") + ": no such file or directory",
		`bad log path pattern "["`,
	} {
		if !hasError(r, want) {
			t.Errorf("errors %q lack %q", r.Errors, want)
		}
	}
	if len(r.Errors) != 4 {
		t.Errorf("%d errors: %q", len(r.Errors), r.Errors)
	}
	// The globs are resolved in order (the dangling link's stat error before the directory,
	// "[" last), the files read after.
	if want := []Skip{{Kind: SkipDirectory, Path: filepath.Join(dir, "driver-dir.log"), Errors: 1},
		{Kind: SkipNoFile, Path: filepath.Join(dir, "missing-*.log"), Errors: 1},
		{Kind: SkipNoFile, Path: "/nonexistent/streamwatch/driver.log", Errors: 1}}; !slices.Equal(r.Skipped, want) {
		t.Errorf("skipped %+v, want %+v", r.Skipped, want)
	}
	// The good file was scanned; the broken one as far as it could be read.
	if m := matchByID(r, "CONCURRENT_QUERY"); m == nil || m.Count != 1 || m.File != good {
		t.Errorf("match %+v", m)
	}
	var scanned []string
	for _, f := range r.Files {
		scanned = append(scanned, f.Path)
	}
	if !slices.Equal(scanned, []string{good, broken}) {
		t.Errorf("files %v", scanned)
	}
	if f := r.Files[1]; f.BytesRead <= 0 || f.BytesRead >= f.Size {
		t.Errorf("broken file read %d of %d", f.BytesRead, f.Size)
	}
}

// TestScanUnreadableFile meets a real EACCES: as root (CI), the scan runs in a re-executed
// test binary as uid 65534, which may not read the locked file.
func TestScanUnreadableFile(t *testing.T) {
	const dirEnv = "DRIVERLOG_TEST_DIR"
	check := func(dir string) {
		good, locked := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
		r := scanPaths(t, filepath.Join(dir, "*.log"))
		if !hasError(r, "open "+locked+": permission denied") || len(r.Files) != 1 || r.Files[0].Path != good {
			t.Errorf("report %+v", r)
		}
	}
	if storagetest.InUnprivilegedChild() {
		check(os.Getenv(dirEnv))
		return
	}
	root := os.Geteuid() == 0
	dir := t.TempDir()
	if root {
		dir = storagetest.SharedTempDir(t)
	}
	writeFile(t, dir, "a.log", late1)
	locked := writeFile(t, dir, "b.log", late2)
	if err := os.Chmod(filepath.Join(dir, "a.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	if root {
		storagetest.RunUnprivileged(t, dirEnv+"="+dir)
		return
	}
	check(dir)
}

func TestScanOnlyDirectoryOrMissing(t *testing.T) {
	dir := t.TempDir()
	r := scanPaths(t, dir, filepath.Join(dir, "driver.log"))
	if len(r.Files) != 0 || len(r.Matches) != 0 || len(r.Errors) != 0 ||
		!slices.Equal(r.Skipped, []Skip{{Kind: SkipDirectory, Path: dir}, {Kind: SkipNoFile, Path: filepath.Join(dir, "driver.log")}}) {
		t.Errorf("report %+v", r)
	}
}

func TestScanNoPaths(t *testing.T) {
	r, err := Scan(context.Background(), Options{})
	if !errors.Is(err, errNoPaths) || len(r.Files) != 0 || r.ScannedAt.IsZero() {
		t.Errorf("Scan(no paths) = %+v, %v", r, err)
	}
}

func TestScanHonoursContext(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "driver.log", late1)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := Scan(ctx, testOptions(path))
	if !errors.Is(err, context.Canceled) || len(r.Files) != 0 {
		t.Errorf("cancelled before: %+v, %v", r, err)
	}

	// Cancelled while reading a file: noticed within checkEvery lines.
	big := writeFile(t, dir, "big.log", strings.Repeat(filler, 3*checkEvery)+late1)
	ctx, cancel = context.WithCancel(context.Background())
	s := newScanner(testOptions(big), openOSFile)
	s.open = func(name string) (logFile, error) {
		cancel()
		return openOSFile(name)
	}
	r, err = s.run(ctx)
	if !errors.Is(err, context.Canceled) || len(r.Files) != 1 || len(r.Matches) != 0 {
		t.Errorf("cancelled during: %d files, %d matches, %v", len(r.Files), len(r.Matches), err)
	}
	if f := r.Files[0]; f.BytesRead >= f.Size {
		t.Errorf("read all %d bytes after cancel", f.BytesRead)
	}

	// Long lines: noticed within checkBytes.
	long := strings.Repeat(strings.Repeat("z", MaxLineBytes/2)+"\n", 4*checkBytes/(MaxLineBytes/2))
	big = writeFile(t, dir, "long.log", long+late1)
	ctx, cancel = context.WithCancel(context.Background())
	s = newScanner(testOptions(big), openOSFile)
	s.open = func(name string) (logFile, error) {
		cancel()
		return openOSFile(name)
	}
	r, err = s.run(ctx)
	if !errors.Is(err, context.Canceled) || len(r.Matches) != 0 || r.Files[0].BytesRead >= r.Files[0].Size {
		t.Errorf("cancelled during long lines: %+v, %v", r.Files, err)
	}
}

func TestScanReadsAFileOnce(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "driver.log", late1)
	if err := os.Symlink(path, filepath.Join(dir, "driver-current.log")); err != nil {
		t.Fatal(err)
	}
	r := scanPaths(t, filepath.Join(dir, "driver*.log"), path)
	if len(r.Files) != 1 || len(r.Errors) != 0 || r.Matches[0].Count != 1 {
		t.Errorf("report %+v", r)
	}
}

func TestScanMaxFiles(t *testing.T) {
	dir := t.TempDir()
	for i := range MaxFiles + 3 {
		p := writeFile(t, dir, fmt.Sprintf("driver-%03d.log", i), late1)
		setModTime(t, p, testNow.Add(time.Duration(i)*time.Second))
	}
	r := scanPaths(t, filepath.Join(dir, "*.log"), filepath.Join(dir, "driver-00*.log")) // overlapping globs
	if len(r.Files) != MaxFiles || filepath.Base(r.Files[0].Path) != "driver-003.log" {
		t.Errorf("%d files, first %s", len(r.Files), r.Files[0].Path)
	}
	if !slices.Equal(r.Skipped, []Skip{{Kind: SkipTooMany, N: 3, Of: MaxFiles + 3, Max: MaxFiles}}) || len(r.Errors) != 0 {
		t.Errorf("skipped %+v, errors %q", r.Skipped, r.Errors)
	}
	if m := matchByID(r, "CONCURRENT_QUERY"); m.Count != MaxFiles {
		t.Errorf("count %d", m.Count)
	}
}

func TestRecordGrouping(t *testing.T) {
	tests := []struct {
		name  string
		log   string
		count int
	}{
		{"stack trace under a timestamp", "26/11/30 10:00:00 ERROR X: Query q terminated with error\njava.util.ConcurrentModificationException: Multiple streaming queries are concurrently using /c/offsets\nCaused by: org.apache.hadoop.fs.FileAlreadyExistsException: rename destination /c/offsets/4 already exists\n", 1},
		{"two timestamped records", late1 + late2, 2},
		{"repeated untimed messages", "batch 4 doesn't exist\nbatch 5 doesn't exist\n", 2},
		{"untimed exception and its causes", "org.apache.spark.sql.streaming.StreamingQueryException: batch 4 doesn't exist\n=== Streaming Query ===\nCaused by: java.lang.IllegalStateException: batch 4 doesn't exist\n\tat x.y(Z.scala:1)\n", 1},
		{"two untimed exceptions", "java.lang.IllegalStateException: batch 4 doesn't exist\n\tat x.y(Z.scala:1)\njava.lang.IllegalStateException: batch 5 doesn't exist\n", 2},
		{"untimed lines before the first timestamp", "batch 3 doesn't exist\n26/11/30 10:00:00 ERROR X: batch 4 doesn't exist\nbatch 4 doesn't exist\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := scanPaths(t, writeFile(t, t.TempDir(), "driver.log", tt.log))
			if len(r.Matches) == 0 || r.Matches[0].Count != tt.count {
				t.Errorf("matches %+v, want count %d", r.Matches, tt.count)
			}
		})
	}
}

func TestScanSkipsSignatureWithoutPattern(t *testing.T) {
	saved := Signatures
	t.Cleanup(func() { Signatures = saved })
	Signatures = append(slices.Clone(saved), Signature{ID: "HALF_BUILT"})
	r := scanPaths(t, writeFile(t, t.TempDir(), "driver.log", late1))
	if got := matchedIDs(r); !slices.Equal(got, []string{"CONCURRENT_QUERY"}) {
		t.Errorf("matched %v", got)
	}
}
