package commands

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/internal/human"
)

// checkpointLines lays a checkpoint report out: the facts first, then the findings, worst
// first, each with its evidence.
func checkpointLines(r *spark.Report) []string {
	var b strings.Builder
	now := r.CheckedAt
	fmt.Fprintf(&b, "Checkpoint %s\n", r.Location)
	id := r.QueryID
	if id == "" {
		id = "unknown"
	}
	fmt.Fprintf(&b, "Checked %s, query id %s\n", human.Time(now), id)

	if p := r.Planned; p != nil {
		fmt.Fprintf(&b, "Planned:   batch %d (%s, planned %s, %s ago)\n", p.ID, p.File, human.Time(p.PlannedAt), human.Elapsed(now.Sub(p.PlannedAt)))
	} else if r.Offsets.Readable {
		b.WriteString("Planned:   no batch yet\n")
	}
	if c := r.Committed; c != nil {
		fmt.Fprintf(&b, "Committed: batch %d (%s, written %s, %s ago)\n", c.ID, c.File, human.Time(c.ModTime), human.Elapsed(now.Sub(c.ModTime)))
	} else if r.Commits.Readable || (!r.Commits.Present && r.Offsets.Present) {
		b.WriteString("Committed: no batch\n")
	}
	if f := r.InFlight; f != nil {
		fmt.Fprintf(&b, "In flight: batch %d for %s\n", f.ID, human.Elapsed(f.For))
	} else if r.Planned != nil && r.Committed != nil {
		b.WriteString("In flight: none\n")
	}
	if r.Offsets.Present || r.Commits.Present {
		fmt.Fprintf(&b, "Logs:      %s, %s\n", logLine(r.Offsets), logLine(r.Commits))
	}

	if len(r.Kafka) > 0 {
		checkpointKafka(&b, r)
	}
	for _, op := range r.State {
		b.WriteString(stateLine(op))
	}
	if n := len(r.Leftovers); n > 0 {
		fmt.Fprintf(&b, "Leftovers: %s (temp or orphan checksum)\n", human.Count(n, "file"))
	}
	if len(r.Hints) > 0 {
		fmt.Fprintf(&b, "Spark:     %s\n", versionHint(r.Hints))
	}

	b.WriteString("Findings:\n")
	for _, f := range r.Findings {
		where := ""
		if f.File != "" {
			where = " [" + f.File + "]"
		}
		fmt.Fprintf(&b, "  %s %s%s: %s\n", strings.ToUpper(f.Severity.String()), f.Code, where, sparkLine(f.Summary))
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "    - %s\n", sparkLine(e))
		}
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

func logLine(l spark.LogListing) string {
	switch {
	case !l.Present:
		return l.Dir + "/ absent"
	case !l.Readable:
		return l.Dir + "/ unreadable"
	case l.Batches == 0:
		return l.Dir + "/ empty"
	}
	s := fmt.Sprintf("%s/ %s %d..%d", l.Dir, human.Count(l.Batches, "batch"), l.First, l.Latest)
	if l.GapCount > 0 {
		s += fmt.Sprintf(" (%d missing)", l.GapCount)
	}
	if l.Checksums > 0 || l.TempFiles > 0 {
		s += fmt.Sprintf(" +%d .crc, %d temp", l.Checksums, l.TempFiles)
	}
	return s
}

