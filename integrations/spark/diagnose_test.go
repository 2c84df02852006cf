package spark_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

var smsTopic = sparktest.Topic{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 100}

// healthy is a running Kafka query with state: batches 130..140 planned and committed.
func healthy() sparktest.Spec {
	return sparktest.Spec{
		FirstBatch: 130, LatestBatch: 140, LatestCommit: 140,
		Topics:    []sparktest.Topic{smsTopic},
		State:     &sparktest.State{Partitions: 4, Metadata: true, OperatorName: "dedupe"},
		Checksums: true,
	}
}

// logEnd is the brokers' log end: extra records past batch b in every partition.
func logEnd(b, extra int64) spark.KafkaOffsets {
	parts := map[int32]int64{}
	for p := range smsTopic.Partitions {
		parts[int32(p)] = smsTopic.OffsetAfter(b) + extra
	}
	return spark.KafkaOffsets{smsTopic.Name: parts}
}

func TestDiagnoseHealthy(t *testing.T) {
	t.Parallel()
	spec := healthy()
	dir := writeCheckpoint(t, spec)
	now := spec.CommittedAt(140).Add(20 * time.Second)
	r := diagnose(t, dir, spark.Options{Now: at(now), LogEndOffsets: logEnd(140, 7)})
	if codes(r) != "OK" {
		t.Fatalf("findings = %s, want OK\n%+v", codes(r), r.Findings)
	}
	if r.QueryID != sparktest.DefaultQueryID || r.Planned.ID != 140 || r.Committed.ID != 140 || r.InFlight != nil {
		t.Errorf("report = %+v", r)
	}
	if r.Offsets.First != 130 || r.Offsets.Batches != 11 || r.Offsets.Checksums != 11 || r.Offsets.GapCount != 0 {
		t.Errorf("offsets listing = %+v", r.Offsets)
	}
	if !r.Committed.ModTime.Equal(spec.CommittedAt(140)) || !r.Planned.PlannedAt.Equal(spec.PlannedAt(140)) {
		t.Errorf("times: committed %v planned %v", r.Committed.ModTime, r.Planned.PlannedAt)
	}
	if len(r.Kafka) != 3 || r.Kafka[1].Committed != 14100 || r.Kafka[1].LogEnd != 14107 || r.Kafka[1].Pending != 7 || r.PendingTotal != 21 || r.KafkaBaseline != "offsets/140" || r.BaselineKind != spark.BaselineCommitted {
		t.Errorf("kafka = %+v total %d baseline %q", r.Kafka, r.PendingTotal, r.KafkaBaseline)
	}
	op := r.State[0]
	if op.ExpectedPartitions != 4 || len(op.Stores) != 4 || op.MinVersion != 141 || op.MaxVersion != 141 || op.ExpectedVersion != 141 || op.Stores[0].NewestSnapshot != 140 {
		t.Errorf("state = %+v", op)
	}
	if len(r.Leftovers) != 0 {
		t.Errorf("leftovers = %+v", r.Leftovers)
	}
	if f := r.Findings[0]; !hasLine(&f, spark.Line{Kind: spark.LinePendingWaiting, N: 21}) {
		t.Errorf("OK evidence = %+v", f.Evidence)
	}
}

