package driverlog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkScan8MiB scans an 8 MiB driver log: INFO progress chatter with a
// stack trace every few thousand lines, like a day of a busy query.
func BenchmarkScan8MiB(b *testing.B) {
	incident, err := os.ReadFile(filepath.Join("testdata", "driver-concurrent.log"))
	if err != nil {
		b.Fatal(err)
	}
	var log strings.Builder
	for i := 0; log.Len() < 8<<20; i++ {
		fmt.Fprintf(&log, "26/11/30 10:%02d:%02d INFO MicroBatchExecution: Committed offsets for batch %d. Metadata OffsetSeqMetadata(0,1764489612000,HashMap(spark.sql.shuffle.partitions -> 16))\n", i/60%60, i%60, i)
		fmt.Fprintf(&log, "26/11/30 10:%02d:%02d INFO CheckpointFileManager: Writing atomically to file:/chk/commits/%d using temp file file:/chk/commits/.%d.0c2b7d4e-9a1f-4e3b-8c6d-5f2a1b9e7d30.tmp\n", i/60%60, i%60, i, i)
		if i%10 == 0 { // SMS text in the logs: non-ASCII lines must stay on the fast path
			fmt.Fprintf(&log, "26/11/30 10:%02d:%02d INFO SmsReplies: reply %d from +4477009%05d: \"Merci, à demain 👍 — ok für mich\"\n", i/60%60, i%60, i, i)
		}
		if i%2000 == 0 {
			log.Write(incident)
		}
	}
	path := filepath.Join(b.TempDir(), "driver.log")
	if err := os.WriteFile(path, []byte(log.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	opt := testOptions(path)
	opt.MaxBytes = 8 << 20
	b.SetBytes(8 << 20)
	b.ReportAllocs()
	for b.Loop() {
		r, err := Scan(context.Background(), opt)
		if err != nil || len(r.Matches) == 0 {
			b.Fatalf("%v, %d matches", err, len(r.Matches))
		}
	}
}

func BenchmarkRedact(b *testing.B) {
	lines := testdataLines(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			Redact(l)
		}
	}
}