// checkpointKafka lists partitions when there are few, and sums per topic otherwise.
func checkpointKafka(b *strings.Builder, r *spark.Report) {
	fmt.Fprintf(b, "Kafka, pending counted from %s:\n", kafkaBaseline(r))
	off := func(v int64) string {
		if v < 0 {
			return "?"
		}
		return fmt.Sprint(v)
	}
	if len(r.Kafka) <= 12 {
		for _, k := range r.Kafka {
			fmt.Fprintf(b, "  %s[%d]: committed %s, planned %s", k.Topic, k.Partition, off(k.Committed), off(k.Planned))
			if k.LogStart > 0 {
				fmt.Fprintf(b, ", log start %d", k.LogStart)
			}
			if k.LogEnd >= 0 {
				fmt.Fprintf(b, ", log end %d", k.LogEnd)
			}
			if k.PendingKnown {
				fmt.Fprintf(b, ", pending %d", k.Pending)
			}
			if k.Note != "" {
				fmt.Fprintf(b, " (%s)", partitionNote(k.Note))
			}
			b.WriteString("\n")
		}
	} else {
		type topicSum struct {
			parts, notes    int
			pending, maxP   int64
			maxPart         int32
			anyPendingKnown bool
		}
		sums := map[string]*topicSum{}
		for _, k := range r.Kafka {
			s := sums[k.Topic]
			if s == nil {
				s = &topicSum{maxPart: -1}
				sums[k.Topic] = s
			}
			s.parts++
			if k.Note != "" {
				s.notes++
			}
			if k.PendingKnown && k.Pending > 0 {
				s.pending += k.Pending
				if k.Pending > s.maxP {
					s.maxP, s.maxPart = k.Pending, k.Partition
				}
			}
			s.anyPendingKnown = s.anyPendingKnown || k.PendingKnown
		}
		topics := make([]string, 0, len(sums))
		for t := range sums {
			topics = append(topics, t)
		}
		sort.Strings(topics)
		for _, t := range topics {
			s := sums[t]
			fmt.Fprintf(b, "  %s: %d partitions", t, s.parts)
			if s.anyPendingKnown {
				fmt.Fprintf(b, ", pending %d", s.pending)
				if s.maxPart >= 0 {
					fmt.Fprintf(b, " (most on partition %d: %d)", s.maxPart, s.maxP)
				}
			}
			if s.notes > 0 {
				fmt.Fprintf(b, ", %d partitions disagree with the broker", s.notes)
			}
			b.WriteString("\n")
		}
	}
	if r.PendingKnown {
		fmt.Fprintf(b, "  pending total: %d records\n", r.PendingTotal)
	}
	if r.LostRecords > 0 {
		fmt.Fprintf(b, "  deleted by retention before the query read them: %d records on %s\n", r.LostRecords, human.Count(r.LostPartitions, "partition"))
	}
}

func stateLine(op spark.OperatorState) string {
	name := ""
	if op.Metadata != nil {
		name = operatorName(op.Metadata.Operator.Name)
	}
	parts := map[int]bool{}
	for _, s := range op.Stores {
		parts[s.Partition] = true
	}
	total := fmt.Sprint(len(parts))
	if op.ExpectedPartitions > 0 {
		total = fmt.Sprintf("%d/%d", len(parts), op.ExpectedPartitions)
	}
	s := fmt.Sprintf("State:     operator %d%s: %s partitions", op.ID, name, total)
	if op.MaxVersion >= 0 {
		s += fmt.Sprintf(", newest versions %d..%d", op.MinVersion, op.MaxVersion)
	} else {
		s += ", no state files"
	}
	if op.ExpectedVersion >= 0 {
		s += fmt.Sprintf(" (want %d)", op.ExpectedVersion)
	}
	return s + "\n"
}

