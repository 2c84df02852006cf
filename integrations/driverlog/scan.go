package driverlog

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

const (
	// DefaultMaxBytes is how much of the end of each file Scan reads when
	// Options.MaxBytes is not set (pipelines[].logs.max_bytes).
	DefaultMaxBytes = 8 << 20
	// MaxLineBytes bounds one line; the rest of a longer line is skipped.
	MaxLineBytes = 64 << 10
	// MaxFiles bounds how many files one Scan reads, the most recently
	// modified first; how many others there were is a SkipTooMany in Report.Skipped.
	MaxFiles = 64
	// exampleBytes bounds Match.Example.
	exampleBytes = 300
	// checkEvery and checkBytes say how much is read between looks at the
	// context: a few thousand lines, or fewer when they are long.
	checkEvery = 4096
	checkBytes = 1 << 20
)

// Options says which files to scan.
type Options struct {
	// Paths are file names or filepath.Match globs, such as
	// /var/log/spark/sms-replies/driver*.log (pipelines[].logs.paths).
	Paths []string
	// MaxBytes is how much of the end of each file is read; older lines are
	// not looked at. Zero or less means DefaultMaxBytes.
	MaxBytes int64
	// Now is the clock stamped on the report; nil means time.Now.
	Now func() time.Time
	// Location is the zone of log timestamps written without one (Spark's
	// default "yy/MM/dd HH:mm:ss"); nil means time.Local, the zone of the
	// host that wrote the logs when streamwatch runs beside the driver.
	Location *time.Location
	// Storage opens object-store entries of Paths (s3://, gs:// prefixes and globs).
	Storage storage.Options
	// Sources are logs that are not files, such as a Kubernetes driver pod's
	// (pipelines[].logs.kubernetes); they are read after the files.
	Sources []Source
}

// Report is what Scan found.
type Report struct {
	ScannedAt time.Time
	Files     []FileScanned // in the order scanned: least recently modified first
	// Matches has one entry per signature that matched: most severe first,
	// then the most recently seen first.
	Matches []Match
	// Errors are the errors' messages, one each, of the paths that could not be listed and
	// the files that could not be read; the other files were scanned anyway.
	Errors []string
	// Skipped are the paths passed over without an error (a glob that matched nothing, a
	// directory), as data that commands words.
	Skipped []Skip
}

// SkipKind says why Scan passed a path over.
type SkipKind string

// The skips, with the Skip fields each uses.
const (
	SkipNoFile     SkipKind = "no_file"     // no file matches the glob Path
	SkipNoObject   SkipKind = "no_object"   // no object matches the object-store pattern Path
	SkipDirectory  SkipKind = "directory"   // Path is a directory, not a log file
	SkipNotRegular SkipKind = "not_regular" // Path is not a regular file but a Mode (a FIFO, a device)
	// SkipTooMany: more than MaxFiles files matched; the N least recently modified of Of
	// were not read, only the newest Max.
	SkipTooMany SkipKind = "too_many"
)

// Skip is one path Scan passed over without an error.
type Skip struct {
	Kind       SkipKind
	Path       string
	Mode       string
	N, Of, Max int
	// Errors is how many of Report.Errors were noted before it, so the two read in the
	// order the scan met them.
	Errors int
}

// FileScanned describes one file Scan read.
type FileScanned struct {
	Path      string
	Size      int64 // when the scan started
	BytesRead int64 // from the end of the file, at most Options.MaxBytes
	Truncated bool  // only the tail was read: Size > MaxBytes
	ModTime   time.Time
	Note      string // why a Source chose this log ("the newest running of 2 pods…"); "" for files
}

// Match is one signature seen in the logs. Count and the times are over log
// records: a timestamped line with the stack trace under it counts once.
type Match struct {
	Signature Signature
	Count     int
	// First and Last come from the timestamps of the records that matched;
	// zero when none of them carried a timestamp Scan understands.
	First, Last time.Time
	// Example is the matching line of the most recent record, with secrets
	// masked by Redact, on one line and at most about 300 bytes.
	Example string
	File    string // where Example comes from
}

