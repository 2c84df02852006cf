package spark

import (
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// Report is what Diagnose found in a checkpoint location. Paths are relative to the location.
type Report struct {
	Location   string
	CheckedAt  time.Time
	StaleAfter time.Duration

	QueryID string // from metadata; "" when missing or unreadable

	Offsets LogListing // offsets/
	Commits LogListing // commits/

	Planned          *PlannedBatch   // the latest offsets/N
	Committed        *CommittedBatch // the latest commits/C
	CommittedOffsets *PlannedBatch   // offsets/C: what the latest committed batch read (== Planned when C == N)
	InFlight         *InFlightBatch  // batch N when commits/N is absent

	// Kafka holds one row per source, topic and partition of the latest planned and committed
	// batches (and partitions only the broker has, when log-end offsets were given).
	Kafka []KafkaPartition
	// KafkaBaseline is the file the pending counts are measured from: offsets/C of the latest
	// commit, or offsets/N when nothing is committed or offsets/C is unavailable (BaselineKind
	// says which).
	KafkaBaseline string
	BaselineKind  Baseline
	PendingKnown  bool  // at least one partition had a log-end offset
	PendingTotal  int64 // records still on the brokers past the baseline, over partitions with a known count
	// WaitingFor is how long records have waited beyond the checkpoint without a commit: from
	// the later of the newest commit and the oldest waiting record's timestamp (Options.
	// WaitingSince); -1 when nothing waits or it is unknown.
	WaitingFor time.Duration
	// LostRecords are records the checkpoint would resume from that retention has deleted,
	// over LostPartitions partitions: Spark fails on them (failOnDataLoss, the default) or
	// skips them.
	LostRecords    int64
	LostPartitions int
	// UnknownPartitions are partitions of the topics the checkpoint reads that exist on the
	// brokers but not in the newest offsets, holding UnknownRecords records; GonePartitions
	// are partitions of the checkpoint the brokers no longer have.
	UnknownPartitions int
	UnknownRecords    int64
	GonePartitions    int

	SourceDirs int             // sources/<i> directories
	State      []OperatorState // one per state/<op>

	Leftovers []Leftover // temp files and orphan checksums, young or old
	Hints     []Hint     // what the files say about the Spark version, when they say anything

	Findings []Finding // worst first; OK when nothing is at warning level or above
}

// Has reports whether the report has a finding with this code.
func (r *Report) Has(code Code) bool { return r.Finding(code) != nil }

// Finding returns the first finding with this code, or nil.
func (r *Report) Finding(code Code) *Finding {
	for i := range r.Findings {
		if r.Findings[i].Code == code {
			return &r.Findings[i]
		}
	}
	return nil
}

// Worst is the highest severity among the findings.
func (r *Report) Worst() Severity {
	w := SeverityInfo
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w
}

// LogListing summarises the listing of a metadata log directory (offsets/ or commits/).
type LogListing struct {
	Dir      string
	Present  bool  // the directory exists
	Readable bool  // it could be listed
	Batches  int   // files whose name is a batch id
	First    int64 // lowest batch id, -1 when none
	Latest   int64 // highest batch id, -1 when none
	// Gaps are batch ids missing between First and Latest (at most 20 listed; GapCount has all).
	Gaps      []int64
	GapCount  int
	Checksums int // .<name>.crc sidecars
	TempFiles int // .<name>.<uuid>.tmp files
	Empty     []int64
}

// PlannedBatch is an offsets/<N> file.
type PlannedBatch struct {
	ID        int64
	File      string
	Size      int64
	ModTime   time.Time
	PlannedAt time.Time  // batchTimestampMs, or ModTime when the file has none
	Offsets   *OffsetSeq // nil when unreadable or corrupt
}

// CommittedBatch is a commits/<N> file.
type CommittedBatch struct {
	ID      int64
	File    string
	Size    int64
	ModTime time.Time       // when the batch finished
	Commit  *CommitMetadata // nil when unreadable or corrupt
}

// InFlightBatch is a planned batch without a commit.
type InFlightBatch struct {
	ID    int64
	Since time.Time // when it was planned
	For   time.Duration
}

// KafkaPartition is one Kafka partition of a source.
type KafkaPartition struct {
	Source    int // source index (line of the offsets file)
	Topic     string
	Partition int32
	Committed int64 // next offset after the latest committed batch; -1 unknown
	Planned   int64 // next offset after the latest planned batch; -1 unknown
	LogEnd    int64 // broker log-end offset; -1 unknown
	// Pending is LogEnd minus the baseline offset (Committed, or Planned when nothing is
	// committed) when both are known; negative when the checkpoint is ahead of the broker.
	Pending      int64
	PendingKnown bool
	// LogStart is the broker's earliest offset; -1 unknown. Lost is how many records between
	// the baseline and LogStart retention deleted before the query read them.
	LogStart int64
	Lost     int64
	Note     PartitionNote // set when checkpoint and broker disagree about the partition
}

// PartitionNote says how checkpoint and broker disagree about a partition.
type PartitionNote string

// Notes of a KafkaPartition.
const (
	NoteNotInCheckpoint PartitionNote = "not_in_checkpoint" // on the broker only: added since the batch was planned?
	NotePartitionGone   PartitionNote = "partition_gone"    // in the checkpoint only: deleted?
	NoteOffsetsGone     PartitionNote = "offsets_gone"      // the checkpoint's offset is below the log start
	NoteAheadOfBroker   PartitionNote = "ahead_of_broker"   // the checkpoint's offset is past the log end
)

// OperatorState is state/<op>.
type OperatorState struct {
	ID                 int
	Dir                string
	Metadata           *OperatorMetadata // nil when absent
	ExpectedPartitions int               // from operator metadata or spark.sql.shuffle.partitions; 0 unknown
	ExpectedVersion    int64             // latest commit + 1; -1 unknown
	Stores             []StoreState      // one per partition and store, by partition then store
	MinVersion         int64             // lowest newest version over the stores; -1 none
	MaxVersion         int64
}

// StoreState is the files of one state store: state/<op>/<part> or state/<op>/<part>/<store>.
type StoreState struct {
	Partition      int
	Store          string // "default", or a join store such as "left-keyToNumValues"
	Dir            string
	Files          int           // state files (delta, snapshot, zip, changelog)
	NewestVersion  int64         // -1 when there is no state file
	NewestKind     StateFileKind // of NewestVersion (snapshot or zip wins over delta or changelog)
	NewestSnapshot int64         // newest .snapshot or .zip version; -1 none
	// IDsAtExpected are the unique ids of files at the operator's ExpectedVersion (state
	// checkpoint format v2).
	IDsAtExpected []string
}

// LeftoverKind is the kind of a leftover file.
type LeftoverKind string

// The leftover kinds.
const (
	LeftoverTemp     LeftoverKind = "temp"            // .<name>.<uuid>[.TID<n>].tmp
	LeftoverChecksum LeftoverKind = "orphan_checksum" // .<name>.crc without <name>
)

// Leftover is a temp file or an orphan checksum.
type Leftover struct {
	Path    string
	Kind    LeftoverKind
	Size    int64
	ModTime time.Time
	Age     time.Duration
}

// Code names a finding.
type Code string

// The finding codes.
const (
	CodeOK               Code = "OK"
	CodeStale            Code = "STALE"              // no commit for longer than stale_after
	CodeUncommittedBatch Code = "UNCOMMITTED_BATCH"  // offsets/N without commits/N
	CodeCorruptFile      Code = "CORRUPT_FILE"       // empty, truncated, unknown version, bad JSON
	CodeTempFilesLeft    Code = "TEMP_FILES_LEFT"    // interrupted writes, orphan checksums
	CodeMissing          Code = "MISSING"            // no checkpoint, no metadata, a batch Spark needs
	CodeUnreadable       Code = "UNREADABLE"         // permission denied, timeout, other I/O errors
	CodeStateBehind      Code = "STATE_BEHIND"       // state versions lag the committed batch
	CodeOffsetsGone      Code = "OFFSETS_GONE"       // the checkpoint resumes from offsets retention deleted
	CodeUnknownPartition Code = "UNKNOWN_PARTITIONS" // partitions on the brokers the checkpoint does not know
	CodePartitionGone    Code = "PARTITION_GONE"     // partitions in the checkpoint the brokers no longer have
)

// Severity orders findings.
type Severity int

// The severities.
const (
	SeverityInfo Severity = iota
	SeverityWarning
	SeverityCritical
)

func (s Severity) String() string {
	switch s {
	case SeverityCritical:
		return "critical"
	case SeverityWarning:
		return "warning"
	default:
		return "info"
	}
}

// Finding is one conclusion, with the evidence for it and the file it concerns.
type Finding struct {
	Code     Code
	Severity Severity
	File     string // relative to the location; "" for the location itself; directories end in "/"
	Summary  Line   // one sentence, worded by commands
	Evidence []Line
	// ErrClass is the storage error class (UNREADABLE findings).
	ErrClass storage.ErrorClass
	// Problem is the parse problem (CORRUPT_FILE findings about a file's content).
	Problem Problem
}