// sparkLine words one line of a checkpoint finding: its summary or a line of its evidence.
func sparkLine(l spark.Line) string {
	switch l.Kind {
	// Summaries.
	case spark.LineStopped:
		return fmt.Sprintf("the diagnosis stopped at %s: %s", l.File, l.Text)
	case spark.LineVanished:
		return fmt.Sprintf("%s vanished while it was being read", l.File)
	case spark.LineCannot:
		return fmt.Sprintf("cannot %s %s: %s", l.Op, l.File, l.Class)
	case spark.LineCannotError:
		return "cannot " + l.Text
	case spark.LineCorrupt:
		return fmt.Sprintf("%s is corrupt (%s)", l.File, l.Problem)
	case spark.LineError:
		return l.Text
	case spark.LineNoCheckpoint:
		return "no checkpoint at " + l.File
	case spark.LineNotACheckpoint:
		return fmt.Sprintf("no checkpoint at %s: no metadata, offsets/ or commits/", l.File)
	case spark.LineNoMetadata:
		return "the checkpoint has no metadata file (query id)"
	case spark.LineConsistent:
		return "the checkpoint is consistent"
	case spark.LineEmpty:
		return l.File + " is empty"
	case spark.LineFewerSources:
		return fmt.Sprintf("%s has %d source lines, %s shows %d sources", l.File, l.N, l.Target, l.M)
	case spark.LineOffsetsMissing:
		return fmt.Sprintf("%s is missing: Spark needs it to restart at batch %d", l.File, l.Batch)
	case spark.LineCommitWithoutOffsets:
		return fmt.Sprintf("commits/%d has no offsets/%d", l.Commit, l.Commit)
	case spark.LineUncommittedUnknown:
		return fmt.Sprintf("batch %d has no commit (offsets/%d without commits/%d), planned at an unknown time", l.Batch, l.Batch, l.Batch)
	case spark.LineNeverCommitted:
		return fmt.Sprintf("batch %d was planned %s ago and never committed (offsets/%d without commits/%d)", l.Batch, human.Elapsed(l.For), l.Batch, l.Batch)
	case spark.LineInFlightFor:
		return fmt.Sprintf("batch %d is in flight for %s (offsets/%d without commits/%d)", l.Batch, human.Elapsed(l.For), l.Batch, l.Batch)
	case spark.LineNoCommitFor:
		return fmt.Sprintf("no commit for %s (stale after %s)", human.Elapsed(l.For), human.Elapsed(l.Limit))
	case spark.LineRecordsWaited:
		return fmt.Sprintf("%d records have waited %s with no commit (stale after %s)", l.N, human.Elapsed(l.For), human.Elapsed(l.Limit))
	case spark.LineOffsetsGone:
		return fmt.Sprintf("%d records on %s are no longer on the brokers: retention deleted them before the query read them", l.N, human.Count(int(l.M), "partition"))
	case spark.LineUnknownPartitions:
		return fmt.Sprintf("%s of the topics the query reads hold %d records the checkpoint does not know", human.Count(int(l.M), "partition"), l.N)
	case spark.LinePartitionsGone:
		return human.Count(int(l.M), "partition") + " in the checkpoint no longer exist on the brokers"
	case spark.LineStateBehind:
		return fmt.Sprintf("state of operator %d%s is behind commits/%d: %d of %d stores lack version %d", l.Operator, operatorName(l.Name), l.Commit, l.N, l.M, l.Version)
	case spark.LineStateLacksFiles:
		return fmt.Sprintf("state of operator %d%s lacks files named in commits/%d", l.Operator, operatorName(l.Name), l.Commit)
	case spark.LineLeftovers:
		where := l.File
		if where == "" {
			where = "the checkpoint root"
		}
		return fmt.Sprintf("%s in %s older than %s", human.Count(int(l.N), "leftover file"), where, human.Elapsed(l.Limit))

	// Evidence.
	case spark.LineErrorClass:
		return "error class: " + l.Class.String()
	case spark.LineAfterStopUnknown:
		return "what follows the stop is unknown"
	case spark.LineNoCheckpointFiles:
		return fmt.Sprintf("the location holds %d entries, none of them a checkpoint file", l.N)
	case spark.LineMetadataOnce:
		return "metadata is written once at the query's first start"
	case spark.LineMetadataNewID:
		return "on restart Spark writes a new one with a new query id, so the id in driver logs will change"
	case spark.LineMetadataFails:
		return "Spark fails to start with 'Error reading stream metadata from <path>'"
	case spark.LineCommitNoFallback:
		return "Spark will not start and does not fall back to older files ('Incomplete log file in the offset commit log')"
	case spark.LineCommitRemedy:
		return fmt.Sprintf("remedy: move aside only %s; Spark then re-runs batch %d into the sink", l.File, l.Batch)
	case spark.LineOffsetsNoFallback:
		return "Spark will not start and does not fall back to older files ('Incomplete log file' / 'Log file was malformed')"
	case spark.LineOffsetsRemedy:
		return fmt.Sprintf("remedy: move aside only %s; Spark re-plans batch %d", l.File, l.Batch)
	case spark.LineLatestCommit:
		return fmt.Sprintf("latest commit %s written %s (%s ago)", l.File, human.Time(l.At), human.Elapsed(l.For))
	case spark.LineNoBatchYet:
		return "no batch planned yet (a query that started but never had data)"
	case spark.LineInFlight:
		return fmt.Sprintf("batch %d in flight for %s", l.Batch, human.Elapsed(l.For))
	case spark.LinePending:
		return fmt.Sprintf("%d records pending on the brokers", l.N)
	case spark.LinePendingWaiting:
		return fmt.Sprintf("%d records pending on the brokers, waiting %s (within stale_after %s)", l.N, human.Elapsed(l.For), human.Elapsed(l.Limit))
	case spark.LineNeverEmpty:
		return "Spark never writes an empty log file (the first line is always v<k>)"
	case spark.LineEmptyFails:
		return "a read of this batch fails with 'Incomplete log file'"
	case spark.LineTruncatedSources:
		return fmt.Sprintf("%s line %d: truncated: %d source offset lines, want %d", l.File, 2+l.N, l.N, l.M)
	case spark.LineSourcesRefused:
		return fmt.Sprintf("Spark refuses it: 'There are [%d] sources in the checkpoint offsets and now there are [%d] sources requested by the query'", l.N, l.M)
	case spark.LineRestartReads:
		return fmt.Sprintf("latest planned batch is %d; restart reads offsets/%d as its start point", l.Batch, l.Batch-1)
	case spark.LineExpectBatchMissing:
		return fmt.Sprintf("expect 'batch %d doesn't exist' unless async progress tracking is on (then gaps are legitimate)", l.Batch)
	case spark.LineLogsDamaged:
		return fmt.Sprintf("latest planned batch %d, latest commit %d: the logs were hand-edited or damaged", l.Batch, l.Commit)
	case spark.LinePlannedAbsent:
		return fmt.Sprintf("%s planned %s (%s ago); commits/%d absent", l.File, human.Time(l.At), human.Elapsed(l.For), l.Batch)
	case spark.LineNoCommitsDir:
		return "no commits/ directory: no batch of this checkpoint ever committed"
	case spark.LineNoConf:
		return "the offsets carry no conf map, as Spark 2.1.0 wrote them; Spark 2.1.0 kept no commit log"
	case spark.LineCommitsEmpty:
		return "commits/ holds no batch"
	case spark.LineCommitsBehind:
		return fmt.Sprintf("latest commit is commits/%d: batches %d..%d have no commit either (manual deletion or async progress tracking); Spark warns 'Batch completion log latest batch id is %d, which is not trailing batchid %d by one'",
			l.Commit, l.Commit+1, l.Batch-1, l.Commit, l.Batch)
	case spark.LineRerun:
		return fmt.Sprintf("a batch running now, or a query that died during batch %d; on restart Spark re-runs it with exactly the recorded offsets (at-least-once into the sink)", l.Batch)
	case spark.LineLongerThanStale:
		return fmt.Sprintf("longer than stale_after (%s): a failed or stuck batch if no driver is running", human.Elapsed(l.Limit))
	case spark.LineBatchPlanned:
		return fmt.Sprintf("batch %d was planned %s", l.Batch, human.Time(l.At))
	case spark.LineOldestWaiting:
		return fmt.Sprintf("the oldest waiting record arrived %s (%s ago); the quiet time before it does not count", human.Time(l.At), human.Elapsed(l.For))
	case spark.LineStalled:
		return fmt.Sprintf("%d records are waiting on the brokers: the query is stalled, not idle", l.N)
	case spark.LineIdle:
		return "no records are waiting on the brokers: the input may simply be idle (Spark plans no batch without new data)"
	case spark.LineDeletedUnread:
		return fmt.Sprintf("%s/%d: checkpoint offset %d, log start %d: %d records deleted unread", l.Topic, l.Partition, l.M, l.M+l.N, l.N)
	case spark.LineUnknownPartition:
		n := "records unknown"
		if l.N >= 0 && l.M >= 0 {
			n = fmt.Sprintf("%d records (offsets %d–%d)", max(l.M-l.N, 0), l.N, l.M)
		}
		return fmt.Sprintf("%s/%d: %s", l.Topic, l.Partition, n)
	case spark.LinePartition:
		return fmt.Sprintf("%s/%d", l.Topic, l.Partition)
	case spark.LineMore:
		return fmt.Sprintf("... and %d more", l.N)
	case spark.LineNoStateFiles:
		return fmt.Sprintf("%s: no state files, want version %d after commits/%d", l.File, l.Want, l.Commit)
	case spark.LineStateOld:
		return fmt.Sprintf("%s: newest version %d (%s), want %d after commits/%d", l.File, l.Version, l.State, l.Want, l.Commit)
	case spark.LinePartitionDirsMissing:
		parts := make([]string, 0, len(l.Missing)+1)
		for _, p := range l.Missing {
			parts = append(parts, strconv.Itoa(p))
		}
		if more := int(l.N) - len(l.Missing); more > 0 {
			parts = append(parts, fmt.Sprintf("... %d more", more))
		}
		return fmt.Sprintf("%s: %d of %d partition directories missing (%s)", l.File, l.N, l.M, strings.Join(parts, ", "))
	case spark.LineUniqueIDMissing:
		return fmt.Sprintf("%s/%d: no file for version %d with unique id %s named in commits/%d", l.File, l.Partition, l.Version, l.UniqueID, l.Commit)
	case spark.LineStateRule:
		return "batch N commits state version N+1 in every partition; a lower newest version means lost state files"
	case spark.LineExpectStateError:
		return "expect 'Error reading delta file ... does not exist' (CANNOT_LOAD_STATE_STORE) on restart"
	case spark.LineOrphanChecksum:
		return fmt.Sprintf("%s (%s old) without %s: it makes re-creating %s fail ('Multiple streaming queries are concurrently using ...'); delete it", l.File, human.Elapsed(l.For), l.Target, l.Target)
	case spark.LineTempFile:
		return fmt.Sprintf("%s (%d bytes, %s old): an interrupted atomic write (crash or kill)", l.File, l.N, human.Elapsed(l.For))
	}
	return string(l.Kind)
}

