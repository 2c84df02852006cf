package pipeline

import (
	"reflect"
	"slices"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
)

// FactKind says which finding of a diagnosis a Fact is; commands words it with the Fact's
// fields (commands/render_facts.go).
type FactKind string

// The facts, with the Fact fields each uses. Text is always text an integration produced (a
// finding's summary, a probe's reason, a log line, an error's message), passed on verbatim.
const (
	// FactText is an integration's own line of evidence (Text): the Kafka judgment, the access
	// check's reason, a file's owner, an error; a checkpoint finding's evidence as an earlier
	// version stored it (now FactCheckpointLine).
	FactText FactKind = "text"
	// FactGroupIdle: the documented group makes no progress while another consumes (Lag: the
	// lag report's finding).
	FactGroupIdle FactKind = "group_idle"
	// FactGroupStopped: the documented group stalled or stopped (Group, Status, LagSummary:
	// the evaluator's summary; Text: an earlier version's words for it).
	FactGroupStopped FactKind = "group_stopped"
	// FactLagWarning: the documented group's lag never fell while its commits advanced
	// (LagSummary: the evaluator's summary).
	FactLagWarning FactKind = "lag_warning"
	// FactUnavailable: a part of the Kafka reading failed (What: the kafka.Part, or an earlier
	// version's words for it; Value: its broker or topic; N: partitions, Text: the error).
	FactUnavailable FactKind = "unavailable"
	// FactSamplesUnread: the stored lag samples could not be read (What: kafka.PartStoredSamples,
	// or an earlier version's words for it; Text: the error).
	FactSamplesUnread FactKind = "samples_unread"
	// FactStalePending: the checkpoint is stale while records wait (Line: the finding's
	// summary, Text: an earlier version's words for it; N: records waiting).
	FactStalePending FactKind = "stale_pending"
	// FactRecordsWaiting: records have waited with no checkpoint commit (N: records, Wait,
	// StaleAfter; At, Batch: the last commit, At zero when none).
	FactRecordsWaiting FactKind = "records_waiting"
	// FactIdleCheckpoint: the checkpoint is stale but nothing waits (Line: the finding's
	// summary, Text: an earlier version's words for it).
	FactIdleCheckpoint FactKind = "idle_checkpoint"
	// FactFinding: a checkpoint finding (Line: its summary, Text: an earlier version's words
	// for it; File).
	FactFinding FactKind = "finding"
	// FactCheckpointRisk: a checkpoint finding worth fixing (Line: its summary, Text: an
	// earlier version's words for it; File).
	FactCheckpointRisk FactKind = "checkpoint_risk"
	// FactPartitionGone: the checkpoint reads a partition the brokers no longer have (Line: the
	// finding's summary, Lines: its evidence; Text, Items: an earlier version's words for
	// them; File).
	FactPartitionGone FactKind = "partition_gone"
	// FactCheckpointLine: a line of a checkpoint finding's evidence (Line).
	FactCheckpointLine FactKind = "checkpoint_line"
	// FactOffsetsGone: retention deleted records the query had not read (N: records, M:
	// partitions, File; Restart, Value: the deployed failOnDataLoss ("" for Spark's
	// default), Source: where it is set).
	FactOffsetsGone FactKind = "offsets_gone"
	// FactProbe: a probe failed (At: when it ran; Why: its reason, with Access when the
	// access check refused; Text: an earlier version's words for it).
	FactProbe FactKind = "probe"
	// FactProbeCorrupt: the probe read a corrupt checkpoint file (Why: its reason; Text: an
	// earlier version's words for it).
	FactProbeCorrupt FactKind = "probe_corrupt"
	// FactOwnProbeRefused: streamwatch's own probe was refused while the job's user may write
	// (Why: the probe's reason; Text: an earlier version's words for it).
	FactOwnProbeRefused FactKind = "own_probe_refused"
	// FactProbeOwner: who owns the folder a probe was refused in (Owner).
	FactProbeOwner FactKind = "probe_owner"
	// FactAccess: the access check judged the location not writable (Access).
	FactAccess FactKind = "access"
	// FactIAMWriteRefused: testIamPermissions allowed a write that a real write was refused.
	FactIAMWriteRefused FactKind = "iam_write_refused"
	// FactWriteRefused: the access check judged the location writable but a real write was
	// refused.
	FactWriteRefused FactKind = "write_refused"
	// FactLog: a driver log signature matched (What: the signature's ID, N: how often, At: the
	// last line's time, zero when undated, Text: an example line; Title: an earlier version's
	// title of the signature, without What).
	FactLog FactKind = "log"
	// FactLogContradicted: the access check contradicts a driver log permission error (What:
	// the signature's ID, or Title: an earlier version's title of it; the verdict's Access says
	// what the check judged).
	FactLogContradicted FactKind = "log_contradicted"
	// FactContradiction: a documented fact something observed contradicts (Contradiction).
	FactContradiction FactKind = "contradiction"
	// FactNotSet: the deployed config does not set a documented field (What: the deployed
	// config's field, Value: the documented value, Source: the deployed config's evidence,
	// Drift: the difference, whose reason commands words; Text: an earlier version's words
	// for that reason, or "").
	FactNotSet FactKind = "not_set"
	// FactUnreadTopics: documented topics the checkpoint has no offsets for hold records
	// (Items: the topics, N: records, File: the checkpoint's offsets file).
	FactUnreadTopics FactKind = "unread_topics"
	// FactUnknownPartitions: partitions of read topics the checkpoint does not know hold
	// records (N: records, M: partitions, File: the checkpoint's offsets file).
	FactUnknownPartitions FactKind = "unknown_partitions"
	// FactNewPartitions: the same partitions as PARTITIONS_UNKNOWN's evidence (N: records, M:
	// partitions).
	FactNewPartitions FactKind = "new_partitions"
	// FactPartitionsAbove0: of the unknown partitions, M start above offset 0 (Restart, Value:
	// the deployed failOnDataLoss ("" for Spark's default), Source: where it is set).
	FactPartitionsAbove0 FactKind = "partitions_above_0"
	// FactCheckError: a check failed, or the checkpoint was unreadable (Check: which, Check*;
	// Text: the error; Line: the checkpoint finding's summary, whose words an earlier version
	// kept in Text).
	FactCheckError FactKind = "check_error"
)