func TestDiagnoseStale(t *testing.T) {
	t.Parallel()
	spec := healthy()
	dir := writeCheckpoint(t, spec)
	now := spec.CommittedAt(140).Add(2 * time.Hour)

	r := diagnose(t, dir, spark.Options{Now: at(now), StaleAfter: 10 * time.Minute, LogEndOffsets: logEnd(140, 50)})
	f := mustFinding(t, r, spark.CodeStale)
	if f.File != "commits/140" || f.Severity != spark.SeverityCritical || !lineMatches(f.Summary, spark.Line{Kind: spark.LineRecordsWaited, N: 150, For: 2 * time.Hour, Limit: 10 * time.Minute}) ||
		!hasLine(f, spark.Line{Kind: spark.LineStalled, N: 150}) {
		t.Errorf("STALE = %+v", f)
	}
	if r.Has(spark.CodeOK) {
		t.Errorf("findings = %s", codes(r))
	}

	// Nothing waiting: a warning, and the evidence says the input may be idle.
	r = diagnose(t, dir, spark.Options{Now: at(now), LogEndOffsets: logEnd(140, 0)})
	f = mustFinding(t, r, spark.CodeStale)
	if f.Severity != spark.SeverityWarning || !hasLine(f, spark.Line{Kind: spark.LineIdle}) {
		t.Errorf("STALE without pending records = %+v", f)
	}

	// Inside stale_after: not stale.
	r = diagnose(t, dir, spark.Options{Now: at(now), StaleAfter: 3 * time.Hour})
	if r.Has(spark.CodeStale) {
		t.Errorf("findings = %s, want no STALE within 3h", codes(r))
	}
}

// TestDiagnoseStaleCountsOnlyWhileRecordsWait: the stall clock starts when the oldest waiting
// record arrived, not at the newest commit: a topic quiet for two hours whose records arrived
// a minute ago is not stale; the same records 30 minutes old are.
func TestDiagnoseStaleCountsOnlyWhileRecordsWait(t *testing.T) {
	t.Parallel()
	spec := healthy()
	dir := writeCheckpoint(t, spec)
	now := spec.CommittedAt(140).Add(2 * time.Hour)
	cases := []struct {
		name       string
		since      time.Time
		wantStale  bool
		wantWaited time.Duration
	}{
		{"records arrived a minute ago", now.Add(-time.Minute), false, time.Minute},
		{"records arrived 30 minutes ago", now.Add(-30 * time.Minute), true, 30 * time.Minute},
		{"arrival unknown: the newest commit bounds it", time.Time{}, true, 2 * time.Hour},
		{"a timestamp before the newest commit: the commit bounds it", spec.CommittedAt(140).Add(-time.Hour), true, 2 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := diagnose(t, dir, spark.Options{Now: at(now), StaleAfter: 10 * time.Minute, LogEndOffsets: logEnd(140, 3), WaitingSince: c.since})
			if r.Has(spark.CodeStale) != c.wantStale {
				t.Fatalf("findings = %s, want STALE %v", codes(r), c.wantStale)
			}
			if r.WaitingFor != c.wantWaited {
				t.Errorf("WaitingFor = %s, want %s", r.WaitingFor, c.wantWaited)
			}
			if !c.wantStale && !hasLine(&r.Findings[0], spark.Line{Kind: spark.LinePendingWaiting, For: time.Minute, Limit: 10 * time.Minute}) {
				t.Errorf("OK evidence = %+v", r.Findings[0].Evidence)
			}
		})
	}
}