// operatorName is a state operator's name in brackets, or "" when it has none.
func operatorName(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

// partitionNote words how checkpoint and broker disagree about a partition.
func partitionNote(n spark.PartitionNote) string {
	switch n {
	case spark.NoteNotInCheckpoint:
		return "on the broker but not in the checkpoint (partition added since the batch was planned?)"
	case spark.NotePartitionGone:
		return "in the checkpoint but not on the broker (partition deleted?)"
	case spark.NoteOffsetsGone:
		return "the checkpoint's offset is below the broker's log start: retention deleted records the query never read"
	case spark.NoteAheadOfBroker:
		return "checkpoint is ahead of the broker's log end (topic recreated or truncated? expect 'offset was changed')"
	}
	return string(n)
}

// hintWords say what a version hint tells of the Spark version.
var hintWords = map[spark.Hint]string{
	spark.HintCommitsV2:         "Spark 4.0+ with RocksDB state checkpoint format v2 (commits v2)",
	spark.HintOperatorV2:        "Spark 4.0+ (operator metadata v2)",
	spark.HintOperatorV1:        "Spark 3.5+ (operator metadata v1)",
	spark.HintOffsetsV2:         "Spark 4.1+ (offsets v2)",
	spark.HintOffsetsNoConf:     "Spark 2.1.0 (offsets without conf)",
	spark.HintEncodingFormatSet: "Spark 4.0+ (conf has stateStore.encodingFormat)",
}

// versionHint words a report's version hints in one line, "" when there are none.
func versionHint(hints []spark.Hint) string {
	words := make([]string, len(hints))
	for i, h := range hints {
		words[i] = hintWords[h]
		if words[i] == "" {
			words[i] = string(h)
		}
	}
	return strings.Join(words, "; ")
}

// kafkaBaseline words the file the pending counts are measured from.
func kafkaBaseline(r *spark.Report) string {
	switch r.BaselineKind {
	case spark.BaselineCommitUnread:
		return r.KafkaBaseline + "; the committed batch's offsets are unavailable"
	case spark.BaselineNoCommit:
		return r.KafkaBaseline + "; no batch committed"
	case "":
		if r.KafkaBaseline == "" {
			return "the checkpoint"
		}
	}
	return r.KafkaBaseline
}

// checkpointReply is the `checkpoint` reply: the findings' codes in one line, then the report.
func checkpointReply(pipeline string, r *spark.Report) Reply {
	var codes []string
	for _, f := range r.Findings {
		codes = append(codes, string(f.Code))
	}
	text := fmt.Sprintf("Checkpoint of %s: %s", pipeline, strings.Join(codes, ", "))
	return Reply{Text: text, Sections: []Section{{Lines: checkpointLines(r), Pre: true}}}
}
