package commands

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
)

// logsTestdata is the driver logs the driverlog package tests with.
var logsTestdata = filepath.Join("..", "integrations", "driverlog", "testdata")

func TestLogLines(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	r, err := driverlog.Scan(context.Background(), driverlog.Options{Paths: []string{filepath.Join(logsTestdata, "driver-permission.log"),
		filepath.Join(logsTestdata, "nope-*.log")}, Location: time.UTC, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	got := logLines(r)
	want := []string{
		"CRITICAL Permission denied on checkpoint storage (PERMISSION_DENIED): 4 times, first 2026-11-30 09:15:02 UTC, last 2026-11-30 09:58:21 UTC (2h1m ago)",
		"  The Spark user may not read or write the checkpoint location (file mode, HDFS ACL, or S3 bucket or IAM policy), so no batch can commit until access is restored.",
		"  example: java.nio.file.AccessDeniedException: s3a://AKIA***:***@sms-checkpoints/sms-replies/offsets/58: getFileStatus on s3a://sms-checkpoints/sms-replies/offsets/58: com.amazonaws.services.s3.model.AmazonS3Exception: Forbidden (Service: Amazon S3; Status Code: 403; Error Code: 403 Forbidden; Request ID: 9ZX…",
		"  in " + filepath.Join(logsTestdata, "driver-permission.log"),
		"CRITICAL Streaming query died (QUERY_TERMINATED): 3 times, first 2026-11-30 09:15:02 UTC, last 2026-11-30 09:58:21 UTC (2h1m ago)",
	}
	if !slices.Equal(got[:len(want)], want) {
		t.Errorf("lines:\n%s\nwant prefix:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tail := got[len(got)-4:]
	if tail[0] != "Files scanned:" || !strings.HasPrefix(tail[1], "  "+filepath.Join(logsTestdata, "driver-permission.log")+": 4.5 KiB, modified ") ||
		tail[2] != "Errors:" || tail[3] != "  no file matches "+filepath.Join(logsTestdata, "nope-*.log") {
		t.Errorf("tail of lines: %q", tail)
	}
}

func TestLogLinesEdgeCases(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	sig := driverlog.Signatures[0]
	const concurrent = "  Two drivers (or a stray file left in offsets/ or commits/) are writing the same checkpoint, so batches fail or are replayed until the duplicate run is stopped."
	tests := []struct {
		name string
		r    driverlog.Report
		want []string
	}{
		{"clean", driverlog.Report{Files: []driverlog.FileScanned{{Path: "/l/driver.log", Size: 12 << 20, BytesRead: 8 << 20, Truncated: true, ModTime: at}}},
			[]string{"No checkpoint trouble found in the driver logs.", "Files scanned:", "  /l/driver.log: last 8.0 MiB of 12.0 MiB (tail only), modified 2026-11-30 10:00:00 UTC"}},
		{"driver pod", driverlog.Report{Files: []driverlog.FileScanned{
			{Path: "pod spark/d container c, previous run", Size: 2048, BytesRead: 2048, ModTime: at, Note: "the run before the last restart (restarted once), which ended with exit code 1 (Error)"},
			{Path: "pod spark/d container c", Size: 100, BytesRead: 100, Note: "the newest running of 2 pods matching spark-role=driver"}}},
			[]string{"No checkpoint trouble found in the driver logs.", "Files scanned:",
				"  pod spark/d container c, previous run: 2.0 KiB, modified 2026-11-30 10:00:00 UTC",
				"    the run before the last restart (restarted once), which ended with exit code 1 (Error)",
				"  pod spark/d container c: 100 B",
				"    the newest running of 2 pods matching spark-role=driver"}},
		{"nothing scanned", driverlog.Report{Skipped: []driverlog.Skip{{Kind: driverlog.SkipNoFile, Path: "/l/*.log"}}},
			[]string{"No driver log was scanned.", "Errors:", "  no file matches /l/*.log"}},
		{"errors and skips in the order met", driverlog.Report{Errors: []string{"stat /l/a.log: no such file or directory", `bad log path pattern "[": syntax error in pattern`, "list s3://b/l: AccessDenied"},
			Skipped: []driverlog.Skip{{Kind: driverlog.SkipDirectory, Path: "/l/d.log", Errors: 1}, {Kind: driverlog.SkipNoObject, Path: "s3://b/l/*.log", Errors: 2},
				{Kind: driverlog.SkipNotRegular, Path: "/l/fifo.log", Mode: "p---------", Errors: 2}, {Kind: driverlog.SkipTooMany, N: 3, Of: 67, Max: 64, Errors: 2}}},
			[]string{"No driver log was scanned.", "Errors:",
				"  stat /l/a.log: no such file or directory",
				"  /l/d.log is a directory, not a log file",
				`  bad log path pattern "[": syntax error in pattern`,
				"  no object matches s3://b/l/*.log",
				"  /l/fifo.log is not a regular file (p---------)",
				"  skipped the 3 least recently modified of 67 log files; only the newest 64 are scanned",
				"  list s3://b/l: AccessDenied"}},
		{"untimed once", driverlog.Report{Matches: []driverlog.Match{{Signature: sig, Count: 1, Example: "x", File: "/l/a"}}},
			[]string{"CRITICAL Two runs on one checkpoint (CONCURRENT_QUERY): once, no timestamps", concurrent, "  example: x", "  in /l/a"}},
		{"one time, in the future", driverlog.Report{ScannedAt: at, Matches: []driverlog.Match{{Signature: sig, Count: 2, First: at.Add(time.Hour), Last: at.Add(time.Hour)}}},
			[]string{"CRITICAL Two runs on one checkpoint (CONCURRENT_QUERY): 2 times, at 2026-11-30 11:00:00 UTC", concurrent}},
		{"days ago", driverlog.Report{ScannedAt: at, Matches: []driverlog.Match{{Signature: sig, Count: 2, First: at.Add(-80 * time.Hour), Last: at.Add(-50 * time.Hour)}}},
			[]string{"CRITICAL Two runs on one checkpoint (CONCURRENT_QUERY): 2 times, first 2026-11-27 02:00:00 UTC, last 2026-11-28 08:00:00 UTC (2d2h ago)", concurrent}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := logLines(tt.r); !slices.Equal(got, tt.want) {
				t.Errorf("lines:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

// TestSignatureWords: every signature driverlog matches has a title and one sentence saying
// what it means, so a new signature cannot ship without words; an unknown ID shows as itself.
func TestSignatureWords(t *testing.T) {
	ids := map[string]bool{}
	for _, sig := range driverlog.Signatures {
		ids[sig.ID] = true
		w, ok := signatureWords[sig.ID]
		if !ok || w.title == "" {
			t.Errorf("%s: no title in signatureWords", sig.ID)
		}
		// One sentence: ends with a period and holds no other sentence end.
		if !strings.HasSuffix(w.cause, ".") || strings.Contains(strings.TrimSuffix(w.cause, "."), ". ") {
			t.Errorf("%s: cause is not one sentence: %q", sig.ID, w.cause)
		}
	}
	for id := range signatureWords {
		if !ids[id] {
			t.Errorf("signatureWords has %s, which driverlog has no signature for", id)
		}
	}
	if got := signatureTitle("NEW_SIGNATURE"); got != "NEW_SIGNATURE" {
		t.Errorf("unknown signature titled %q", got)
	}
}

func TestLogSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 8 << 20: "8.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := logBytes(n); got != want {
			t.Errorf("logBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