// Restart is what Spark does on restart with records it cannot read.
type Restart string

// The restarts.
const (
	RestartFail Restart = "fail" // failOnDataLoss true (Spark's default): the query fails
	RestartSkip Restart = "skip" // failOnDataLoss false: the query skips the deleted records
	RestartRead Restart = "read" // failOnDataLoss false: a new partition is read from its earliest offset
)

// Fact is one finding of a diagnosis, as data: its Kind says what it is and which fields it
// uses; commands words it. A Fact holds no error and no function, so a Verdict encodes as JSON.
type Fact struct {
	Kind   FactKind
	Text   string   `json:",omitempty"` // text an integration produced
	Detail string   `json:",omitempty"`
	Check  string   `json:",omitempty"` // Check*
	What   string   `json:",omitempty"`
	Group  string   `json:",omitempty"`
	Status string   `json:",omitempty"`
	Title  string   `json:",omitempty"`
	File   string   `json:",omitempty"`
	Value  string   `json:",omitempty"`
	Source string   `json:",omitempty"`
	Items  []string `json:",omitempty"`
	N      int64    `json:",omitempty"`
	M      int64    `json:",omitempty"`
	Batch  int64    `json:",omitempty"`
	At     time.Time
	// Wait and StaleAfter are how long records waited and when a checkpoint counts as stale.
	Wait          time.Duration  `json:",omitempty"`
	StaleAfter    time.Duration  `json:",omitempty"`
	Restart       Restart        `json:",omitempty"`
	Contradiction *Contradiction `json:",omitempty"`
	// Lag is, for FactGroupIdle, the lag report's wrong-group finding with what its words
	// need (Mismatch, and the report's cluster, topics, group and evidence).
	Lag *kafka.LagReport `json:",omitempty"`
	// LagSummary is, for FactGroupStopped and FactLagWarning, the evaluator's verdict over the
	// group's partitions.
	LagSummary *kafka.Summary `json:",omitempty"`
	// Drift is, for FactNotSet, the deployed config's difference.
	Drift *deployconf.Difference `json:",omitempty"`
	// Line is a checkpoint finding's summary (or, for FactCheckpointLine, a line of its
	// evidence) and Lines its evidence, for commands to word.
	Line  *spark.Line  `json:",omitempty"`
	Lines []spark.Line `json:",omitempty"`
	// Why is, for the probe facts, the probe's reason (probe.Result.Why); Owner, for
	// FactProbeOwner, who owns its folder; Access the access check's judgment its words use.
	Why    []probe.Finding  `json:",omitempty"`
	Owner  *probe.Ownership `json:",omitempty"`
	Access *access.Report   `json:",omitempty"`
	// Risk is the cause whose evidence this is when that cause explains no present symptom
	// (Verdict.Risks); "" otherwise.
	Risk string `json:",omitempty"`
}

// text is an integration's line of evidence as a Fact.
func text(s string) Fact { return Fact{Kind: FactText, Text: s} }

// Equal says whether two facts are the same finding, field by field (times by the instant).
func (f Fact) Equal(g Fact) bool {
	if !f.At.Equal(g.At) {
		return false
	}
	f.At, g.At = time.Time{}, time.Time{}
	return reflect.DeepEqual(f, g)
}

// appendFact appends f unless facts hold it already.
func appendFact(facts []Fact, f Fact) []Fact {
	if slices.ContainsFunc(facts, f.Equal) {
		return facts
	}
	return append(facts, f)
}
