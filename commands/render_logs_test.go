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
		"  " + driverlog.Signatures[1].Cause,
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
	tests := []struct {
		name string
		r    driverlog.Report
		want []string
	}{
		{"clean", driverlog.Report{Files: []driverlog.FileScanned{{Path: "/l/driver.log", Size: 12 << 20, BytesRead: 8 << 20, Truncated: true, ModTime: at}}},
			[]string{"No checkpoint trouble found in the driver logs.", "Files scanned:", "  /l/driver.log: last 8.0 MiB of 12.0 MiB (tail only), modified 2026-11-30 10:00:00 UTC"}},
		{"driver pod", driverlog.Report{Files: []driverlog.FileScanned{
			{Path: "pod spark/d container c, previous run", Size: 2048, BytesRead: 2048, ModTime: at, Pod: &driverlog.PodNote{Choice: driverlog.PodPrevious, Restarts: 1, Ended: true, ExitCode: 1, Reason: "Error"}},
			{Path: "pod spark/d container c", Size: 100, BytesRead: 100, Pod: &driverlog.PodNote{Choice: driverlog.PodRunning, Selector: "spark-role=driver", Pods: 2}}}},
			[]string{"No checkpoint trouble found in the driver logs.", "Files scanned:",
				"  pod spark/d container c, previous run: 2.0 KiB, modified 2026-11-30 10:00:00 UTC",
				"    the run before the last restart (restarted once), which ended with exit code 1 (Error)",
				"  pod spark/d container c: 100 B",
				"    the newest running of 2 pods matching spark-role=driver"}},
		{"nothing scanned", driverlog.Report{Errors: []string{"no file matches /l/*.log"}},
			[]string{"No driver log was scanned.", "Errors:", "  no file matches /l/*.log"}},
		{"untimed once", driverlog.Report{Matches: []driverlog.Match{{Signature: sig, Count: 1, Example: "x", File: "/l/a"}}},
			[]string{"CRITICAL Two runs on one checkpoint (CONCURRENT_QUERY): once, no timestamps", "  " + sig.Cause, "  example: x", "  in /l/a"}},
		{"one time, in the future", driverlog.Report{ScannedAt: at, Matches: []driverlog.Match{{Signature: sig, Count: 2, First: at.Add(time.Hour), Last: at.Add(time.Hour)}}},
			[]string{"CRITICAL Two runs on one checkpoint (CONCURRENT_QUERY): 2 times, at 2026-11-30 11:00:00 UTC", "  " + sig.Cause}},
		{"days ago", driverlog.Report{ScannedAt: at, Matches: []driverlog.Match{{Signature: sig, Count: 2, First: at.Add(-80 * time.Hour), Last: at.Add(-50 * time.Hour)}}},
			[]string{"CRITICAL Two runs on one checkpoint (CONCURRENT_QUERY): 2 times, first 2026-11-27 02:00:00 UTC, last 2026-11-28 08:00:00 UTC (2d2h ago)", "  " + sig.Cause}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := logLines(tt.r); !slices.Equal(got, tt.want) {
				t.Errorf("lines:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestLogSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 8 << 20: "8.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := logBytes(n); got != want {
			t.Errorf("logBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