// TestDiagnoseAgainstTheBrokersRange: offsets retention deleted before the query read them
// are counted as lost, not as waiting; partitions the checkpoint does not know are counted
// with their records; a partition the brokers no longer have is named.
func TestDiagnoseAgainstTheBrokersRange(t *testing.T) {
	t.Parallel()
	spec := healthy()
	dir := writeCheckpoint(t, spec)
	now := spec.CommittedAt(140).Add(time.Minute)
	ends, starts := logEnd(140, 10), logEnd(140, 0)
	next := ends[smsTopic.Name][0]
	// Partition 0: retention moved the log start 4 past the checkpoint's offset.
	starts[smsTopic.Name][0] = next - 10 + 4
	// A fourth partition the checkpoint does not know, holding 7 records.
	ends[smsTopic.Name][3], starts[smsTopic.Name][3] = 7, 0
	// Partition 2 is gone from the brokers.
	delete(ends[smsTopic.Name], 2)
	delete(starts[smsTopic.Name], 2)
	r := diagnose(t, dir, spark.Options{Now: at(now), LogEndOffsets: ends, LogStartOffsets: starts})
	if r.LostRecords != 4 || r.LostPartitions != 1 {
		t.Errorf("lost %d records on %d partitions, want 4 on 1", r.LostRecords, r.LostPartitions)
	}
	// Waiting: 10 on partition 1, 6 still on the brokers on partition 0.
	if r.PendingTotal != 16 {
		t.Errorf("pending = %d, want 16 (only records still on the brokers)", r.PendingTotal)
	}
	if r.UnknownPartitions != 1 || r.UnknownRecords != 7 || r.GonePartitions != 1 {
		t.Errorf("unknown %d/%d gone %d, want 1 partition of 7 records, 1 gone", r.UnknownPartitions, r.UnknownRecords, r.GonePartitions)
	}
	if f := mustFinding(t, r, spark.CodeOffsetsGone); f.Severity != spark.SeverityCritical || !lineMatches(f.Summary, spark.Line{Kind: spark.LineOffsetsGone, N: 4, M: 1}) {
		t.Errorf("OFFSETS_GONE = %+v", f)
	}
	if f := mustFinding(t, r, spark.CodeUnknownPartition); !lineMatches(f.Summary, spark.Line{Kind: spark.LineUnknownPartitions, N: 7, M: 1}) || !hasLine(f, spark.Line{Kind: spark.LineUnknownPartition, Partition: 3}) {
		t.Errorf("UNKNOWN_PARTITIONS = %+v", f)
	}
	mustFinding(t, r, spark.CodePartitionGone)
}

func TestDiagnoseUncommittedBatch(t *testing.T) {
	t.Parallel()
	spec := healthy()
	spec.LatestBatch, spec.LatestCommit = 141, 140
	dir := writeCheckpoint(t, spec)

	// Planned 30s ago: in flight, info only, and the checkpoint is still OK.
	r := diagnose(t, dir, spark.Options{Now: at(spec.PlannedAt(141).Add(30 * time.Second)), LogEndOffsets: logEnd(141, 0)})
	f := mustFinding(t, r, spark.CodeUncommittedBatch)
	if f.Severity != spark.SeverityInfo || f.File != "offsets/141" || r.InFlight == nil || r.InFlight.ID != 141 || r.InFlight.For != 30*time.Second || !r.Has(spark.CodeOK) {
		t.Errorf("UNCOMMITTED_BATCH = %+v, in flight %+v, findings %s", f, r.InFlight, codes(r))
	}
	// Pending is measured from the committed batch; the planned batch's end is reported too.
	if k := r.Kafka[0]; k.Committed != 14100 || k.Planned != 14200 || k.Pending != 100 || r.KafkaBaseline != "offsets/140" || r.BaselineKind != spark.BaselineCommitted {
		t.Errorf("kafka row = %+v, baseline %q", k, r.KafkaBaseline)
	}

	// Planned an hour ago and never committed.
	r = diagnose(t, dir, spark.Options{Now: at(spec.PlannedAt(141).Add(time.Hour))})
	f = mustFinding(t, r, spark.CodeUncommittedBatch)
	if f.Severity != spark.SeverityCritical || !lineMatches(f.Summary, spark.Line{Kind: spark.LineNeverCommitted, Batch: 141, For: time.Hour}) ||
		!hasLine(f, spark.Line{Kind: spark.LineRerun, Batch: 141}) {
		t.Errorf("UNCOMMITTED_BATCH = %+v", f)
	}

	// Commits trailing by more than one: inconsistent logs.
	spec.LatestCommit = 137
	dir = writeCheckpoint(t, spec)
	r = diagnose(t, dir, spark.Options{Now: at(spec.PlannedAt(141).Add(time.Minute))})
	f = mustFinding(t, r, spark.CodeUncommittedBatch)
	if !hasLine(f, spark.Line{Kind: spark.LineCommitsBehind, Batch: 141, Commit: 137}) {
		t.Errorf("UNCOMMITTED_BATCH evidence = %+v", f.Evidence)
	}
}

func TestDiagnoseCorruptFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		files   map[string]string
		file    string
		problem spark.Problem
		line    spark.Line
	}{
		{"empty offsets", map[string]string{"offsets/140": ""}, "offsets/140", spark.ProblemEmpty, errorLine("offsets/140 line 1: empty")},
		{"truncated offsets", map[string]string{"offsets/140": "v1\n{\"batchWatermarkMs\":0,\"batchTimes"}, "offsets/140", spark.ProblemTruncated, errorLine("offsets/140 line 2: truncated")},
		{"unknown offsets version", map[string]string{"offsets/140": "v7\n{}\n0"}, "offsets/140", spark.ProblemUnsupportedVersion, errorLine("offsets/140 line 1: unsupported version")},
		{"unparseable source", map[string]string{"offsets/140": "v1\n{}\n{\"client.replies.sms\":{\"0\":1x}}"}, "offsets/140", spark.ProblemBadJSON, errorLine("offsets/140 line 3: unparseable JSON")},
		{"truncated commit", map[string]string{"commits/140": "v1\n{\"nextBatchWate"}, "commits/140", spark.ProblemTruncated, errorLine("commits/140 line 2: truncated")},
		{"no version in commit", map[string]string{"commits/140": "{}"}, "commits/140", spark.ProblemMalformedVersion, errorLine("commits/140 line 1: malformed version")},
		{"corrupt metadata", map[string]string{"metadata": `{"id":`}, "metadata", spark.ProblemTruncated, errorLine("metadata line 1: truncated")},
		{"fewer source lines than sources", map[string]string{"sources/1/0": "\x00v1\n{}"}, "offsets/140", spark.ProblemTruncated, spark.Line{Kind: spark.LineTruncatedSources, File: "offsets/140", N: 1, M: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := healthy()
			spec.Files = tc.files
			dir := writeCheckpoint(t, spec)
			r := diagnose(t, dir, spark.Options{Now: at(spec.CommittedAt(140).Add(time.Second))})
			f := mustFinding(t, r, spark.CodeCorruptFile)
			if f.File != tc.file || f.Problem != tc.problem || !hasLine(f, tc.line) {
				t.Errorf("CORRUPT_FILE = %+v, want %s %s with %+v", f, tc.file, tc.problem, tc.line)
			}
		})
	}
}

// An older empty batch file shows in listings that carry sizes (S3, not local names-only).
func TestDiagnoseEmptyOlderFile(t *testing.T) {
	t.Parallel()
	spec := healthy()
	spec.Files = map[string]string{"offsets/135": ""}
	r, err := spark.Diagnose(t.Context(), memCheckpoint(spec), spark.Options{Now: at(spec.CommittedAt(140))})
	if err != nil {
		t.Fatal(err)
	}
	f := mustFinding(t, r, spark.CodeCorruptFile)
	if f.File != "offsets/135" || f.Problem != spark.ProblemEmpty || f.Severity != spark.SeverityWarning || !hasLine(f, spark.Line{Kind: spark.LineEmptyFails}) {
		t.Errorf("CORRUPT_FILE = %+v", f)
	}
}

