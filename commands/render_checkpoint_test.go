package commands

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestCheckpointLines: a checkpoint report laid out for people: the facts, the brokers' pending
// records, the state, the findings with their evidence.
func TestCheckpointLines(t *testing.T) {
	topic := sparktest.Topic{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 100}
	spec := sparktest.Spec{FirstBatch: 130, LatestBatch: 141, LatestCommit: 140, Topics: []sparktest.Topic{topic},
		State: &sparktest.State{Partitions: 4, Metadata: true, OperatorName: "dedupe"}, Checksums: true}
	dir := t.TempDir()
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ends := map[int32]int64{}
	for p := range topic.Partitions {
		ends[int32(p)] = topic.OffsetAfter(141) + 3
	}
	now := spec.PlannedAt(141).Add(time.Hour)
	// Retention took partition 2 up to 14150: 50 records past the commit were never read.
	starts := spark.KafkaOffsets{topic.Name: {0: 0, 1: 0, 2: topic.OffsetAfter(140) + 50}}
	r, err := spark.Diagnose(context.Background(), st, spark.Options{Now: func() time.Time { return now },
		LogEndOffsets: spark.KafkaOffsets{topic.Name: ends}, LogStartOffsets: starts})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(checkpointLines(r), "\n") + "\n"
	for _, want := range []string{
		"Checkpoint " + dir + "\n",
		"query id " + sparktest.DefaultQueryID,
		"Planned:   batch 141 (offsets/141, planned 2025-01-01 00:11:00 UTC, 1h0m ago)",
		"Committed: batch 140 (commits/140, written 2025-01-01 00:10:30 UTC, 1h0m ago)",
		"In flight: batch 141 for 1h0m",
		"Logs:      offsets/ 12 batches 130..141 +12 .crc, 0 temp, commits/ 11 batches 130..140 +11 .crc, 0 temp",
		"Kafka, pending counted from offsets/140:",
		"  client.replies.sms[0]: committed 14100, planned 14200, log end 14203, pending 103",
		"  client.replies.sms[2]: committed 14100, planned 14200, log start 14150, log end 14203, pending 53",
		"  pending total: 259 records",
		"  deleted by retention before the query read them: 50 records on 1 partition",
		"State:     operator 0 (dedupe): 4/4 partitions, newest versions 141..141 (want 141)",
		"Findings:\n  CRITICAL UNCOMMITTED_BATCH [offsets/141]: batch 141 was planned 1h0m ago and never committed",
		"  CRITICAL STALE [commits/140]: 259 records have waited 1h0m with no commit (stale after 10m0s)",
		"    - 259 records are waiting on the brokers: the query is stalled, not idle",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if testing.Verbose() {
		t.Log("\n" + text)
	}
}

// sparkLineCases are a checkpoint finding's lines, one or more per kind, with the sentence each
// reads as (the words integrations/spark made before issue 29).
var sparkLineCases = []struct {
	line spark.Line
	want string
}{
	// Summaries.
	{spark.Line{Kind: spark.LineStopped, File: "/cp", Text: "context canceled"}, "the diagnosis stopped at /cp: context canceled"},
	{spark.Line{Kind: spark.LineVanished, File: "offsets/140"}, "offsets/140 vanished while it was being read"},
	{spark.Line{Kind: spark.LineCannot, Op: "list", File: "commits/", Class: storage.ClassPermission}, "cannot list commits/: permission denied"},
	{spark.Line{Kind: spark.LineCannotError, Text: "list /cp: permission denied"}, "cannot list /cp: permission denied"},
	{spark.Line{Kind: spark.LineCorrupt, File: "offsets/4", Problem: spark.ProblemEmpty}, "offsets/4 is corrupt (empty)"},
	{spark.Line{Kind: spark.LineCorrupt, File: "commits/140", Problem: spark.ProblemMalformedVersion}, "commits/140 is corrupt (malformed version)"},
	{spark.Line{Kind: spark.LineError, Text: "offsets/140 line 1: empty: Spark: Incomplete log file"}, "offsets/140 line 1: empty: Spark: Incomplete log file"},
	{spark.Line{Kind: spark.LineNoCheckpoint, File: "s3://spark-checkpoints/pipelines/nothing-here"}, "no checkpoint at s3://spark-checkpoints/pipelines/nothing-here"},
	{spark.Line{Kind: spark.LineNotACheckpoint, File: "/cp"}, "no checkpoint at /cp: no metadata, offsets/ or commits/"},
	{spark.Line{Kind: spark.LineNoMetadata}, "the checkpoint has no metadata file (query id)"},
	{spark.Line{Kind: spark.LineConsistent}, "the checkpoint is consistent"},
	{spark.Line{Kind: spark.LineEmpty, File: "offsets/135"}, "offsets/135 is empty"},
	{spark.Line{Kind: spark.LineFewerSources, File: "offsets/140", N: 1, Target: "sources/", M: 2}, "offsets/140 has 1 source lines, sources/ shows 2 sources"},
	{spark.Line{Kind: spark.LineOffsetsMissing, File: "offsets/139", Batch: 140}, "offsets/139 is missing: Spark needs it to restart at batch 140"},
	{spark.Line{Kind: spark.LineCommitWithoutOffsets, Commit: 141}, "commits/141 has no offsets/141"},
	{spark.Line{Kind: spark.LineUncommittedUnknown, Batch: 141}, "batch 141 has no commit (offsets/141 without commits/141), planned at an unknown time"},
	{spark.Line{Kind: spark.LineNeverCommitted, Batch: 141, For: time.Hour}, "batch 141 was planned 1h0m ago and never committed (offsets/141 without commits/141)"},
	{spark.Line{Kind: spark.LineInFlightFor, Batch: 141, For: 30 * time.Second}, "batch 141 is in flight for 30s (offsets/141 without commits/141)"},
	{spark.Line{Kind: spark.LineNoCommitFor, For: 2 * time.Hour, Limit: 10 * time.Minute}, "no commit for 2h0m (stale after 10m0s)"},
	{spark.Line{Kind: spark.LineRecordsWaited, N: 150, For: 2 * time.Hour, Limit: 10 * time.Minute}, "150 records have waited 2h0m with no commit (stale after 10m0s)"},
	{spark.Line{Kind: spark.LineOffsetsGone, N: 4, M: 1}, "4 records on 1 partition are no longer on the brokers: retention deleted them before the query read them"},
	{spark.Line{Kind: spark.LineUnknownPartitions, N: 7, M: 2}, "2 partitions of the topics the query reads hold 7 records the checkpoint does not know"},
	{spark.Line{Kind: spark.LinePartitionsGone, M: 1}, "1 partition in the checkpoint no longer exist on the brokers"},
	{spark.Line{Kind: spark.LineStateBehind, Operator: 0, Name: "dedupe", Commit: 140, N: 3, M: 8, Version: 141}, "state of operator 0 (dedupe) is behind commits/140: 3 of 8 stores lack version 141"},
	{spark.Line{Kind: spark.LineStateBehind, Operator: 2, Commit: 140, N: 1, M: 4, Version: 141}, "state of operator 2 is behind commits/140: 1 of 4 stores lack version 141"},
	{spark.Line{Kind: spark.LineStateLacksFiles, Operator: 0, Commit: 140}, "state of operator 0 lacks files named in commits/140"},
	{spark.Line{Kind: spark.LineLeftovers, N: 2, File: "offsets/", Limit: 5 * time.Minute}, "2 leftover files in offsets/ older than 5m0s"},
	{spark.Line{Kind: spark.LineLeftovers, N: 1, Limit: 5 * time.Minute}, "1 leftover file in the checkpoint root older than 5m0s"},

	// Evidence.
	{spark.Line{Kind: spark.LineErrorClass, Class: storage.ClassPermission}, "error class: permission denied"},
	{spark.Line{Kind: spark.LineAfterStopUnknown}, "what follows the stop is unknown"},
	{spark.Line{Kind: spark.LineNoCheckpointFiles, N: 3}, "the location holds 3 entries, none of them a checkpoint file"},
	{spark.Line{Kind: spark.LineMetadataOnce}, "metadata is written once at the query's first start"},
	{spark.Line{Kind: spark.LineMetadataNewID}, "on restart Spark writes a new one with a new query id, so the id in driver logs will change"},
	{spark.Line{Kind: spark.LineMetadataFails}, "Spark fails to start with 'Error reading stream metadata from <path>'"},
	{spark.Line{Kind: spark.LineCommitNoFallback}, "Spark will not start and does not fall back to older files ('Incomplete log file in the offset commit log')"},
	{spark.Line{Kind: spark.LineCommitRemedy, File: "commits/140", Batch: 140}, "remedy: move aside only commits/140; Spark then re-runs batch 140 into the sink"},
	{spark.Line{Kind: spark.LineOffsetsNoFallback}, "Spark will not start and does not fall back to older files ('Incomplete log file' / 'Log file was malformed')"},
	{spark.Line{Kind: spark.LineOffsetsRemedy, File: "offsets/140", Batch: 140}, "remedy: move aside only offsets/140; Spark re-plans batch 140"},
	{spark.Line{Kind: spark.LineLatestCommit, File: "commits/140", At: time.Date(2025, 1, 1, 0, 10, 30, 0, time.UTC), For: 20 * time.Second},
		"latest commit commits/140 written 2025-01-01 00:10:30 UTC (20s ago)"},
	{spark.Line{Kind: spark.LineNoBatchYet}, "no batch planned yet (a query that started but never had data)"},
	{spark.Line{Kind: spark.LineInFlight, Batch: 141, For: 30 * time.Second}, "batch 141 in flight for 30s"},
	{spark.Line{Kind: spark.LinePending, N: 21}, "21 records pending on the brokers"},
	{spark.Line{Kind: spark.LinePendingWaiting, N: 9, For: time.Minute, Limit: 10 * time.Minute}, "9 records pending on the brokers, waiting 1m0s (within stale_after 10m0s)"},
	{spark.Line{Kind: spark.LineNeverEmpty}, "Spark never writes an empty log file (the first line is always v<k>)"},
	{spark.Line{Kind: spark.LineEmptyFails}, "a read of this batch fails with 'Incomplete log file'"},
	{spark.Line{Kind: spark.LineTruncatedSources, File: "offsets/140", N: 1, M: 2}, "offsets/140 line 3: truncated: 1 source offset lines, want 2"},
	{spark.Line{Kind: spark.LineSourcesRefused, N: 1, M: 2}, "Spark refuses it: 'There are [1] sources in the checkpoint offsets and now there are [2] sources requested by the query'"},
	{spark.Line{Kind: spark.LineRestartReads, Batch: 140}, "latest planned batch is 140; restart reads offsets/139 as its start point"},
	{spark.Line{Kind: spark.LineExpectBatchMissing, Batch: 139}, "expect 'batch 139 doesn't exist' unless async progress tracking is on (then gaps are legitimate)"},
	{spark.Line{Kind: spark.LineLogsDamaged, Batch: 140, Commit: 141}, "latest planned batch 140, latest commit 141: the logs were hand-edited or damaged"},
	{spark.Line{Kind: spark.LinePlannedAbsent, File: "offsets/141", At: time.Date(2025, 1, 1, 0, 11, 0, 0, time.UTC), For: time.Hour, Batch: 141},
		"offsets/141 planned 2025-01-01 00:11:00 UTC (1h0m ago); commits/141 absent"},
	{spark.Line{Kind: spark.LineNoCommitsDir}, "no commits/ directory: no batch of this checkpoint ever committed"},
	{spark.Line{Kind: spark.LineNoConf}, "the offsets carry no conf map, as Spark 2.1.0 wrote them; Spark 2.1.0 kept no commit log"},
	{spark.Line{Kind: spark.LineCommitsEmpty}, "commits/ holds no batch"},
	{spark.Line{Kind: spark.LineCommitsBehind, Batch: 141, Commit: 137},
		"latest commit is commits/137: batches 138..140 have no commit either (manual deletion or async progress tracking); Spark warns 'Batch completion log latest batch id is 137, which is not trailing batchid 141 by one'"},
	{spark.Line{Kind: spark.LineRerun, Batch: 141}, "a batch running now, or a query that died during batch 141; on restart Spark re-runs it with exactly the recorded offsets (at-least-once into the sink)"},
	{spark.Line{Kind: spark.LineLongerThanStale, Limit: 10 * time.Minute}, "longer than stale_after (10m0s): a failed or stuck batch if no driver is running"},
	{spark.Line{Kind: spark.LineBatchPlanned, Batch: 140, At: time.Date(2025, 1, 1, 0, 10, 0, 0, time.UTC)}, "batch 140 was planned 2025-01-01 00:10:00 UTC"},
	{spark.Line{Kind: spark.LineOldestWaiting, At: time.Date(2025, 1, 1, 1, 40, 30, 0, time.UTC), For: 30 * time.Minute},
		"the oldest waiting record arrived 2025-01-01 01:40:30 UTC (30m0s ago); the quiet time before it does not count"},
	{spark.Line{Kind: spark.LineStalled, N: 150}, "150 records are waiting on the brokers: the query is stalled, not idle"},
	{spark.Line{Kind: spark.LineIdle}, "no records are waiting on the brokers: the input may simply be idle (Spark plans no batch without new data)"},
	{spark.Line{Kind: spark.LineDeletedUnread, Topic: "client.replies.sms", Partition: 0, M: 14100, N: 4}, "client.replies.sms/0: checkpoint offset 14100, log start 14104: 4 records deleted unread"},
	{spark.Line{Kind: spark.LineUnknownPartition, Topic: "t", Partition: 3, N: 0, M: 7}, "t/3: 7 records (offsets 0–7)"},
	{spark.Line{Kind: spark.LineUnknownPartition, Topic: "t", Partition: 3, N: -1, M: 7}, "t/3: records unknown"},
	{spark.Line{Kind: spark.LinePartition, Topic: "t", Partition: 2}, "t/2"},
	{spark.Line{Kind: spark.LineMore, N: 5}, "... and 5 more"},
	{spark.Line{Kind: spark.LineNoStateFiles, File: "state/0/5/", Want: 141, Commit: 140}, "state/0/5/: no state files, want version 141 after commits/140"},
	{spark.Line{Kind: spark.LineStateOld, File: "state/0/3/", Version: 139, State: spark.StateDelta, Want: 141, Commit: 140}, "state/0/3/: newest version 139 (delta), want 141 after commits/140"},
	{spark.Line{Kind: spark.LinePartitionDirsMissing, File: "state/0/", N: 1, M: 8, Missing: []int{7}}, "state/0/: 1 of 8 partition directories missing (7)"},
	{spark.Line{Kind: spark.LinePartitionDirsMissing, File: "state/0/", N: 12, M: 12, Missing: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		"state/0/: 12 of 12 partition directories missing (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... 2 more)"},
	{spark.Line{Kind: spark.LineUniqueIDMissing, File: "state/0", Partition: 3, Version: 4, UniqueID: "bfdda7d9-f699-4e2b-acbd-8cf1687fd017", Commit: 3},
		"state/0/3: no file for version 4 with unique id bfdda7d9-f699-4e2b-acbd-8cf1687fd017 named in commits/3"},
	{spark.Line{Kind: spark.LineStateRule}, "batch N commits state version N+1 in every partition; a lower newest version means lost state files"},
	{spark.Line{Kind: spark.LineExpectStateError}, "expect 'Error reading delta file ... does not exist' (CANNOT_LOAD_STATE_STORE) on restart"},
	{spark.Line{Kind: spark.LineOrphanChecksum, File: "commits/.99.crc", For: time.Hour, Target: "commits/99"},
		"commits/.99.crc (1h0m old) without commits/99: it makes re-creating commits/99 fail ('Multiple streaming queries are concurrently using ...'); delete it"},
	{spark.Line{Kind: spark.LineTempFile, File: "offsets/.141.0b1c.tmp", N: 2, For: 40*time.Minute + 30*time.Second}, "offsets/.141.0b1c.tmp (2 bytes, 40m30s old): an interrupted atomic write (crash or kill)"},
}

// TestSparkLine: each line of a checkpoint finding, data from integrations/spark, worded here in
// full.
func TestSparkLine(t *testing.T) {
	for _, c := range sparkLineCases {
		if got := sparkLine(c.line); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.line.Kind, got, c.want)
		}
	}
}