// Scan reads the end of every file the globs in opt.Paths match, looking for
// Signatures. A glob that matches nothing or a directory is noted in Report.Skipped, an
// unreadable file in Report.Errors, and the scan goes on. The error is non-nil only
// when opt has no paths or ctx ends; the report then holds what was found
// so far.
func Scan(ctx context.Context, opt Options) (Report, error) {
	s := newScanner(opt, openOSFile)
	return s.run(ctx)
}

// logFile is what the scanner needs of an open file; tests fake it.
type logFile interface {
	io.ReaderAt
	io.Closer
	Stat() (fs.FileInfo, error)
}

func openOSFile(name string) (logFile, error) { return os.Open(name) }

type scanner struct {
	opt    Options
	open   func(name string) (logFile, error)
	sigs   []Signature
	filter *prefilter
	cand   []uint64 // the signatures the prefilter lets through for this line
	report Report

	// per signature, over all files
	seen []seen

	// the record being read
	inRecord bool
	// sticky: the lines under the record's first line belong to it even
	// when they do not look like a stack trace. True for a timestamped
	// record and for an exception printed without a timestamp.
	sticky     bool
	timed      bool
	recordTime time.Time
	matched    []bool // signature i already counted in this record
}

// seen accumulates one signature's matches.
type seen struct {
	count       int
	first, last time.Time
	example     []byte // raw line, redacted when the report is built
	file        string
}

func newScanner(opt Options, open func(string) (logFile, error)) *scanner {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Location == nil {
		opt.Location = time.Local
	}
	s := &scanner{opt: opt, open: open}
	for _, sig := range Signatures {
		if sig.Pattern != nil { // a half-built entry added by a caller: skip, don't panic
			s.sigs = append(s.sigs, sig)
		}
	}
	s.seen = make([]seen, len(s.sigs))
	s.matched = make([]bool, len(s.sigs))
	patterns := make([]*regexp.Regexp, len(s.sigs))
	for i, sig := range s.sigs {
		patterns[i] = sig.Pattern
	}
	s.filter = cachedPrefilter(patterns)
	s.cand = make([]uint64, s.filter.words)
	return s
}

var errNoPaths = errors.New("scan driver logs: no log paths configured")

func (s *scanner) run(ctx context.Context) (Report, error) {
	s.report.ScannedAt = s.opt.Now()
	if len(s.opt.Paths) == 0 && len(s.opt.Sources) == 0 {
		return s.finish(), errNoPaths
	}
	files := s.resolve(ctx)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return s.finish(), fmt.Errorf("scan driver logs: %w", err)
		}
		open := s.open
		if f.store != nil {
			open = func(string) (logFile, error) { return openObject(ctx, f.store, f.object, f.info, s.opt.MaxBytes) }
		}
		if err := s.scanFile(ctx, f.path, open); err != nil {
			return s.finish(), fmt.Errorf("scan driver logs: %w", err)
		}
	}
	for _, src := range s.opt.Sources {
		if err := s.scanSource(ctx, src); err != nil {
			return s.finish(), fmt.Errorf("scan driver logs: %w", err)
		}
	}
	return s.finish(), nil
}

type candidate struct {
	path string
	info fs.FileInfo
	// store and object are set for an object in an object store.
	store  storage.Store
	object string
}

// resolve expands the globs into regular files, least recently modified
// first, keeping the MaxFiles most recent. A file reached through two
// names (a symlink such as driver-current.log) is read once.
func (s *scanner) resolve(ctx context.Context) []candidate {
	var files []candidate
	listed := map[string]bool{}
	for _, pattern := range s.opt.Paths {
		if isRemote(pattern) {
			for _, c := range s.remoteCandidates(ctx, pattern) {
				if !listed[c.path] {
					listed[c.path] = true
					files = append(files, c)
				}
			}
			continue
		}
		names, err := filepath.Glob(pattern)
		if err != nil {
			s.fail(fmt.Errorf("bad log path pattern %q: %w", pattern, err))
			continue
		}
		if len(names) == 0 {
			s.skip(Skip{Kind: SkipNoFile, Path: pattern})
			continue
		}
		for _, name := range names {
			if listed[name] {
				continue
			}
			listed[name] = true
			// Stat before opening: opening a FIFO would block.
			info, err := os.Stat(name)
			switch {
			case err != nil:
				s.fileError("stat", name, err)
			case info.IsDir():
				s.skip(Skip{Kind: SkipDirectory, Path: name})
			case !info.Mode().IsRegular():
				s.skip(Skip{Kind: SkipNotRegular, Path: name, Mode: info.Mode().Type().String()})
			case slices.ContainsFunc(files, func(c candidate) bool { return c.store == nil && os.SameFile(c.info, info) }):
			default:
				files = append(files, candidate{path: name, info: info})
			}
		}
	}
	slices.SortFunc(files, func(a, b candidate) int {
		return cmp.Or(a.info.ModTime().Compare(b.info.ModTime()), cmp.Compare(a.path, b.path))
	})
	if n := len(files) - MaxFiles; n > 0 {
		s.skip(Skip{Kind: SkipTooMany, N: n, Of: len(files), Max: MaxFiles})
		files = files[n:]
	}
	return files
}