func TestDiagnoseTempFilesLeft(t *testing.T) {
	t.Parallel()
	spec := healthy()
	old := spec.CommittedAt(140).Add(-time.Hour)
	spec.Files = map[string]string{
		"offsets/.141.4f0c9a2e-1b7d-4c55-9a51-7d2f4e8b9c10.tmp": "v1\n{",
		"commits/.99.crc":                                       "crc",
		"state/0/2/.142.delta.6d1e.TID33.tmp":                   "x",
		".metadata.0d9e.tmp":                                    "{",
		"offsets/.142.5a5a5a5a-0000-4000-8000-000000000000.tmp": "young",
	}
	spec.ModTimes = map[string]time.Time{
		"offsets/.141.4f0c9a2e-1b7d-4c55-9a51-7d2f4e8b9c10.tmp": old,
		"commits/.99.crc":                     old,
		"state/0/2/.142.delta.6d1e.TID33.tmp": old,
		".metadata.0d9e.tmp":                  old,
	}
	dir := writeCheckpoint(t, spec)
	now := spec.CommittedAt(140).Add(10 * time.Second)
	if err := os.Chtimes(filepath.Join(dir, "offsets/.142.5a5a5a5a-0000-4000-8000-000000000000.tmp"), now, now); err != nil {
		t.Fatal(err)
	}
	r := diagnose(t, dir, spark.Options{Now: at(now)})
	if len(r.Leftovers) != 5 || r.Offsets.TempFiles != 2 || r.Commits.Checksums != 12 {
		t.Errorf("leftovers %+v, offsets %+v, commits %+v", r.Leftovers, r.Offsets, r.Commits)
	}
	var got []string
	for _, f := range r.Findings {
		if f.Code == spark.CodeTempFilesLeft {
			got = append(got, f.File)
			if f.Severity != spark.SeverityWarning {
				t.Errorf("%+v", f)
			}
		}
	}
	want := ".metadata.0d9e.tmp commits/.99.crc offsets/.141.4f0c9a2e-1b7d-4c55-9a51-7d2f4e8b9c10.tmp state/0/2/.142.delta.6d1e.TID33.tmp"
	if strings.Join(sortStrings(got), " ") != want {
		t.Errorf("TEMP_FILES_LEFT files = %v, want %s", got, want)
	}
	var crc *spark.Finding
	for i := range r.Findings {
		if r.Findings[i].File == "commits/.99.crc" {
			crc = &r.Findings[i]
		}
	}
	if crc == nil || !hasLine(crc, spark.Line{Kind: spark.LineOrphanChecksum, File: "commits/.99.crc", Target: "commits/99"}) {
		t.Errorf("orphan checksum finding = %+v", crc)
	}
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestDiagnoseMissing(t *testing.T) {
	t.Parallel()
	now := at(sparktest.DefaultStart.Add(time.Hour))
	t.Run("no checkpoint", func(t *testing.T) {
		r := diagnose(t, filepath.Join(t.TempDir(), "nope"), spark.Options{Now: now})
		f := mustFinding(t, r, spark.CodeMissing)
		if f.Severity != spark.SeverityCritical || f.Summary.Kind != spark.LineNoCheckpoint || len(r.Findings) != 1 {
			t.Errorf("findings = %+v", r.Findings)
		}
	})
	t.Run("empty directory", func(t *testing.T) {
		r := diagnose(t, t.TempDir(), spark.Options{Now: now})
		if f := mustFinding(t, r, spark.CodeMissing); f.Severity != spark.SeverityCritical {
			t.Errorf("%+v", f)
		}
	})
	t.Run("no metadata", func(t *testing.T) {
		spec := healthy()
		spec.NoMetadata = true
		r := diagnose(t, writeCheckpoint(t, spec), spark.Options{Now: at(spec.CommittedAt(140))})
		f := mustFinding(t, r, spark.CodeMissing)
		if f.File != "metadata" || !hasLine(f, spark.Line{Kind: spark.LineMetadataNewID}) || r.QueryID != "" {
			t.Errorf("%+v", f)
		}
	})
	t.Run("previous offsets", func(t *testing.T) {
		spec := healthy()
		spec.Remove = []string{"offsets/139", "offsets/.139.crc", "offsets/135"}
		r := diagnose(t, writeCheckpoint(t, spec), spark.Options{Now: at(spec.CommittedAt(140))})
		f := mustFinding(t, r, spark.CodeMissing)
		if f.File != "offsets/139" || !hasLine(f, spark.Line{Kind: spark.LineExpectBatchMissing, Batch: 139}) {
			t.Errorf("%+v", f)
		}
		if r.Offsets.GapCount != 2 || r.Offsets.Gaps[0] != 135 || r.Offsets.Gaps[1] != 139 {
			t.Errorf("gaps = %+v", r.Offsets)
		}
	})
	t.Run("commit without offsets", func(t *testing.T) {
		spec := healthy()
		spec.Files = map[string]string{"commits/141": "v1\n{}"}
		r := diagnose(t, writeCheckpoint(t, spec), spark.Options{Now: at(spec.CommittedAt(140))})
		f := mustFinding(t, r, spark.CodeMissing)
		if f.File != "offsets/141" || !lineMatches(f.Summary, spark.Line{Kind: spark.LineCommitWithoutOffsets, Commit: 141}) {
			t.Errorf("%+v", f)
		}
	})
	t.Run("fresh query", func(t *testing.T) {
		spec := sparktest.Spec{LatestBatch: -1, LatestCommit: -1}
		r := diagnose(t, writeCheckpoint(t, spec), spark.Options{Now: now})
		if codes(r) != "OK" || r.Planned != nil || !hasLine(&r.Findings[0], spark.Line{Kind: spark.LineNoBatchYet}) {
			t.Errorf("findings = %+v", r.Findings)
		}
	})
}

func TestDiagnoseStateBehind(t *testing.T) {
	t.Parallel()
	spec := healthy()
	spec.State.Partitions = 8
	spec.State.Behind = map[int]int64{3: 2, 5: 200}
	spec.State.MissingPartitions = []int{7}
	dir := writeCheckpoint(t, spec)
	r := diagnose(t, dir, spark.Options{Now: at(spec.CommittedAt(140))})
	f := mustFinding(t, r, spark.CodeStateBehind)
	for _, want := range []spark.Line{
		{Kind: spark.LineStateOld, File: "state/0/3/", Version: 139, State: spark.StateDelta, Want: 141, Commit: 140},
		{Kind: spark.LineNoStateFiles, File: "state/0/5/", Want: 141, Commit: 140},
		{Kind: spark.LinePartitionDirsMissing, File: "state/0/", N: 1, M: 8, Missing: []int{7}},
	} {
		if !hasLine(f, want) {
			t.Errorf("STATE_BEHIND evidence %+v lacks %+v", f.Evidence, want)
		}
	}
	if f.File != "state/0/" || f.Severity != spark.SeverityCritical || !lineMatches(f.Summary, spark.Line{Kind: spark.LineStateBehind, Operator: 0, Name: "dedupe", Commit: 140, N: 3, M: 8, Version: 141}) {
		t.Errorf("STATE_BEHIND = %+v", f)
	}
	if op := r.State[0]; op.MinVersion != 139 || op.MaxVersion != 141 {
		t.Errorf("state = %+v", op)
	}

	// Joins keep one directory per store; a store behind is named.
	spec = healthy()
	spec.State = &sparktest.State{Partitions: 2, Stores: []string{"left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"}}
	spec.Remove = []string{"state/0/1/right-keyToNumValues/141.delta"}
	r = diagnose(t, writeCheckpoint(t, spec), spark.Options{Now: at(spec.CommittedAt(140))})
	f = mustFinding(t, r, spark.CodeStateBehind)
	if len(r.State[0].Stores) != 8 || !hasLine(f, spark.Line{Kind: spark.LineStateOld, File: "state/0/1/right-keyToNumValues/", Version: 140}) {
		t.Errorf("join state: %+v\n%+v", r.State[0].Stores, f)
	}

	// RocksDB with state checkpoint format v2: the ids named in commits/N must exist.
	spec = healthy()
	spec.CommitVersion = 2
	spec.State.Provider = sparktest.RocksDB
	id := sparktest.UniqueID(0, 2, 0, 141)
	spec.Remove = []string{"state/0/2/141_" + id + ".changelog"}
	spec.Files = map[string]string{"state/0/2/141_ffffffff-retried.changelog": "x"}
	r = diagnose(t, writeCheckpoint(t, spec), spark.Options{Now: at(spec.CommittedAt(140))})
	f = mustFinding(t, r, spark.CodeStateBehind)
	if !hasLine(f, spark.Line{Kind: spark.LineUniqueIDMissing, File: "state/0", Partition: 2, Version: 141, UniqueID: id, Commit: 140}) ||
		!lineMatches(f.Summary, spark.Line{Kind: spark.LineStateLacksFiles, Commit: 140}) {
		t.Errorf("STATE_BEHIND = %+v", f)
	}
	if !slices.Contains(r.Hints, spark.HintCommitsV2) {
		t.Errorf("version hints %q", r.Hints)
	}
}

func TestDiagnoseKafkaDisagreements(t *testing.T) {
	t.Parallel()
	spec := healthy()
	dir := writeCheckpoint(t, spec)
	ends := logEnd(140, 5)
	ends[smsTopic.Name][1] = 10    // behind the checkpoint: topic recreated?
	delete(ends[smsTopic.Name], 2) // partition gone
	ends[smsTopic.Name][3] = 40    // a new partition
	ends["unrelated.topic"] = map[int32]int64{0: 1e6}
	r := diagnose(t, dir, spark.Options{Now: at(spec.CommittedAt(140)), LogEndOffsets: ends})
	if len(r.Kafka) != 4 {
		t.Fatalf("kafka rows = %+v", r.Kafka)
	}
	notes := map[int32]spark.PartitionNote{}
	for _, k := range r.Kafka {
		notes[k.Partition] = k.Note
	}
	if notes[1] != spark.NoteAheadOfBroker || notes[2] != spark.NotePartitionGone || notes[3] != spark.NoteNotInCheckpoint || notes[0] != "" {
		t.Errorf("notes = %q", notes)
	}
	if r.PendingTotal != 5 || r.Kafka[1].Pending != 10-14100 {
		t.Errorf("pending total %d, rows %+v", r.PendingTotal, r.Kafka)
	}
}

func TestDiagnoseContextEnded(t *testing.T) {
	t.Parallel()
	spec := healthy()
	dir := writeCheckpoint(t, spec)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r, err := spark.Diagnose(ctx, openLocal(t, dir), spark.Options{})
	if err == nil || r == nil || !r.Has(spark.CodeUnreadable) {
		t.Fatalf("report %+v, err %v", r, err)
	}
}

// largeSpec is the performance case: 10,000 batches in offsets/ and commits/ (with .crc
// sidecars, as on a local filesystem) and 200 state partitions.
var largeSpec = sparktest.Spec{
	FirstBatch: 100, LatestBatch: 10_099, LatestCommit: 10_099,
	Topics:    []sparktest.Topic{{Name: "events", Partitions: 24, RecordsPerBatch: 1000}},
	State:     &sparktest.State{Partitions: 200, Metadata: true, Retained: 3},
	Checksums: true,
}

func memCheckpoint(spec sparktest.Spec) *storagetest.MemStore {
	m := storagetest.NewMemStore("mem://checkpoint")
	for _, f := range sparktest.Layout(spec) {
		if !f.Dir {
			m.Put(f.Path, f.Data, f.ModTime)
		}
	}
	return m
}

// TestDiagnoseReadsFewFiles is the read budget on the large checkpoint. It is held in memory
// because creating its 41,000 files costs tens of seconds on some disks; BenchmarkDiagnoseLarge
// times the same checkpoint on disk.
func TestDiagnoseReadsFewFiles(t *testing.T) {
	t.Parallel()
	cs := newCountingStore(memCheckpoint(largeSpec))
	r, err := spark.Diagnose(t.Context(), cs, spark.Options{Now: at(largeSpec.CommittedAt(largeSpec.LatestCommit))})
	if err != nil {
		t.Fatal(err)
	}
	if codes(r) != "OK" || r.Offsets.Batches != 10_000 || r.Commits.Batches != 10_000 || r.Offsets.Checksums != 10_000 || len(r.State[0].Stores) != 200 {
		t.Fatalf("findings %s, offsets %+v, %d stores", codes(r), r.Offsets, len(r.State[0].Stores))
	}
	if n := cs.reads.Load(); n > 10 {
		t.Errorf("%d files read (%v), want at most 10", n, cs.names)
	}
	want := "metadata offsets/10099 commits/10099 state/0/_metadata/metadata"
	if got := strings.Join(cs.names, " "); got != want {
		t.Errorf("files read: %s, want %s", got, want)
	}
	// root, offsets, commits, state, state/0, its _metadata and 200 partitions (sources/0 is an
	// empty directory, which a key-value store cannot hold).
	if n := cs.lists.Load(); n != 206 {
		t.Errorf("%d listings, want 206", n)
	}
}

// TestDiagnoseReadsFewFilesOnDisk is the same budget through a local directory, where listings
// carry names only and the few files that matter are stat'ed.
func TestDiagnoseReadsFewFilesOnDisk(t *testing.T) {
	t.Parallel()
	spec := healthy()
	spec.Files = map[string]string{"offsets/.141.0b1c.tmp": "v1"}
	spec.ModTimes = map[string]time.Time{"offsets/.141.0b1c.tmp": spec.PlannedAt(100)}
	store := openLocal(t, writeCheckpoint(t, spec))
	if _, ok := store.(storage.NameLister); !ok {
		t.Fatal("local store does not list names only")
	}
	cs := &countingNameLister{countingStore: newCountingStore(store)}
	r, err := spark.Diagnose(t.Context(), cs, spark.Options{Now: at(spec.CommittedAt(140))})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cs.names, " "); got != "metadata offsets/140 commits/140 state/0/_metadata/metadata" {
		t.Errorf("files read: %s", got)
	}
	if cs.lists.Load() != 1 || cs.nameLists.Load() < 6 {
		t.Errorf("%d full listings (want only the root), %d name listings", cs.lists.Load(), cs.nameLists.Load())
	}
	// Times still come through for the batch files and the leftovers.
	if !r.Committed.ModTime.Equal(spec.CommittedAt(140)) || !r.Planned.ModTime.Equal(spec.PlannedAt(140)) {
		t.Errorf("committed %v planned %v", r.Committed.ModTime, r.Planned.ModTime)
	}
	f := mustFinding(t, r, spark.CodeTempFilesLeft)
	if f.File != "offsets/.141.0b1c.tmp" || !hasLine(f, spark.Line{Kind: spark.LineTempFile, File: "offsets/.141.0b1c.tmp", N: 2, For: 40*time.Minute + 30*time.Second}) {
		t.Errorf("TEMP_FILES_LEFT = %+v", f)
	}
}

type countingNameLister struct {
	*countingStore
	nameLists atomic.Int64
}

func (c *countingNameLister) ListNames(ctx context.Context, dir string) ([]storage.Entry, error) {
	c.nameLists.Add(1)
	return c.Store.(storage.NameLister).ListNames(ctx, dir)
}

// BenchmarkDiagnoseLarge times the diagnosis of the large checkpoint on local disk. Creating
// the checkpoint is not timed (it can take tens of seconds where file creation is slow).
func BenchmarkDiagnoseLarge(b *testing.B) {
	dir := b.TempDir()
	if err := sparktest.WriteCheckpoint(dir, largeSpec); err != nil {
		b.Fatal(err)
	}
	store := openLocal(b, dir)
	opts := spark.Options{Now: at(largeSpec.CommittedAt(largeSpec.LatestCommit))}
	for b.Loop() {
		r, err := spark.Diagnose(context.Background(), store, opts)
		if err != nil || !r.Has(spark.CodeOK) {
			b.Fatalf("%v %v", err, codes(r))
		}
	}
}

var _ storage.Store = (*countingStore)(nil)
