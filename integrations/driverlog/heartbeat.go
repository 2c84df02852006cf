package driverlog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// Spark says a streaming query is alive on its own: the driver logs "Streaming query made
// progress: {…}" after each micro-batch (the JSON names the query's id and runId), and, with no
// new data, "Streaming query has been idle and waiting for new data more than 10000 ms." every
// spark.sql.streaming.noDataProgressEventInterval (10 s by default; SPARK-18670). When both
// stop, the query is hung or dead, whatever its topic does.

// Beat is the newest sign of life of one streaming query in a driver log.
type Beat struct {
	Query string    // the query's id ("" when no progress line named it)
	Run   string    // its runId: a new one is a restart
	At    time.Time // when the line was written (its timestamp; else the file's modification time)
	Idle  bool      // an idle line; else a progress line
	Line  string    // the line, redacted and cut to 200 bytes
	File  string
	// Pod is the log's pod where its source has one: whether the driver pod still runs.
	Pod *PodNote

	stamped bool // the progress JSON's timestamp was read
}

// HeartbeatBytes is how much of the end of each log LastBeats reads: minutes of a driver's
// lines, more than the heartbeat's 10 s apart.
const HeartbeatBytes = 1 << 20

var (
	progressMark = []byte("Streaming query made progress:")
	idleMark     = []byte("Streaming query has been idle and waiting for new data")
	jsonField    = regexp.MustCompile(`"(id|runId|timestamp)"\s*:\s*"([^"]*)"`)
	// threadIDs: some log layouts name the query's thread, "[id = …, runId = …]".
	threadIDs = regexp.MustCompile(`\[id = ([0-9a-f-]{36}), runId = ([0-9a-f-]{36})\]`)
)

// LastBeats reads the last maxBytes (HeartbeatBytes when 0 or less) of each file the globs
// match and returns the newest beat of each query, newest first; none when no line says the
// query is alive (the query has not logged one yet, or INFO lines are not logged). An idle line
// that names no query belongs to the query of the progress line before it in the same file.
// Times written without a zone are in loc (nil: time.Local).
func LastBeats(paths []string, maxBytes int64, loc *time.Location) ([]Beat, error) {
	return LastBeatsIn(context.Background(), paths, maxBytes, loc, nil)
}

// LastBeatsIn is LastBeats that also reads object-store prefixes and globs (s3://, gs://;
// rolled and .gz objects) through storage opened with opts (nil opts skips them), and the logs
// of sources (a Kubernetes driver pod's).
func LastBeatsIn(ctx context.Context, paths []string, maxBytes int64, loc *time.Location, opts *storage.Options, sources ...Source) ([]Beat, error) {
	if maxBytes <= 0 {
		maxBytes = HeartbeatBytes
	}
	if loc == nil {
		loc = time.Local
	}
	newest := map[string]Beat{}
	for _, pattern := range paths {
		if isRemote(pattern) {
			if opts == nil {
				continue
			}
			s := &scanner{opt: Options{Storage: *opts}}
			for _, c := range s.remoteCandidates(ctx, pattern) {
				f, err := openObject(ctx, c.store, c.object, c.info, maxBytes)
				if err != nil {
					return nil, fmt.Errorf("read %s: %w", c.path, err)
				}
				if err := beatsIn(io.NewSectionReader(f, 0, 1<<62), c.path, c.info.ModTime(), loc, newest); err != nil {
					return nil, fmt.Errorf("read %s: %w", c.path, err)
				}
			}
			continue
		}
		names, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("logs.paths %q: %w", pattern, err)
		}
		for _, name := range names {
			if err := beatsOf(name, maxBytes, loc, newest); err != nil {
				return nil, err
			}
		}
	}
	if err := beatsFrom(ctx, sources, maxBytes, loc, newest); err != nil {
		return nil, err
	}
	out := make([]Beat, 0, len(newest))
	for _, b := range newest {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out, nil
}

func beatsOf(name string, maxBytes int64, loc *time.Location, newest map[string]Beat) error {
	f, err := os.Open(name)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // rotated away between the glob and the open
		}
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.IsDir() {
		return nil
	}
	if info.Size() > maxBytes {
		if _, err := f.Seek(info.Size()-maxBytes, io.SeekStart); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
	}
	if err := beatsIn(f, name, info.ModTime(), loc, newest); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

// beatsIn notes the heartbeats in r, the tail of a log last written at modTime.
func beatsIn(r io.Reader, name string, modTime time.Time, loc *time.Location, newest map[string]Beat) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var query, run string // of the last progress line
	var pending *Beat     // a progress line whose JSON follows on the next lines
	var pendingLines int
	var lastTime time.Time
	note := func(b Beat) {
		if b.At.IsZero() {
			b.At = modTime
		}
		if old, ok := newest[b.Query]; !ok || !b.At.Before(old.At) {
			newest[b.Query] = b
		}
	}
	for sc.Scan() {
		line := sc.Bytes()
		if t, ok := parseTimestamp(line, loc); ok {
			lastTime = t
		}
		if pending != nil {
			// Spark writes the progress as indented JSON on the lines after the mark.
			for _, m := range jsonField.FindAllSubmatch(line, -1) {
				setField(pending, string(m[1]), string(m[2]))
			}
			pendingLines++
			// The JSON's top level ends with a "}" at the start of a line; its id, runId and
			// timestamp come first, so a progress with many sources need not be read whole.
			if (len(line) > 0 && line[0] == '}') || (pending.Query != "" && pending.Run != "" && pending.stamped) || pendingLines > 200 {
				query, run = pending.Query, pending.Run
				note(*pending)
				pending = nil
			}
			continue
		}
		switch {
		case bytes.Contains(line, progressMark):
			b := Beat{At: lastTime, Line: cutLine(line), File: name}
			pendingLines = 0
			for _, m := range jsonField.FindAllSubmatch(line, -1) {
				setField(&b, string(m[1]), string(m[2]))
			}
			if bytes.HasSuffix(bytes.TrimSpace(line), []byte("{")) {
				pending = &b
				continue
			}
			query, run = b.Query, b.Run
			note(b)
		case bytes.Contains(line, idleMark):
			b := Beat{Query: query, Run: run, At: lastTime, Idle: true, Line: cutLine(line), File: name}
			if m := threadIDs.FindSubmatch(line); m != nil {
				b.Query, b.Run = string(m[1]), string(m[2])
			}
			note(b)
		}
	}
	if pending != nil {
		note(*pending)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return nil
}

func setField(b *Beat, k, v string) {
	switch k {
	case "id":
		if b.Query == "" {
			b.Query = v
		}
	case "runId":
		if b.Run == "" {
			b.Run = v
		}
	case "timestamp":
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			b.At, b.stamped = t, true
		}
	}
}

func cutLine(line []byte) string {
	s := Redact(string(line))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