func (s *scanner) errorf(format string, args ...any) {
	s.fail(fmt.Errorf(format, args...))
}

// fail notes an error's message in the report.
func (s *scanner) fail(err error) { s.report.Errors = append(s.report.Errors, err.Error()) }

// skip notes a path passed over in the report, after the errors noted so far.
func (s *scanner) skip(k Skip) {
	k.Errors = len(s.report.Errors)
	s.report.Skipped = append(s.report.Skipped, k)
}

// fileError notes a failed operation on a file as "op path: cause".
func (s *scanner) fileError(op, name string, err error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	s.errorf("%s %s: %v", op, name, err)
}

// scanFile reads the tail of one file. Only a context error is returned;
// file trouble goes to the report.
func (s *scanner) scanFile(ctx context.Context, name string, open func(string) (logFile, error)) error {
	f, err := open(name)
	if err != nil {
		s.fileError("open", name, err)
		return nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		s.fileError("stat", name, err)
		return nil
	}
	if !info.Mode().IsRegular() {
		s.skip(Skip{Kind: SkipNotRegular, Path: name, Mode: info.Mode().Type().String()})
		return nil
	}
	size := info.Size()
	start := max(0, size-s.opt.MaxBytes)
	fileScanned := FileScanned{Path: name, Size: size, Truncated: start > 0, ModTime: info.ModTime()}
	if of, ok := f.(*objectFile); ok { // only the object's tail was kept
		fileScanned.Size += of.skipped
	}

	// Reading from inside a line: drop it, unless the byte before the start
	// ends a line, so a complete first line is not lost.
	dropFirst := false
	if start > 0 {
		var prev [1]byte
		if _, err := f.ReadAt(prev[:], start-1); err != nil {
			s.fileError("read", name, err)
			s.report.Files = append(s.report.Files, fileScanned)
			return nil
		}
		dropFirst = prev[0] != '\n'
	}
	// Read up to the size seen now: a file still being written is not chased.
	counted := &storage.CountingReader{R: io.NewSectionReader(f, start, size-start)}
	ctxErr, readErr := s.scanLines(ctx, name, counted, dropFirst)
	fileScanned.BytesRead = counted.N
	s.report.Files = append(s.report.Files, fileScanned)
	if readErr != nil {
		s.fileError("read", name, readErr)
	}
	return ctxErr
}

// scanLines reads r line by line, cutting lines at MaxLineBytes, and feeds
// them to the record matcher. It returns the context's error, if the context
// ended, and the read error that stopped it, if any.
func (s *scanner) scanLines(ctx context.Context, file string, r io.Reader, dropFirst bool) (ctxErr, readErr error) {
	s.inRecord = false
	br := bufio.NewReaderSize(r, MaxLineBytes)
	lines, read := 0, 0
	for {
		if lines >= checkEvery || read >= checkBytes {
			if err := ctx.Err(); err != nil {
				return err, nil
			}
			lines, read = 0, 0
		}
		line, err := br.ReadSlice('\n')
		lines++
		read += len(line)
		if errors.Is(err, bufio.ErrBufferFull) {
			// Keep the first MaxLineBytes, skip the rest of the line. line
			// points into br's buffer, so look at it before reading on.
			if !dropFirst {
				s.line(file, line)
			}
			dropFirst = false
			for errors.Is(err, bufio.ErrBufferFull) {
				var rest []byte
				rest, err = br.ReadSlice('\n')
				read += len(rest)
			}
			if err != nil {
				return nil, eofIsNil(err)
			}
			continue
		}
		if len(line) > 0 {
			if !dropFirst {
				s.line(file, bytes.TrimRight(line, "\r\n"))
			}
			dropFirst = false
		}
		if err != nil {
			return nil, eofIsNil(err)
		}
	}
}

