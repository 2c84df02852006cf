package spark

import (
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// LineKind says which sentence a Line is: a finding's summary or one line of its evidence.
// commands/render_checkpoint.go words it with the Line's fields.
type LineKind string

// Line is one sentence of a finding, as data: its Kind says which and which fields it uses.
// Paths are relative to the location. A Line holds no error, so a finding encodes as JSON.
type Line struct {
	Kind LineKind
	// File is the file or directory the line is about ("" for the checkpoint root where said).
	File string `json:",omitempty"`
	// Target is a second file: the data file of a checksum, the file that shows a count.
	Target string `json:",omitempty"`
	// Op is the storage operation that failed: list, read or stat.
	Op string `json:",omitempty"`
	// Text is an error's message, passed on verbatim.
	Text    string             `json:",omitempty"`
	Class   storage.ErrorClass `json:",omitempty"`
	Problem Problem            `json:",omitempty"`
	Topic   string             `json:",omitempty"`
	// Partition is a Kafka or state partition.
	Partition int32 `json:",omitempty"`
	// Operator and Name are a state operator's id and its name ("" when unknown).
	Operator int    `json:",omitempty"`
	Name     string `json:",omitempty"`
	// Batch is a batch id, Commit the latest committed batch's id.
	Batch  int64 `json:",omitempty"`
	Commit int64 `json:",omitempty"`
	// Version is a state version, Want the version the line expects.
	Version int64         `json:",omitempty"`
	Want    int64         `json:",omitempty"`
	State   StateFileKind `json:",omitempty"`
	// UniqueID is a state file's unique id (state checkpoint format v2).
	UniqueID string `json:",omitempty"`
	// N and M are counts or offsets, as each kind says.
	N int64 `json:",omitempty"`
	M int64 `json:",omitempty"`
	// Missing are partition numbers (the first ten; N has the count).
	Missing []int `json:",omitempty"`
	// At is a time a file was written or a batch planned, For how long ago or how long
	// something has lasted, Limit the setting it is measured against (stale_after, the age
	// from which a temp file is left over).
	At    time.Time     `json:",omitzero"`
	For   time.Duration `json:",omitempty"`
	Limit time.Duration `json:",omitempty"`
}

// The summaries of findings.
const (
	// LineStopped: the context ended while the diagnosis read File (the location when the
	// root); Text: the context's error.
	LineStopped LineKind = "stopped"
	// LineVanished: File (or the location) disappeared while it was read.
	LineVanished LineKind = "vanished"
	// LineCannot: the storage operation Op on File (or the location) failed with Class.
	LineCannot LineKind = "cannot"
	// LineCannotError: a storage operation failed; Text: the storage error's message, which
	// names the operation and the file.
	LineCannotError LineKind = "cannot_error"
	// LineCorrupt: File is corrupt (Problem).
	LineCorrupt LineKind = "corrupt"
	// LineError: an error's message (Text), as a corrupt file's summary when the error names
	// no file, or as evidence.
	LineError LineKind = "error"
	// LineNoCheckpoint: nothing at the location (File).
	LineNoCheckpoint LineKind = "no_checkpoint"
	// LineNotACheckpoint: the location (File) holds no metadata, offsets/ or commits/.
	LineNotACheckpoint LineKind = "not_a_checkpoint"
	// LineNoMetadata: the checkpoint has no metadata file.
	LineNoMetadata LineKind = "no_metadata"
	// LineConsistent: nothing is at warning level or above.
	LineConsistent LineKind = "consistent"
	// LineEmpty: File, a log file, is empty.
	LineEmpty LineKind = "empty"
	// LineFewerSources: File has N source lines, Target shows M sources.
	LineFewerSources LineKind = "fewer_sources"
	// LineOffsetsMissing: File (offsets/<Batch-1>) is missing; restart at Batch needs it.
	LineOffsetsMissing LineKind = "offsets_missing"
	// LineCommitWithoutOffsets: commits/<Commit> has no offsets/<Commit>.
	LineCommitWithoutOffsets LineKind = "commit_without_offsets"
	// LineUncommittedUnknown: Batch has no commit and was planned at an unknown time.
	LineUncommittedUnknown LineKind = "uncommitted_unknown"
	// LineNeverCommitted: Batch was planned For ago and never committed.
	LineNeverCommitted LineKind = "never_committed"
	// LineInFlightFor: Batch is in flight For, without a commit.
	LineInFlightFor LineKind = "in_flight_for"
	// LineNoCommitFor: no commit For (stale after Limit).
	LineNoCommitFor LineKind = "no_commit_for"
	// LineRecordsWaited: N records have waited For with no commit (stale after Limit).
	LineRecordsWaited LineKind = "records_waited"
	// LineOffsetsGone: retention deleted N records on M partitions before the query read them.
	LineOffsetsGone LineKind = "offsets_gone"
	// LineUnknownPartitions: M partitions of the topics read hold N records the checkpoint
	// does not know.
	LineUnknownPartitions LineKind = "unknown_partitions"
	// LinePartitionsGone: M partitions of the checkpoint no longer exist on the brokers.
	LinePartitionsGone LineKind = "partitions_gone"
	// LineStateBehind: state of Operator (Name) is behind commits/<Commit>: N of M stores
	// lack Version.
	LineStateBehind LineKind = "state_behind"
	// LineStateLacksFiles: state of Operator (Name) lacks files named in commits/<Commit>.
	LineStateLacksFiles LineKind = "state_lacks_files"
	// LineLeftovers: N leftover files in File's area ("" the root) older than Limit.
	LineLeftovers LineKind = "leftovers"
)

// The lines of evidence.
const (
	// LineErrorClass: the storage error's Class.
	LineErrorClass LineKind = "error_class"
	// LineAfterStopUnknown: what follows the stop is unknown.
	LineAfterStopUnknown LineKind = "after_stop_unknown"
	// LineNoCheckpointFiles: the location holds N entries, none a checkpoint file.
	LineNoCheckpointFiles LineKind = "no_checkpoint_files"
	// LineMetadataOnce: metadata is written once at the query's first start.
	LineMetadataOnce LineKind = "metadata_once"
	// LineMetadataNewID: on restart Spark writes a new metadata with a new query id.
	LineMetadataNewID LineKind = "metadata_new_id"
	// LineMetadataFails: Spark fails to start on corrupt metadata.
	LineMetadataFails LineKind = "metadata_fails"
	// LineCommitNoFallback: Spark does not start on a corrupt commit and does not fall back.
	LineCommitNoFallback LineKind = "commit_no_fallback"
	// LineCommitRemedy: move aside only File; Spark re-runs Batch into the sink.
	LineCommitRemedy LineKind = "commit_remedy"
	// LineOffsetsNoFallback: Spark does not start on a corrupt offsets file and does not fall
	// back.
	LineOffsetsNoFallback LineKind = "offsets_no_fallback"
	// LineOffsetsRemedy: move aside only File; Spark re-plans Batch.
	LineOffsetsRemedy LineKind = "offsets_remedy"
	// LineLatestCommit: the latest commit File was written At, For ago.
	LineLatestCommit LineKind = "latest_commit"
	// LineNoBatchYet: no batch planned yet.
	LineNoBatchYet LineKind = "no_batch_yet"
	// LineInFlight: Batch in flight For.
	LineInFlight LineKind = "in_flight"
	// LinePending: N records pending on the brokers.
	LinePending LineKind = "pending"
	// LinePendingWaiting: N records pending on the brokers, waiting For (within Limit).
	LinePendingWaiting LineKind = "pending_waiting"
	// LineNeverEmpty: Spark never writes an empty log file.
	LineNeverEmpty LineKind = "never_empty"
	// LineEmptyFails: a read of an empty batch file fails.
	LineEmptyFails LineKind = "empty_fails"
	// LineTruncatedSources: File line N+2 is truncated: N source offset lines, want M.
	LineTruncatedSources LineKind = "truncated_sources"
	// LineSourcesRefused: Spark refuses N source lines for M sources.
	LineSourcesRefused LineKind = "sources_refused"
	// LineRestartReads: latest planned batch is Batch; restart reads offsets/<Batch-1>.
	LineRestartReads LineKind = "restart_reads"
	// LineExpectBatchMissing: expect 'batch <Batch> doesn't exist' unless async progress
	// tracking is on.
	LineExpectBatchMissing LineKind = "expect_batch_missing"
	// LineLogsDamaged: latest planned Batch, latest commit Commit: the logs were edited.
	LineLogsDamaged LineKind = "logs_damaged"
	// LinePlannedAbsent: File planned At (For ago); commits/<Batch> absent.
	LinePlannedAbsent LineKind = "planned_absent"
	// LineNoCommitsDir: no commits/ directory.
	LineNoCommitsDir LineKind = "no_commits_dir"
	// LineNoConf: the offsets carry no conf map, as Spark 2.1.0 wrote them.
	LineNoConf LineKind = "no_conf"
	// LineCommitsEmpty: commits/ holds no batch.
	LineCommitsEmpty LineKind = "commits_empty"
	// LineCommitsBehind: the latest commit is Commit, batches Commit+1..Batch-1 have none.
	LineCommitsBehind LineKind = "commits_behind"
	// LineRerun: on restart Spark re-runs Batch with the recorded offsets.
	LineRerun LineKind = "rerun"
	// LineLongerThanStale: the batch runs longer than stale_after (Limit).
	LineLongerThanStale LineKind = "longer_than_stale"
	// LineBatchPlanned: Batch was planned At.
	LineBatchPlanned LineKind = "batch_planned"
	// LineOldestWaiting: the oldest waiting record arrived At (For ago).
	LineOldestWaiting LineKind = "oldest_waiting"
	// LineStalled: N records wait on the brokers: stalled, not idle.
	LineStalled LineKind = "stalled"
	// LineIdle: no records wait on the brokers: the input may be idle.
	LineIdle LineKind = "idle"
	// LineDeletedUnread: Topic/Partition: checkpoint offset M, log start M+N: N records
	// deleted unread.
	LineDeletedUnread LineKind = "deleted_unread"
	// LineUnknownPartition: Topic/Partition holds records from log start N to log end M
	// (either -1: unknown).
	LineUnknownPartition LineKind = "unknown_partition"
	// LinePartition: Topic/Partition.
	LinePartition LineKind = "partition"
	// LineMore: N more lines were left out.
	LineMore LineKind = "more"
	// LineNoStateFiles: File holds no state files; want Want after commits/<Commit>.
	LineNoStateFiles LineKind = "no_state_files"
	// LineStateOld: File's newest version is Version (State), want Want after
	// commits/<Commit>.
	LineStateOld LineKind = "state_old"
	// LinePartitionDirsMissing: File lacks N of M partition directories (Missing: the first).
	LinePartitionDirsMissing LineKind = "partition_dirs_missing"
	// LineUniqueIDMissing: File/<Partition> has no file for Version with UniqueID named in
	// commits/<Commit>.
	LineUniqueIDMissing LineKind = "unique_id_missing"
	// LineStateRule: batch N commits state version N+1 in every partition.
	LineStateRule LineKind = "state_rule"
	// LineExpectStateError: expect CANNOT_LOAD_STATE_STORE on restart.
	LineExpectStateError LineKind = "expect_state_error"
	// LineOrphanChecksum: File, For old, is the checksum of the missing Target.
	LineOrphanChecksum LineKind = "orphan_checksum"
	// LineTempFile: File, N bytes, For old: an interrupted atomic write.
	LineTempFile LineKind = "temp_file"
)

// Hint says what a checkpoint's files tell of the Spark version that wrote them.
type Hint string

// The version hints.
const (
	HintCommitsV2         Hint = "commits_v2"           // commits v2: Spark 4.0+, RocksDB state format v2
	HintOperatorV2        Hint = "operator_metadata_v2" // Spark 4.0+
	HintOperatorV1        Hint = "operator_metadata_v1" // Spark 3.5+
	HintOffsetsV2         Hint = "offsets_v2"           // Spark 4.1+
	HintOffsetsNoConf     Hint = "offsets_no_conf"      // Spark 2.1.0
	HintEncodingFormatSet Hint = "encoding_format"      // conf has stateStore.encodingFormat: Spark 4.0+
)

// Baseline says where the pending counts of a report are measured from.
type Baseline string

// The baselines; Report.KafkaBaseline names the file.
const (
	BaselineCommitted    Baseline = "committed"     // offsets/C of the latest commit
	BaselineCommitUnread Baseline = "commit_unread" // offsets/N: the committed batch's offsets are unavailable
	BaselineNoCommit     Baseline = "no_commit"     // offsets/N: no batch committed
)
