package driverlog

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A driver log as Spark 3.5 writes it with the default log4j2 layout: a micro-batch's progress
// as indented JSON, then idle lines every 10 s; a restart brings a new runId.
const sparkLog = `25/12/05 10:00:00 INFO SparkContext: Running Spark version 3.5.1
25/12/05 10:00:20 INFO MicroBatchExecution: Streaming query made progress: {
  "id" : "8c5f3e0a-3c1e-4d2f-9a51-1f7e2b3c4d5e",
  "runId" : "11111111-2222-3333-4444-555555555555",
  "name" : "sms-replies",
  "timestamp" : "2025-12-05T10:00:19.512Z",
  "batchId" : 41,
  "numInputRows" : 12,
  "sources" : [ {
    "description" : "KafkaV2[Subscribe[client.replies.sms]]",
    "startOffset" : {
      "client.replies.sms" : { "0" : 100 }
    }
  } ]
}
25/12/05 10:00:30 INFO MicroBatchExecution: Streaming query has been idle and waiting for new data more than 10000 ms.
25/12/05 10:00:40 INFO MicroBatchExecution: Streaming query has been idle and waiting for new data more than 10000 ms.
`

func TestLastBeats(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "driver.log")
	if err := os.WriteFile(path, []byte(sparkLog), 0o644); err != nil {
		t.Fatal(err)
	}
	beats, err := LastBeats([]string{filepath.Join(dir, "*.log")}, 0, time.UTC)
	if err != nil || len(beats) != 1 {
		t.Fatalf("beats %+v, %v", beats, err)
	}
	b := beats[0]
	if b.Query != "8c5f3e0a-3c1e-4d2f-9a51-1f7e2b3c4d5e" || b.Run != "11111111-2222-3333-4444-555555555555" || !b.Idle ||
		!b.At.Equal(time.Date(2025, 12, 5, 10, 0, 40, 0, time.UTC)) {
		t.Fatalf("newest beat %+v", b)
	}
	// A restart: a new runId's progress (on one line, as a JSON layout writes it) is newest.
	restart := `25/12/05 10:05:00 INFO MicroBatchExecution: Streaming query made progress: {"id":"8c5f3e0a-3c1e-4d2f-9a51-1f7e2b3c4d5e","runId":"99999999-2222-3333-4444-555555555555","timestamp":"2025-12-05T10:04:59.900Z","batchId":42}` + "\n"
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(restart)
	f.Close()
	beats, _ = LastBeats([]string{path}, 0, time.UTC)
	if len(beats) != 1 || beats[0].Run != "99999999-2222-3333-4444-555555555555" || beats[0].Idle ||
		!beats[0].At.Equal(time.Date(2025, 12, 5, 10, 4, 59, 900e6, time.UTC)) {
		t.Fatalf("after the restart %+v", beats)
	}
	// Lines that say nothing of a query: no beat, and no error.
	quiet := filepath.Join(dir, "other.txt")
	os.WriteFile(quiet, []byte("25/12/05 10:00:00 INFO SparkContext: Running Spark version 3.5.1\n"), 0o644)
	if beats, err := LastBeats([]string{quiet}, 0, time.UTC); err != nil || len(beats) != 0 {
		t.Fatalf("a log with no heartbeat: %+v %v", beats, err)
	}
}