func eofIsNil(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// line folds one line into the current record and matches it.
func (s *scanner) line(file string, line []byte) {
	if t, ok := parseTimestamp(line, s.opt.Location); ok {
		s.startRecord(true, true, t)
	} else if !s.continues(line) {
		s.startRecord(false, isExceptionHeader(line), time.Time{})
	}
	s.filter.candidates(line, s.cand)
	for i, sig := range s.sigs {
		if s.matched[i] || !isCandidate(s.cand, i) || !sig.Pattern.Match(line) {
			continue
		}
		s.matched[i] = true
		s.record(i, file, line)
	}
}

func (s *scanner) startRecord(timed, sticky bool, t time.Time) {
	s.inRecord, s.timed, s.sticky, s.recordTime = true, timed, sticky, t
	clear(s.matched)
}

// continues reports whether a line without a timestamp belongs to the
// current record. Under a timestamp every such line does (exception text,
// frames, a multi-line progress report). Without timestamps, stack trace
// lines do, and so does everything under an exception up to the next one.
func (s *scanner) continues(line []byte) bool {
	switch {
	case !s.inRecord:
		return false
	case s.timed || isStackContinuation(line):
		return true
	}
	return s.sticky && !isExceptionHeader(line)
}

// isStackContinuation recognises the lines of a Java stack trace under the
// exception line.
func isStackContinuation(line []byte) bool {
	return len(line) > 0 && (line[0] == ' ' || line[0] == '\t') ||
		bytes.HasPrefix(line, []byte("Caused by:")) ||
		bytes.HasPrefix(line, []byte("Suppressed:"))
}

// isExceptionHeader recognises the first line of a Java exception printed
// without a timestamp: `Exception in thread "main" ...` or a class name
// ending in Exception or Error, then a colon or the end of the line.
func isExceptionHeader(line []byte) bool {
	if bytes.HasPrefix(line, []byte("Exception in thread ")) {
		return true
	}
	name := line
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name = line[:i]
	}
	if len(name) == 0 || len(name) > 200 || bytes.IndexByte(name, '.') < 0 {
		return false
	}
	for _, c := range name {
		if !(c == '.' || c == '$' || c == '_' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return bytes.HasSuffix(name, []byte("Exception")) || bytes.HasSuffix(name, []byte("Error"))
}

// record counts a record matching signature i. Its line becomes the
// example when it is the most recent one: files are read least recently
// modified first, but a timestamp says more than the reading order, and a
// record without one never replaces an example that has one.
func (s *scanner) record(i int, file string, line []byte) {
	sn := &s.seen[i]
	sn.count++
	t := s.recordTime
	if t.IsZero() {
		if !sn.last.IsZero() {
			return
		}
	} else {
		if sn.first.IsZero() || t.Before(sn.first) {
			sn.first = t
		}
		if t.Before(sn.last) {
			return
		}
		sn.last = t
	}
	sn.example = append(sn.example[:0], line...)
	sn.file = file
}

// finish builds the matches from what was seen.
func (s *scanner) finish() Report {
	r := s.report
	for i, sn := range s.seen {
		if sn.count == 0 {
			continue
		}
		sig := s.sigs[i]
		r.Matches = append(r.Matches, Match{
			Signature: sig,
			Count:     sn.count,
			First:     sn.first,
			Last:      sn.last,
			Example:   example(sn.example, sig),
			File:      sn.file,
		})
	}
	slices.SortStableFunc(r.Matches, func(a, b Match) int {
		return cmp.Or(
			cmp.Compare(b.Signature.Severity, a.Signature.Severity),
			b.Last.Compare(a.Last),
		)
	})
	return r
}
