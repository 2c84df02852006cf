package spark_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/spark"
)

const meta = `{"batchWatermarkMs":0,"batchTimestampMs":1700000000000,"conf":{"spark.sql.shuffle.partitions":"4"}}`

func TestParseOffsetsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		line       int
		problem    spark.Problem
	}{
		{"empty", "", 1, spark.ProblemEmpty},
		{"only version", "v1", 2, spark.ProblemTruncated},
		{"only version and newline", "v1\n", 2, spark.ProblemTruncated},
		{"no source line", "v1\n" + meta, 3, spark.ProblemTruncated},
		{"truncated metadata", "v1\n{\"batchWatermarkMs\":0,\"batchTi", 2, spark.ProblemTruncated},
		{"truncated source", "v1\n" + meta + "\n{\"topic\":{\"0\":1", 3, spark.ProblemTruncated},
		{"truncated second source", "v1\n" + meta + "\n-\n{\"t\":{\"0\":", 4, spark.ProblemTruncated},
		{"no version", meta + "\n0", 1, spark.ProblemMalformedVersion},
		{"bad version", "vx\n" + meta + "\n0", 1, spark.ProblemMalformedVersion},
		{"version zero", "v0\n" + meta + "\n0", 1, spark.ProblemMalformedVersion},
		{"bare v", "v\n" + meta + "\n0", 1, spark.ProblemMalformedVersion},
		{"future version", "v3\n" + meta + "\n0", 1, spark.ProblemUnsupportedVersion},
		{"huge version", "v99999999999999999999\n" + meta + "\n0", 1, spark.ProblemUnsupportedVersion},
		{"bad metadata json", "v1\n{nope}\n0", 2, spark.ProblemBadJSON},
		{"metadata with trailing data", "v1\n{}}\n0", 2, spark.ProblemBadJSON},
		{"metadata wrong type", "v1\n{\"batchTimestampMs\":\"soon\"}\n0", 2, spark.ProblemInvalid},
		{"bad source json", "v1\n" + meta + "\n{\"t\":{\"0\":1}}garbage", 3, spark.ProblemBadJSON},
		{"empty source line", "v1\n" + meta + "\n\n0", 3, spark.ProblemInvalid},
		{"binary", "v1\n\x00\x01\x02", 2, spark.ProblemBadJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spark.ParseOffsets("offsets/42", []byte(tc.data))
			var pe *spark.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v, want a *ParseError", err)
			}
			if pe.File != "offsets/42" || pe.Line != tc.line || pe.Problem != tc.problem {
				t.Errorf("error = %q (line %d, %s), want line %d, %s", err, pe.Line, pe.Problem, tc.line, tc.problem)
			}
			if !strings.HasPrefix(err.Error(), "offsets/42 line ") {
				t.Errorf("message %q does not name the file and line", err)
			}
		})
	}
}