// TestSparkLineKindsAllWorded: every LineKind integrations/spark declares has a case above, so
// none falls through to its bare code.
func TestSparkLineKindsAllWorded(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../integrations/spark/line.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tested := map[string]bool{}
	for _, c := range sparkLineCases {
		tested[string(c.line.Kind)] = true
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || vs.Type == nil || len(vs.Values) != 1 {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "LineKind" {
			return true
		}
		n++
		lit := vs.Values[0].(*ast.BasicLit)
		code := strings.Trim(lit.Value, `"`)
		if !tested[code] {
			t.Errorf("%s (%s) has no case in sparkLineCases", vs.Names[0].Name, code)
		}
		if got := sparkLine(spark.Line{Kind: spark.LineKind(code)}); got == code {
			t.Errorf("%s is not worded", code)
		}
		return true
	})
	if n < 60 {
		t.Fatalf("found %d LineKind constants, want the whole list", n)
	}
}

// TestCheckpointCodesWorded: the partition notes, version hints and pending baselines of a
// checkpoint report, in full.
func TestCheckpointCodesWorded(t *testing.T) {
	for note, want := range map[spark.PartitionNote]string{
		spark.NoteNotInCheckpoint: "on the broker but not in the checkpoint (partition added since the batch was planned?)",
		spark.NotePartitionGone:   "in the checkpoint but not on the broker (partition deleted?)",
		spark.NoteOffsetsGone:     "the checkpoint's offset is below the broker's log start: retention deleted records the query never read",
		spark.NoteAheadOfBroker:   "checkpoint is ahead of the broker's log end (topic recreated or truncated? expect 'offset was changed')",
	} {
		if got := partitionNote(note); got != want {
			t.Errorf("%s: %q, want %q", note, got, want)
		}
	}
	for _, c := range []struct {
		hints []spark.Hint
		want  string
	}{
		{[]spark.Hint{spark.HintCommitsV2, spark.HintOperatorV1, spark.HintEncodingFormatSet},
			"Spark 4.0+ with RocksDB state checkpoint format v2 (commits v2); Spark 3.5+ (operator metadata v1); Spark 4.0+ (conf has stateStore.encodingFormat)"},
		{[]spark.Hint{spark.HintOperatorV2, spark.HintOffsetsV2}, "Spark 4.0+ (operator metadata v2); Spark 4.1+ (offsets v2)"},
		{[]spark.Hint{spark.HintOffsetsNoConf}, "Spark 2.1.0 (offsets without conf)"},
		{nil, ""},
	} {
		if got := versionHint(c.hints); got != c.want {
			t.Errorf("%v: %q, want %q", c.hints, got, c.want)
		}
	}
	for _, c := range []struct {
		r    spark.Report
		want string
	}{
		{spark.Report{KafkaBaseline: "offsets/140", BaselineKind: spark.BaselineCommitted}, "offsets/140"},
		{spark.Report{KafkaBaseline: "offsets/141", BaselineKind: spark.BaselineCommitUnread}, "offsets/141; the committed batch's offsets are unavailable"},
		{spark.Report{KafkaBaseline: "offsets/0", BaselineKind: spark.BaselineNoCommit}, "offsets/0; no batch committed"},
		{spark.Report{}, "the checkpoint"},
	} {
		if got := kafkaBaseline(&c.r); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

// TestCheckpointFactsWorded: the verdict's facts that carry a checkpoint finding read as they
// did when they carried its words; and a verdict an earlier version stored, with the words in
// Text and Items, still renders them.
func TestCheckpointFactsWorded(t *testing.T) {
	corrupt := spark.Line{Kind: spark.LineCorrupt, File: "offsets/4", Problem: spark.ProblemEmpty}
	stale := spark.Line{Kind: spark.LineNoCommitFor, For: 40 * time.Minute, Limit: 10 * time.Minute}
	leftovers := spark.Line{Kind: spark.LineLeftovers, N: 2, File: "offsets/", Limit: 5 * time.Minute}
	gone := spark.Line{Kind: spark.LinePartitionsGone, M: 2}
	for _, c := range []struct {
		f    pipeline.Fact
		want string
	}{
		{pipeline.Fact{Kind: pipeline.FactStalePending, Line: &stale, N: 1234}, "no commit for 40m0s (stale after 10m0s) while 1,234 records wait on the brokers"},
		{pipeline.Fact{Kind: pipeline.FactIdleCheckpoint, Line: &stale}, "checkpoint: no commit for 40m0s (stale after 10m0s); no records wait on the brokers (an idle topic needs no commits)"},
		{pipeline.Fact{Kind: pipeline.FactFinding, Line: &corrupt, File: "offsets/4"}, "offsets/4 is corrupt (empty)"},
		{pipeline.Fact{Kind: pipeline.FactCheckpointRisk, Line: &leftovers, File: "offsets/.4.tmp"}, "checkpoint: offsets/.4.tmp: 2 leftover files in offsets/ older than 5m0s"},
		{pipeline.Fact{Kind: pipeline.FactPartitionGone, Line: &gone, File: "offsets/3",
			Lines: []spark.Line{{Kind: spark.LinePartition, Topic: "t", Partition: 3}, {Kind: spark.LinePartition, Topic: "t", Partition: 4}}},
			"checkpoint: offsets/3: 2 partitions in the checkpoint no longer exist on the brokers (t/3, t/4)"},
		{pipeline.Fact{Kind: pipeline.FactCheckpointLine, Line: &spark.Line{Kind: spark.LineDeletedUnread, Topic: "t", Partition: 0, M: 10, N: 20}},
			"t/0: checkpoint offset 10, log start 30: 20 records deleted unread"},
		{pipeline.Fact{Kind: pipeline.FactCheckError, Check: pipeline.CheckCheckpoint, Line: &spark.Line{Kind: spark.LineCannotError, Text: "list /cp: permission denied"}},
			"checkpoint: cannot list /cp: permission denied"},
	} {
		if got := factLine(pipeline.Verdict{}, c.f); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.f.Kind, got, c.want)
		}
	}
	// As an earlier version stored them: the finding's words in Text and Items.
	for _, c := range []struct{ stored, want string }{
		{`{"Kind":"finding","Text":"offsets/4 is corrupt (empty)","File":"offsets/4","At":"0001-01-01T00:00:00Z"}`, "offsets/4 is corrupt (empty)"},
		{`{"Kind":"partition_gone","Text":"1 partition in the checkpoint no longer exist on the brokers","File":"offsets/3","Items":["t/3"],"At":"0001-01-01T00:00:00Z"}`,
			"checkpoint: offsets/3: 1 partition in the checkpoint no longer exist on the brokers (t/3)"},
		{`{"Kind":"text","Text":"t/0: checkpoint offset 10, log start 30: 20 records deleted unread","At":"0001-01-01T00:00:00Z"}`,
			"t/0: checkpoint offset 10, log start 30: 20 records deleted unread"},
		{`{"Kind":"stale_pending","Text":"no commit for 40m0s (stale after 10m0s)","N":3,"At":"0001-01-01T00:00:00Z"}`,
			"no commit for 40m0s (stale after 10m0s) while 3 records wait on the brokers"},
	} {
		var f pipeline.Fact
		if err := json.Unmarshal([]byte(c.stored), &f); err != nil {
			t.Fatal(err)
		}
		if got := factLine(pipeline.Verdict{}, f); got != c.want {
			t.Errorf("stored %s:\n got %q\nwant %q", c.stored, got, c.want)
		}
	}
}
