package spark_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
)

// TestFixturesAreSparkBytes pins every fixture to the size and sha256 SOURCES.md lists.
func TestFixturesAreSparkBytes(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(fixtures, "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([0-9]+) \\| `([0-9a-f]{64})` \\|")
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) != 21 {
		t.Fatalf("SOURCES.md lists %d files, want 21", len(rows))
	}
	for _, m := range rows {
		data, err := os.ReadFile(filepath.Join(fixtures, m[1]))
		if err != nil {
			t.Errorf("%s: %v", m[1], err)
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != m[3] || strconv.Itoa(len(data)) != m[2] {
			t.Errorf("%s: %d bytes sha256 %s, SOURCES.md says %s bytes %s", m[1], len(data), got, m[2], m[3])
		}
	}
}

func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }

// Fixture 1: Spark 4.x, RocksDB, state checkpoint format v2, batches 0-3 planned and committed.
func TestFixtureSpark40RocksDBDedup(t *testing.T) {
	t.Parallel()
	dir := copyFixture(t, "spark-4.0.0-checkpoint-v2-rocksdb-dedup")
	stamps := []int64{1757005975492, 1757005979699, 1757005982176, 1757005984499}
	for n, ts := range stamps {
		setMtime(t, filepath.Join(dir, "offsets", strconv.Itoa(n)), ms(ts))
		setMtime(t, filepath.Join(dir, "commits", strconv.Itoa(n)), ms(ts).Add(time.Second))
	}
	now := ms(stamps[3]).Add(time.Minute)
	r := diagnose(t, dir, spark.Options{Now: at(now)})

	if r.QueryID != "ccaf96d0-9b51-437a-a2c6-f53efd7e6be4" {
		t.Errorf("query id = %q", r.QueryID)
	}
	if r.Offsets.First != 0 || r.Offsets.Latest != 3 || r.Offsets.Batches != 4 || r.Commits.Latest != 3 || r.Commits.Batches != 4 {
		t.Errorf("offsets %+v commits %+v, want batches 0..3 in both", r.Offsets, r.Commits)
	}
	if r.Planned == nil || r.Planned.ID != 3 || !r.Planned.PlannedAt.Equal(ms(1757005984499)) {
		t.Fatalf("planned = %+v, want batch 3 planned at 1757005984499", r.Planned)
	}
	if r.Committed == nil || r.Committed.ID != 3 || r.InFlight != nil || r.CommittedOffsets != r.Planned {
		t.Fatalf("committed = %+v, in flight %+v: want batch 3 committed, nothing in flight", r.Committed, r.InFlight)
	}
	src := r.Planned.Offsets.Sources
	if len(src) != 1 || src[0].Kind != spark.SourceLong || src[0].Long != 3 {
		t.Errorf("sources = %+v, want the MemoryStream offset 3", src)
	}
	if got := r.Planned.Offsets.Metadata.Conf["spark.sql.streaming.stateStore.providerClass"]; !strings.HasSuffix(got, "RocksDBStateStoreProvider") {
		t.Errorf("provider class = %q", got)
	}
	c := r.Committed.Commit
	if c.Version != 2 || len(c.StateUniqueIDs["0"]) != 5 || c.StateUniqueIDs["0"][0][0] != "bf826c41-d5f6-4abb-bf56-379167c045cd" ||
		c.StateUniqueIDs["0"][4][0] != "54731796-ed79-463f-a4ee-fbd027dc3374" {
		t.Errorf("commits/3 = %+v", c)
	}
	if len(r.State) != 1 || r.State[0].Metadata == nil || r.State[0].Metadata.Operator.Name != "dedupe" ||
		r.State[0].Metadata.Stores[0].NumPartitions != 5 || r.State[0].ExpectedVersion != 4 {
		t.Fatalf("state = %+v", r.State)
	}
	if !slices.Contains(r.Hints, spark.HintCommitsV2) {
		t.Errorf("version hints = %q", r.Hints)
	}
	// SOURCES.md: the state files were not copied (binary). For these bytes the reader is right
	// to say that all 5 partitions of operator 0 lack version 4.
	f := mustFinding(t, r, spark.CodeStateBehind)
	if f.File != "state/0/" || !hasLine(f, spark.Line{Kind: spark.LinePartitionDirsMissing, N: 5, M: 5}) {
		t.Errorf("STATE_BEHIND = %+v", f)
	}
	if codes(r) != "STATE_BEHIND" {
		t.Errorf("findings = %s, want only STATE_BEHIND", codes(r))
	}

	// With the state files Spark wrote (named <batch+1>_<id from commits/batch>.changelog,
	// e.g. state/0/0/2_c80c40ef-... for commits/1), the checkpoint is healthy.
	for p, ids := range c.StateUniqueIDs["0"] {
		for _, name := range []string{"4_" + ids[0] + ".changelog", "3_older.changelog"} {
			path := filepath.Join(dir, "state", "0", strconv.Itoa(p), name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r = diagnose(t, dir, spark.Options{Now: at(now)})
	if codes(r) != "OK" {
		t.Fatalf("findings = %s, want OK\n%+v", codes(r), r.Findings)
	}
	if s := r.State[0]; len(s.Stores) != 5 || s.MinVersion != 4 || s.MaxVersion != 4 || s.Stores[2].NewestKind != spark.StateChangelog {
		t.Errorf("state = %+v", s)
	}

	// A state file with a unique id other than the one commits/3 names is not the live one.
	p3 := filepath.Join(dir, "state", "0", "3", "4_"+c.StateUniqueIDs["0"][3][0]+".changelog")
	if err := os.Rename(p3, filepath.Join(dir, "state", "0", "3", "4_0000-retried.changelog")); err != nil {
		t.Fatal(err)
	}
	r = diagnose(t, dir, spark.Options{Now: at(now)})
	f = mustFinding(t, r, spark.CodeStateBehind)
	if !hasLine(f, spark.Line{Kind: spark.LineUniqueIDMissing, File: "state/0", Partition: 3, Version: 4, UniqueID: "bfdda7d9-f699-4e2b-acbd-8cf1687fd017", Commit: 3}) {
		t.Errorf("STATE_BEHIND evidence = %+v", f.Evidence)
	}
}

// Fixture 2: Spark 2.4.3, one Kafka topic with 5 partitions, offsets/0 only (commits/ not copied).
func TestFixtureSpark243Kafka(t *testing.T) {
	t.Parallel()
	const topic = "spark-test-topic-2b8619f5-d3c4-4c2d-b5d1-8d9d9458aa62"
	now := ms(1568508285207).Add(time.Hour)
	r := diagnose(t, filepath.Join(fixtures, "spark-2.4.3-kafka-include-headers"), spark.Options{
		Now:           at(now),
		LogEndOffsets: spark.KafkaOffsets{topic: {0: 5, 1: 3, 2: 3, 3: 3, 4: 10}, "another-topic": {0: 99}},
	})
	if r.QueryID != "fc415a71-f0a2-4c3c-aeaf-f9e258c3f726" {
		t.Errorf("query id = %q", r.QueryID)
	}
	if r.Planned == nil || r.Planned.ID != 0 || !r.Planned.PlannedAt.Equal(ms(1568508285207)) {
		t.Fatalf("planned = %+v", r.Planned)
	}
	if r.Committed != nil || r.Commits.Present {
		t.Errorf("committed = %+v, commits %+v: the copy has no commits/", r.Committed, r.Commits)
	}
	if got := r.Planned.Offsets.Metadata.Conf["spark.sql.shuffle.partitions"]; got != "5" {
		t.Errorf("shuffle partitions = %q", got)
	}
	if len(r.Kafka) != 5 {
		t.Fatalf("kafka rows = %+v, want 5 partitions", r.Kafka)
	}
	for i, k := range r.Kafka {
		if k.Topic != topic || k.Partition != int32(i) || k.Planned != 3 || k.Committed != -1 {
			t.Errorf("row %d = %+v, want partition %d at next offset 3", i, k, i)
		}
	}
	// No committed batch: pending is measured from the planned batch, and said so.
	if r.KafkaBaseline != "offsets/0" || r.BaselineKind != spark.BaselineNoCommit || !r.PendingKnown || r.PendingTotal != 2+7 ||
		r.Kafka[0].Pending != 2 || r.Kafka[4].Pending != 7 || r.Kafka[1].Pending != 0 {
		t.Errorf("baseline %q pending %d rows %+v", r.KafkaBaseline, r.PendingTotal, r.Kafka)
	}
	// As SOURCES.md says: for these bytes, offsets/0 without commits/0.
	f := mustFinding(t, r, spark.CodeUncommittedBatch)
	if f.File != "offsets/0" || f.Severity != spark.SeverityCritical || !hasLine(f, spark.Line{Kind: spark.LineNoCommitsDir}) {
		t.Errorf("UNCOMMITTED_BATCH = %+v", f)
	}
	if r.InFlight == nil || r.InFlight.ID != 0 || r.InFlight.For != time.Hour {
		t.Errorf("in flight = %+v", r.InFlight)
	}
	if r.Has(spark.CodeMissing) || r.Has(spark.CodeOK) {
		t.Errorf("findings = %s", codes(r))
	}
}

// Fixture 3: Spark 2.1.0 offset log only (batches 0-14 purged). SOURCES.md says 13 Kafka
// topics; both files hold 12 (kafka-topic, kafka-topic1..18 / stress1..18 with gaps), and the
// test asserts what the files hold.
func TestFixtureSpark210MultiTopic(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(fixtures, "spark-2.1.0-offset-log-kafka-multitopic")
	r := diagnose(t, dir, spark.Options{Now: at(ms(1480732570644).Add(time.Minute))})
	if r.QueryID != "" || !r.Has(spark.CodeMissing) || r.Finding(spark.CodeMissing).File != "metadata" {
		t.Errorf("query id %q, findings %s: want MISSING metadata", r.QueryID, codes(r))
	}
	if r.Offsets.First != 15 || r.Offsets.Latest != 16 || r.Offsets.Batches != 2 || r.Planned.ID != 16 {
		t.Fatalf("offsets = %+v", r.Offsets)
	}
	if !r.Planned.PlannedAt.Equal(ms(1480732570644)) || r.Planned.Offsets.Metadata.Conf != nil {
		t.Errorf("planned = %+v", r.Planned)
	}
	k := r.Planned.Offsets.Sources[0].Kafka
	if len(k) != 12 || len(k["kafka-topic"]) != 26 || k["kafka-topic"][4] != 4 || k["kafka-topic"][13] != 1 || k["kafka-topic4"][0] != 9 ||
		len(k["kafka-topic3"]) != 28 || k["kafka-topic18"][1] != 0 {
		t.Errorf("kafka offsets of batch 16 = %v", k)
	}
	if !slices.Contains(r.Hints, spark.HintOffsetsNoConf) {
		t.Errorf("version hints = %q", r.Hints)
	}
	f := mustFinding(t, r, spark.CodeUncommittedBatch)
	if !hasLine(f, spark.Line{Kind: spark.LineNoConf}) {
		t.Errorf("UNCOMMITTED_BATCH evidence = %+v", f.Evidence)
	}

	data, err := os.ReadFile(filepath.Join(dir, "offsets", "15"))
	if err != nil {
		t.Fatal(err)
	}
	seq, err := spark.ParseOffsets("offsets/15", data)
	if err != nil {
		t.Fatal(err)
	}
	k = seq.Sources[0].Kafka
	if seq.Metadata.TimestampMs != 1480732569701 || len(k) != 12 || k["stress5"][2] != 6 || k["stress5"][0] != 4 || k["stress4"][0] != 9 {
		t.Errorf("offsets/15 = %+v", seq)
	}
}

// Fixture 4: a file source and a Kafka source in one offsets file, with a trailing newline.
func TestFixtureSpark210FileAndKafka(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(fixtures, "spark-2.1.0-offset-log-file-and-kafka", "offsets", "0"))
	if err != nil {
		t.Fatal(err)
	}
	seq, err := spark.ParseOffsets("offsets/0", data)
	if err != nil {
		t.Fatal(err)
	}
	if seq.Version != 1 || seq.Metadata.TimestampMs != 1480981499528 || len(seq.Sources) != 2 {
		t.Fatalf("offsets/0 = %+v", seq)
	}
	if s := seq.Sources[0]; s.Kind != spark.SourceFile || s.LogOffset != 345 {
		t.Errorf("source 0 = %+v, want file source logOffset 345", s)
	}
	if s := seq.Sources[1]; s.Kind != spark.SourceKafka || len(s.Kafka) != 1 || s.Kafka["topic-0"][0] != 1 {
		t.Errorf("source 1 = %+v, want topic-0 partition 0 at 1", s)
	}
}

// Fixture 5: Spark 2.1.0 MemoryStream aggregation, before the commit log existed.
func TestFixtureSpark210MemoryAggregate(t *testing.T) {
	t.Parallel()
	r := diagnose(t, filepath.Join(fixtures, "spark-2.1.0-memory-aggregate"), spark.Options{Now: at(ms(1489180209261).Add(time.Second))})
	if r.QueryID != "dddc5e7f-1e71-454c-8362-de184444fb5a" {
		t.Errorf("query id = %q", r.QueryID)
	}
	if r.Planned.ID != 1 || r.Planned.Offsets.Sources[0].Long != 2 || !r.Planned.PlannedAt.Equal(ms(1489180209261)) {
		t.Errorf("planned = %+v", r.Planned)
	}
	if r.Offsets.First != 0 || r.Offsets.Batches != 2 {
		t.Errorf("offsets = %+v", r.Offsets)
	}
	// One second after planning: in flight, not yet alarming.
	f := mustFinding(t, r, spark.CodeUncommittedBatch)
	if f.Severity != spark.SeverityInfo || r.InFlight.For != time.Second || !r.Has(spark.CodeOK) {
		t.Errorf("UNCOMMITTED_BATCH %+v in flight %+v findings %s", f, r.InFlight, codes(r))
	}
	data, err := os.ReadFile(filepath.Join(fixtures, "spark-2.1.0-memory-aggregate", "offsets", "0"))
	if err != nil {
		t.Fatal(err)
	}
	seq, err := spark.ParseOffsets("offsets/0", data)
	if err != nil || seq.Sources[0].Long != 0 || seq.Metadata.TimestampMs != 1489180207737 {
		t.Errorf("offsets/0 = %+v, %v", seq, err)
	}
}

// Fixture 6: raw Kafka source files.
func TestFixtureKafkaSourceFiles(t *testing.T) {
	t.Parallel()
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(fixtures, "kafka-source-files", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	k, err := spark.ParseKafkaOffsets("kafka-source-offset-version-2.1.0.txt", read("kafka-source-offset-version-2.1.0.txt"))
	if err != nil || len(k) != 2 || k["topic1"][0] != 456 || k["topic1"][1] != 789 || k["topic2"][0] != 0 {
		t.Errorf("2.1.0 offset = %v, %v", k, err)
	}
	k, version, err := spark.ParseKafkaInitialOffsets("sources/0/0", read("kafka-source-initial-offset-version-2.1.0.bin"))
	if err != nil || version != 0 || len(k["kafka-initial-offset-2-1-0"]) != 3 || k["kafka-initial-offset-2-1-0"][2] != 2 {
		t.Errorf("2.1.0 initial offsets = %v, v%d, %v", k, version, err)
	}
	_, _, err = spark.ParseKafkaInitialOffsets("sources/0/0", read("kafka-source-initial-offset-future-version.bin"))
	pe, ok := err.(*spark.ParseError)
	if !ok || pe.Problem != spark.ProblemUnsupportedVersion || pe.Line != 1 || !strings.HasPrefix(err.Error(), "sources/0/0 line 1: unsupported version") {
		t.Errorf("future version: %v", err)
	}
	// The shape Spark 2.1.1+ writes: 0x00, v1, newline, JSON.
	k, version, err = spark.ParseKafkaInitialOffsets("sources/0/0", []byte("\x00v1\n{\"t\":{\"0\":7}}"))
	if err != nil || version != 1 || k["t"][0] != 7 {
		t.Errorf("2.1.1+ initial offsets = %v, v%d, %v", k, version, err)
	}
}