func TestParseOffsetsAccepted(t *testing.T) {
	// Old logs: an empty metadata line; "-" for a source without offsets; CRLF; trailing newline.
	seq, err := spark.ParseOffsets("offsets/1", []byte("v1\r\n\r\n-\r\n{\"logOffset\":7}\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if seq.HasMetadata || len(seq.Sources) != 2 || seq.Sources[0].Kind != spark.SourceNone || seq.Sources[1].LogOffset != 7 || seq.Sources[1].Index != 1 {
		t.Errorf("seq = %+v", seq)
	}
	// Offsets v2 (Spark 4.1+, named sources): recognised, best effort.
	seq, err = spark.ParseOffsets("offsets/2", []byte("v2\n"+meta+"\nreplies:{\"sms\":{\"0\":12,\"1\":30}}\nrate:17"))
	if err != nil {
		t.Fatal(err)
	}
	if seq.Version != 2 || seq.Sources[0].Name != "replies" || seq.Sources[0].Kafka["sms"][1] != 30 || seq.Sources[1].Name != "rate" || seq.Sources[1].Long != 17 {
		t.Errorf("v2 seq = %+v", seq)
	}
	if seq.Metadata.Conf["spark.sql.shuffle.partitions"] != "4" || seq.Metadata.TimestampMs != 1700000000000 {
		t.Errorf("metadata = %+v", seq.Metadata)
	}
	// Offsets beyond 2^53 stay exact; other JSON is kept raw.
	seq, err = spark.ParseOffsets("offsets/3", []byte("v1\n"+meta+"\n{\"t\":{\"0\":9007199254740993}}\n{\"rate\":{\"a\":1.5}}"))
	if err != nil {
		t.Fatal(err)
	}
	if seq.Sources[0].Kafka["t"][0] != 9007199254740993 || seq.Sources[1].Kind != spark.SourceOther || seq.Sources[1].Raw != `{"rate":{"a":1.5}}` {
		t.Errorf("seq = %+v", seq)
	}
}

func TestParseCommit(t *testing.T) {
	for _, tc := range []struct {
		data    string
		version int
		wm      int64
	}{
		{"v1", 1, 0},
		{"v1\n", 1, 0},
		{"v1\n{}", 1, 0},
		{"v1\n{\"nextBatchWatermarkMs\":5000}", 1, 5000},
		{"v2\n{\"nextBatchWatermarkMs\":0,\"stateUniqueIds\":{\"0\":[[\"a\"],[\"b\",\"c\"]]}}", 2, 0},
	} {
		c, err := spark.ParseCommit("commits/9", []byte(tc.data))
		if err != nil || c.Version != tc.version || c.NextWatermarkMs != tc.wm {
			t.Errorf("ParseCommit(%q) = %+v, %v", tc.data, c, err)
		}
		if tc.version == 2 && c.StateUniqueIDs["0"][1][1] != "c" {
			t.Errorf("state ids = %v", c.StateUniqueIDs)
		}
	}
	for _, tc := range []struct {
		data    string
		line    int
		problem spark.Problem
	}{
		{"", 1, spark.ProblemEmpty},
		{"{}", 1, spark.ProblemMalformedVersion},
		{"v3\n{}", 1, spark.ProblemUnsupportedVersion},
		{"v1\n{\"nextBatchWatermarkMs\":", 2, spark.ProblemTruncated},
		{"v1\n{\"nextBatchWatermarkMs\":\"x\"}", 2, spark.ProblemInvalid},
		{"v1\nnextBatchWatermarkMs", 2, spark.ProblemBadJSON},
	} {
		_, err := spark.ParseCommit("commits/9", []byte(tc.data))
		var pe *spark.ParseError
		if !errors.As(err, &pe) || pe.Line != tc.line || pe.Problem != tc.problem || !strings.HasPrefix(err.Error(), "commits/9 line ") {
			t.Errorf("ParseCommit(%q) error = %v, want line %d %s", tc.data, err, tc.line, tc.problem)
		}
	}
}

func TestParseMetadata(t *testing.T) {
	m, err := spark.ParseMetadata("metadata", []byte(`{"id":"dddc5e7f-1e71-454c-8362-de184444fb5a"}`))
	if err != nil || m.ID != "dddc5e7f-1e71-454c-8362-de184444fb5a" {
		t.Errorf("metadata = %+v, %v", m, err)
	}
	m, err = spark.ParseMetadata("metadata", []byte("{\n  \"id\": \"x\",\n  \"other\": 1\n}\n"))
	if err != nil || m.ID != "x" {
		t.Errorf("pretty metadata = %+v, %v", m, err)
	}
	for _, tc := range []struct {
		data    string
		line    int
		problem spark.Problem
	}{
		{"", 1, spark.ProblemEmpty},
		{`{"id":"abc`, 1, spark.ProblemTruncated},
		{`{"id":`, 1, spark.ProblemTruncated},
		{"{\n\"id\": x}", 2, spark.ProblemBadJSON},
		{`{}`, 1, spark.ProblemInvalid},
		{`{"id":5}`, 1, spark.ProblemInvalid},
		{`{"id":""}`, 1, spark.ProblemInvalid},
		{`["id"]`, 1, spark.ProblemInvalid},
		{"v1\n{\"id\":\"x\"}", 1, spark.ProblemBadJSON},
	} {
		_, err := spark.ParseMetadata("metadata", []byte(tc.data))
		var pe *spark.ParseError
		if !errors.As(err, &pe) || pe.Line != tc.line || pe.Problem != tc.problem || !strings.HasPrefix(err.Error(), "metadata line ") {
			t.Errorf("ParseMetadata(%q) error = %v, want line %d %s", tc.data, err, tc.line, tc.problem)
		}
	}
}

func TestParseOperatorMetadata(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "spark-4.0.0-checkpoint-v2-rocksdb-dedup/state/0/_metadata/metadata"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := spark.ParseOperatorMetadata("state/0/_metadata/metadata", data)
	if err != nil || m.Version != 1 || m.Operator.ID != 0 || m.Operator.Name != "dedupe" || len(m.Stores) != 1 ||
		m.Stores[0].Name != "default" || m.Stores[0].NumPartitions != 5 {
		t.Errorf("operator metadata = %+v, %v", m, err)
	}
	v2 := `v2
{"operatorInfo":{"operatorId":1,"operatorName":"transformWithStateExec"},"stateStoreInfo":[{"storeName":"default","numColsPrefixKey":0,"numPartitions":8,"stateSchemaFilePath":"x"}],"operatorPropertiesJson":"{\"timeMode\":\"NoTime\"}"}`
	m, err = spark.ParseOperatorMetadata("state/1/_metadata/v2/7", []byte(v2))
	if err != nil || m.Version != 2 || m.Stores[0].NumPartitions != 8 || !strings.Contains(m.PropertiesJSON, "NoTime") {
		t.Errorf("v2 operator metadata = %+v, %v", m, err)
	}
	if _, err := spark.ParseOperatorMetadata("state/0/_metadata/metadata", []byte("v1")); err == nil || !strings.HasPrefix(err.Error(), "state/0/_metadata/metadata line 2: truncated") {
		t.Errorf("truncated operator metadata: %v", err)
	}
}

func TestFileNames(t *testing.T) {
	for name, want := range map[string]int64{"0": 0, "42": 42, "560504": 560504, "007": 7} {
		if id, ok := spark.ParseBatchID(name); !ok || id != want {
			t.Errorf("ParseBatchID(%q) = %d, %v", name, id, ok)
		}
	}
	for _, name := range []string{"", ".0.crc", ".42.0b1c.tmp", "42.compact", "x", "99999999999999999999"} {
		if _, ok := spark.ParseBatchID(name); ok {
			t.Errorf("ParseBatchID(%q) accepted", name)
		}
	}
	for name, want := range map[string]bool{".42.8d1c-4f.tmp": true, ".metadata.ab12.TID7.tmp": true, "42": false, ".42.crc": false, ".tmp": false} {
		if spark.IsTempFile(name) != want {
			t.Errorf("IsTempFile(%q) != %v", name, want)
		}
	}
	if !spark.IsChecksumFile(".42.crc") || spark.CRCTarget(".42.crc") != "42" || spark.IsChecksumFile("42") {
		t.Error("checksum names")
	}
	for name, want := range map[string]spark.StateFile{
		"12.delta":    {Version: 12, Kind: spark.StateDelta},
		"10.snapshot": {Version: 10, Kind: spark.StateSnapshot},
		"3.zip":       {Version: 3, Kind: spark.StateZip},
		"4.changelog": {Version: 4, Kind: spark.StateChangelog},
		"2_c80c40ef-6092-497d-badd-733e1cc8929f.changelog": {Version: 2, Kind: spark.StateChangelog, UniqueID: "c80c40ef-6092-497d-badd-733e1cc8929f"},
		"5_ab.zip": {Version: 5, Kind: spark.StateZip, UniqueID: "ab"},
	} {
		if got, ok := spark.ParseStateFileName(name); !ok || got != want {
			t.Errorf("ParseStateFileName(%q) = %+v, %v", name, got, ok)
		}
	}
	for _, name := range []string{"schema", "1.delta.crc", ".1.delta.crc", "x.delta", "1_x.delta", "_1.zip", "1.sst", "-1.delta", "1_.zip"} {
		if got, ok := spark.ParseStateFileName(name); ok {
			t.Errorf("ParseStateFileName(%q) = %+v, accepted", name, got)
		}
	}
}
