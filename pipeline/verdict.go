// Judge decides what is wrong with a pipeline from the results of every diagnostic at once. It
// first establishes the live symptoms (progress stopped, the documented group idle while another
// consumes, lag growing, probes failing, errors in the driver log, brokers unreachable), then
// names a probable cause only when it explains a present symptom, with a confidence derived
// from how many independent signals support it. Evidence older than the newest progress
// (checkpoint commit, group commit) is history, never a cause; findings from configuration
// text alone, or problems that explain no present symptom, are risks. Judge is pure: it reads
// results, it fetches nothing. docs/diagnosis.md lists each cause with the symptom it needs.

package pipeline

import (
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
)

// Check names, as reported when one did not finish in time (Verdict.Unfinished) or failed
// (FactCheckError); commands words them.
const (
	CheckLag        = "lag"
	CheckCheckpoint = "checkpoint"
	CheckProbe      = "probe"
	CheckLogs       = "logs"
	CheckDrift      = "drift"
)

// Inputs are the diagnostics' results; a nil result with a nil error means the check does
// not apply to the pipeline (no Kafka, no logs configured…).
type Inputs struct {
	Pipeline      string
	Now           time.Time // the diagnosis; zero means time.Now
	Lag           *kafka.LagReport
	LagErr        error
	Checkpoint    *spark.Report
	CheckpointErr error
	Probe         *probe.Result // the read-only probe run now, with its access judgment
	LastWrite     *probe.Result // the newest stored probe (with a write test when configured), if any
	Logs          *driverlog.Report
	LogsErr       error
	Drift         []deployconf.Difference
	Deployed      *deployconf.Deployed // the deployed options the drift was read from
	DriftErr      error
	// Brokers is what the brokers hold of the documented topics and those the checkpoint
	// reads (Checkpoints.Read).
	Brokers    *kafka.TopicRanges
	BrokersErr error
	// Contract is what the configuration documents about the pipeline.
	Contract   Contract
	Unfinished []string // checks still running at the deadline
}

// Symptom IDs: what is wrong now, seen live.
const (
	SymptomProgressStopped     = "PROGRESS_STOPPED"
	SymptomDocumentedGroupIdle = "DOCUMENTED_GROUP_IDLE"
	SymptomLagGrowing          = "LAG_GROWING"
	SymptomProbeFailing        = "PROBE_FAILING"
	SymptomLogErrors           = "LOG_ERRORS"
	SymptomBrokersUnreachable  = "BROKERS_UNREACHABLE"
	SymptomRecordsUnread       = "RECORDS_UNREAD"
)

// mismatchReport is the lag report's wrong-group finding with what its words need (the
// report's cluster, topics, group and evidence), without the partitions.
func mismatchReport(l *kafka.LagReport) *kafka.LagReport {
	return &kafka.LagReport{Cluster: l.Cluster, Topics: l.Topics, Group: l.Group, GroupExists: l.GroupExists,
		Status: l.Status, Summary: l.Summary, Mismatch: l.Mismatch}
}

// Cause IDs, in the order the product tells them apart.
const (
	CauseNotWritable   = "CHECKPOINT_NOT_WRITABLE"
	CauseGroupMismatch = "CONSUMER_GROUP_MISMATCH"
	CauseCorrupt       = "CHECKPOINT_CORRUPT"
	CauseBrokerDown    = "BROKER_UNREACHABLE"
	CauseSlowConsumer  = "CONSUMER_SLOWER_THAN_PRODUCER"
	// Contradictions of the pipeline's contract, besides the group.
	CauseTopicMismatch      = "TOPIC_MISMATCH"
	CauseClusterMismatch    = "CLUSTER_MISMATCH"
	CauseCheckpointMismatch = "CHECKPOINT_LOCATION_MISMATCH"
	// The checkpoint against what the brokers hold.
	CauseOffsetsGone       = "OFFSETS_GONE"
	CausePartitionsUnknown = "PARTITIONS_UNKNOWN"
)

// Causes lists every cause, in the order the product tells them apart.
var Causes = []string{CauseNotWritable, CauseGroupMismatch, CauseTopicMismatch, CauseClusterMismatch, CauseCheckpointMismatch,
	CauseCorrupt, CauseOffsetsGone, CausePartitionsUnknown, CauseBrokerDown, CauseSlowConsumer}

// Confidence says how well a cause is supported.
type Confidence string

// The confidences. Confirmed: a direct signal of the cause (a check of the thing itself) and
// at least one more independent signal (another source, or the symptom it explains seen from
// elsewhere). Likely: a direct signal alone, or two indirect ones. Possible: one indirect
// signal (driver log lines, the deployed config's text).
const (
	Confirmed Confidence = "confirmed"
	Likely    Confidence = "likely"
	Possible  Confidence = "possible"
)

func (c Confidence) rank() int {
	switch c {
	case Confirmed:
		return 0
	case Likely:
		return 1
	}
	return 2
}

// Source is where a signal comes from: each counts once, however many lines it gives.
type Source string

// The sources; commands words them.
const (
	SourceAccess     Source = "access"     // the read-only access check
	SourceProbe      Source = "probe"      // a write probe
	SourceLogs       Source = "logs"       // the driver log
	SourceCheckpoint Source = "checkpoint" // the checkpoint's files
	SourceKafka      Source = "kafka"      // the Kafka groups
	SourceConfig     Source = "config"     // the deployed config
	SourceBrokers    Source = "brokers"    // the brokers
	// SourceSymptom: the symptom a cause explains was seen from another source too.
	SourceSymptom Source = "symptom"
)

// Symptom is one thing wrong now, with its evidence; commands words it by its ID.
type Symptom struct {
	ID       string
	Evidence []Fact
	sources  []Source
}

// Cause is one probable cause: it explains at least one present symptom. commands words its
// title and next step by its ID.
type Cause struct {
	ID         string
	Confidence Confidence
	Signals    []Source // the independent sources that support it
	Explains   []string // the present symptoms it explains (IDs)
	Evidence   []Fact
	// Contradictions are the documented facts behind a contract cause: field, documented
	// and observed value, and where each was seen.
	Contradictions []Contradiction
	direct         bool
}

// Check is one cause as the diagnosis looked for it: found, ruled out by its evidence, or
// not checked (and why). Reason says which; the other fields are its values, as the reason's
// doc says (commands words them).
type Check struct {
	Cause  string
	Status CheckStatus
	Reason CheckReason
	Detail string // a value the reason names: a file, a status; an earlier version's access reason
	Note   string // an earlier version's words for what an access judgment does not cover
	// Access is the access check's judgment ReasonAccessJudged and ReasonAccessNotJudged name.
	Access *access.Report `json:",omitempty"`
	Source string         // where a deployed config says it: "job.conf:12"
	Items  []string       // files or topics
	At     time.Time      // when a probe ran
	N      int            // a count of partitions
}

// CheckStatus is what a diagnosis concluded of a cause.
type CheckStatus string

// The check statuses.
const (
	CheckFound      CheckStatus = "found"
	CheckRuledOut   CheckStatus = "ruled_out"
	CheckNotChecked CheckStatus = "not_checked"
)

// NextStep is the one thing a person should do when a symptom has no probable cause.
type NextStep string

// The next steps, most specific first.
const (
	NextConfigureLogs NextStep = "configure_logs"  // logs.paths is not set: the driver's own errors are unseen
	NextReadLogs      NextStep = "read_logs"       // the driver log shows nothing streamwatch knows: read it around the stop
	NextWriteProbe    NextStep = "write_probe"     // only a real write would tell: probe with write
	NextCheckJob      NextStep = "check_job"       // everything streamwatch checks holds: look at the job itself
	NextWaitForChecks NextStep = "wait_for_checks" // checks did not finish in time: run diagnose again
)

// Verdict is the answer of diagnose.
type Verdict struct {
	Pipeline string
	// Description is pipelines[].description, for the replies that name the pipeline.
	Description string
	Healthy     bool
	Symptoms    []Symptom
	Causes      []Cause // most probable first
	// Unexplained are the present symptoms no cause explains.
	Unexplained []string
	// Risks are problems that cause no present symptom (a cause's evidence, with Fact.Risk
	// its cause), or findings from configuration text alone: worth fixing, not the reason for
	// an alert.
	Risks []Fact
	// History is evidence older than the newest progress (FactProbe, FactLog; a log fact
	// with a zero At is undated).
	History []Fact
	// Progress is the newest progress seen: the checkpoint commit of ProgressBatch, or, when
	// ProgressGroup is set, the commits of that group; zero: none.
	Progress      time.Time
	ProgressBatch int64  `json:",omitempty"`
	ProgressGroup string `json:",omitempty"`
	// Access is the read-only probe's judgment of write access; nil when none ran.
	Access     *Access `json:",omitempty"`
	Notes      []Fact
	Unfinished []string // Check*
	// Contradictions are every documented fact that something observed contradicts, each
	// marked with its cause and whether it is only a risk.
	Contradictions []Contradiction
	// Checked is every cause the diagnosis looked for and what it concluded; Next is the one
	// step to take when a symptom has no cause ("" otherwise).
	Checked []Check
	Next    NextStep
	// Restart says what Spark does on restart with offsets retention deleted: RestartFail
	// (failOnDataLoss true, the default) or RestartSkip; "" when none are gone.
	Restart Restart
}

// Access is whose write access the read-only probe judged, and what it concluded.
type Access struct {
	// Err says why access was not judged; the other fields are then empty.
	Err      string `json:",omitempty"`
	User     string `json:",omitempty"` // whose access: "uid 185 groups [185] (job_user)"
	Writable bool
	// Identity: an object store judged streamwatch's own identity (gs://), not the job's user.
	Identity bool `json:",omitempty"`
	// Report is the judgment, as codes and values commands words; Err (when it is not an
	// error), Reason and Note are an earlier version's words for it.
	Report *access.Report `json:",omitempty"`
	Reason string         `json:",omitempty"`
	Note   string         `json:",omitempty"`
}

// explainable are the symptoms each cause can explain, in the order they are listed.
var explainable = map[string][]string{
	CauseNotWritable:        {SymptomProgressStopped, SymptomProbeFailing, SymptomLogErrors},
	CauseCorrupt:            {SymptomProgressStopped, SymptomProbeFailing, SymptomLogErrors},
	CauseGroupMismatch:      {SymptomDocumentedGroupIdle, SymptomProgressStopped},
	CauseBrokerDown:         {SymptomBrokersUnreachable, SymptomProgressStopped},
	CauseSlowConsumer:       {SymptomLagGrowing},
	CauseTopicMismatch:      {SymptomRecordsUnread, SymptomProgressStopped, SymptomDocumentedGroupIdle},
	CauseClusterMismatch:    {SymptomRecordsUnread, SymptomProgressStopped, SymptomDocumentedGroupIdle},
	CauseCheckpointMismatch: {SymptomProgressStopped},
	CauseOffsetsGone:        {SymptomProgressStopped},
	CausePartitionsUnknown:  {SymptomRecordsUnread, SymptomProgressStopped},
}

// judge is one Judge call's working state.
type judge struct {
	in       Inputs
	v        Verdict
	symptoms map[string]*Symptom
	signals  map[string]map[Source]bool // cause → source → direct
	evidence map[string][]Fact
	contras  []Contradiction
	// partitionsFail: a partition the checkpoint does not know starts above offset 0 and
	// Spark fails the query on it (failOnDataLoss).
	partitionsFail bool
}

// Judge establishes the symptoms and names the causes that explain them.
func Judge(in Inputs) Verdict {
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	j := &judge{in: in, v: Verdict{Pipeline: in.Pipeline, Unfinished: in.Unfinished},
		symptoms: map[string]*Symptom{}, signals: map[string]map[Source]bool{}, evidence: map[string][]Fact{}}
	j.progress()
	j.access()
	j.kafka()
	j.checkpoint()
	j.probes()
	j.logs()
	j.contract()
	j.errors()
	j.conclude()
	j.checked()
	return j.v
}

func (j *judge) symptom(id string, source Source, evidence Fact) {
	s := j.symptoms[id]
	if s == nil {
		s = &Symptom{ID: id}
		j.symptoms[id] = s
	}
	s.Evidence = appendFact(s.Evidence, evidence)
	if !slices.Contains(s.sources, source) {
		s.sources = append(s.sources, source)
	}
}

// signal records that source supports cause; direct signals check the thing itself.
func (j *judge) signal(cause string, source Source, direct bool, evidence ...Fact) {
	m := j.signals[cause]
	if m == nil {
		m = map[Source]bool{}
		j.signals[cause] = m
	}
	m[source] = m[source] || direct
	for _, e := range evidence {
		j.evidence[cause] = appendFact(j.evidence[cause], e)
	}
}

// note adds a note to the verdict.
func (j *judge) note(f Fact) { j.v.Notes = append(j.v.Notes, f) }

// risk adds a risk to the verdict.
func (j *judge) risk(f Fact) { j.v.Risks = append(j.v.Risks, f) }

// stale says whether evidence from t predates the newest progress: it is then history.
func (j *judge) stale(t time.Time) bool {
	return !j.v.Progress.IsZero() && !t.IsZero() && !t.After(j.v.Progress)
}

// progress finds the newest progress of the query: its newest checkpoint commit, or, for a
// pipeline without a readable checkpoint, the last time the group's committed offsets moved.
// The log lines and probes it dates are about the query, so a group that commits while the
// checkpoint does not is no progress of the query.
func (j *judge) progress() {
	if c := j.in.Checkpoint; c != nil && c.Committed != nil && !c.Committed.ModTime.IsZero() {
		j.v.Progress = c.Committed.ModTime
		j.v.ProgressBatch = c.Committed.ID
		return
	}
	if l := j.in.Lag; l != nil && l.CommitsMoved.After(j.v.Progress) {
		j.v.Progress = l.CommitsMoved
		j.v.ProgressGroup = l.Group.Name
	}
}

// access reads the read-only probe's judgment of the job's write access.
func (j *judge) access() {
	p := j.in.Probe
	if p == nil || p.Access == nil {
		return
	}
	a := p.Access
	if !a.Judged() {
		j.v.Access = &Access{Err: a.Err, Report: a}
		return
	}
	j.v.Access = &Access{User: a.User.String(), Writable: a.Writable, Report: a}
	if a.Identity != "" { // an object store's judgment of streamwatch's own identity (gs://)
		j.v.Access = &Access{Writable: a.Writable, Identity: true, Report: a}
	}
	if !a.Writable {
		j.signal(CauseNotWritable, SourceAccess, true, Fact{Kind: FactAccess, Access: a})
	}
}

func (j *judge) kafka() {
	l := j.in.Lag
	if l == nil {
		return
	}
	if mm := l.Mismatch; mm != nil {
		ev := Fact{Kind: FactGroupIdle, Lag: mismatchReport(l)}
		j.symptom(SymptomDocumentedGroupIdle, SourceKafka, ev)
		if len(mm.Active) > 0 {
			j.signal(CauseGroupMismatch, SourceKafka, true, ev)
		}
	}
	switch l.Status {
	case kafka.StatusStalled, kafka.StatusStopped:
		if l.Mismatch == nil {
			sum := l.Summary
			j.symptom(SymptomProgressStopped, SourceKafka, Fact{Kind: FactGroupStopped, Group: l.Group.Name, Status: l.Status.String(), LagSummary: &sum})
		}
	case kafka.StatusWarning:
		sum := l.Summary
		ev := Fact{Kind: FactLagWarning, LagSummary: &sum}
		j.symptom(SymptomLagGrowing, SourceKafka, ev)
		j.signal(CauseSlowConsumer, SourceKafka, true, ev)
	}
	for _, u := range l.Unavailable {
		if u.What == kafka.PartStoredSamples { // a note about streamwatch, not a symptom of the brokers
			j.note(Fact{Kind: FactSamplesUnread, What: string(u.What), Text: errText(u.Err)})
			continue
		}
		ev := Fact{Kind: FactUnavailable, What: string(u.What), Value: u.Of, N: int64(len(u.Partitions)), Text: errText(u.Err)}
		j.symptom(SymptomBrokersUnreachable, SourceBrokers, ev)
		j.signal(CauseBrokerDown, SourceBrokers, true, ev)
	}
}

func (j *judge) checkpoint() {
	c := j.in.Checkpoint
	if c == nil {
		return
	}
	for _, f := range c.Findings {
		switch f.Code {
		case spark.CodeStale:
			if c.PendingTotal > 0 {
				ev := Fact{Kind: FactStalePending, Line: &f.Summary, N: c.PendingTotal}
				if c.WaitingFor >= 0 {
					ev = Fact{Kind: FactRecordsWaiting, N: c.PendingTotal, Wait: c.WaitingFor, StaleAfter: c.StaleAfter}
					if c.Committed != nil {
						ev.At, ev.Batch = c.Committed.ModTime, c.Committed.ID
					}
				}
				j.symptom(SymptomProgressStopped, SourceCheckpoint, ev)
			} else {
				j.note(Fact{Kind: FactIdleCheckpoint, Line: &f.Summary})
			}
		case spark.CodeCorruptFile:
			j.signal(CauseCorrupt, SourceCheckpoint, true, Fact{Kind: FactFinding, Line: &f.Summary, File: f.File})
		case spark.CodeUnreadable:
			j.note(Fact{Kind: FactCheckError, Check: CheckCheckpoint, Line: &f.Summary})
		case spark.CodeOffsetsGone:
			ev := Fact{Kind: FactOffsetsGone, N: c.LostRecords, M: int64(c.LostPartitions), File: f.File, Restart: RestartFail}
			if d := j.in.Deployed; d != nil && d.FailOnDataLoss != "" {
				ev.Value, ev.Source = d.FailOnDataLoss, d.Sources[deployconf.FieldFailOnDataLoss]
				if !d.FailsOnDataLoss() {
					ev.Restart = RestartSkip
				}
			}
			j.v.Restart = ev.Restart
			evidence := []Fact{ev}
			for _, e := range f.Evidence {
				evidence = append(evidence, Fact{Kind: FactCheckpointLine, Line: &e})
			}
			j.signal(CauseOffsetsGone, SourceBrokers, true, evidence...)
		case spark.CodePartitionGone:
			j.risk(Fact{Kind: FactPartitionGone, Line: &f.Summary, File: f.File, Lines: f.Evidence})
		case spark.CodeTempFilesLeft, spark.CodeStateBehind, spark.CodeMissing:
			if f.Severity >= spark.SeverityWarning {
				j.risk(Fact{Kind: FactCheckpointRisk, Line: &f.Summary, File: f.File})
			}
		}
	}
}

// probes reads the read-only probe run now and the newest stored probe.
func (j *judge) probes() {
	a := j.in.Probe
	judgedJob := a != nil && a.Access.Judged() && a.Access.User.Whose == "job_user"
	writable := a != nil && a.Access.Judged() && a.Access.Writable
	for _, pr := range []*probe.Result{j.in.Probe, j.in.LastWrite} {
		if pr == nil || pr.Status != probe.StatusFailed {
			continue
		}
		ev := Fact{Kind: FactProbe, At: pr.Started, Text: pr.Reason, Why: pr.Why}
		if pr.RefusedByAccess() {
			ev.Access = pr.Access
		}
		if pr == j.in.LastWrite && j.stale(pr.Started) {
			j.v.History = append(j.v.History, ev)
			continue
		}
		if pr.RefusedByAccess() {
			j.symptom(SymptomProbeFailing, SourceAccess, ev)
			j.signal(CauseNotWritable, SourceAccess, true, Fact{Kind: FactAccess, Access: pr.Access})
			continue // the access check's own verdict, counted once
		}
		src := SourceProbe
		if pr.Class == probe.ClassCorrupt {
			src = SourceCheckpoint // it read the same file the checkpoint check did
		}
		j.symptom(SymptomProbeFailing, src, ev)
		switch pr.Class {
		case probe.ClassPermissionDenied:
			if writable && judgedJob {
				j.note(Fact{Kind: FactOwnProbeRefused, Text: pr.Reason, Why: pr.Why})
				continue
			}
			evidence := []Fact{ev}
			if pr.Owner != nil {
				evidence = append(evidence, Fact{Kind: FactProbeOwner, Owner: pr.Owner})
			}
			j.signal(CauseNotWritable, SourceProbe, true, evidence...)
			switch {
			case writable && a.Access.Identity != "":
				j.note(Fact{Kind: FactIAMWriteRefused})
			case writable:
				j.note(Fact{Kind: FactWriteRefused})
			}
		case probe.ClassCorrupt:
			j.signal(CauseCorrupt, SourceCheckpoint, true, Fact{Kind: FactProbeCorrupt, Text: pr.Reason, Why: pr.Why})
		}
	}
}

func (j *judge) logs() {
	if j.in.Logs == nil {
		return
	}
	// What an object store says of streamwatch's own identity says nothing of the job's.
	writable := j.in.Probe != nil && j.in.Probe.Access.Judged() && j.in.Probe.Access.Writable && j.in.Probe.Access.Identity == ""
	for _, m := range j.in.Logs.Matches {
		ev := Fact{Kind: FactLog, What: m.Signature.ID, N: int64(m.Count), At: m.Last, Text: m.Example}
		if m.Last.IsZero() && !j.v.Progress.IsZero() {
			j.v.History = append(j.v.History, ev) // undated: cannot be placed after the newest progress
			continue
		}
		if j.stale(m.Last) {
			j.v.History = append(j.v.History, ev)
			continue
		}
		j.symptom(SymptomLogErrors, SourceLogs, ev)
		switch m.Signature.ID {
		case "PERMISSION_DENIED", "CHECKPOINT_WRITE_FAILED", "STORAGE_FULL":
			if writable && m.Signature.ID != "STORAGE_FULL" {
				j.note(Fact{Kind: FactLogContradicted, What: m.Signature.ID})
				continue
			}
			j.signal(CauseNotWritable, SourceLogs, false, ev)
		case "CHECKPOINT_LOG_CORRUPT":
			j.signal(CauseCorrupt, SourceLogs, false, ev)
		}
	}
}

// contract compares what the configuration documents with the deployed config, the
// checkpoint and the brokers: each contradiction supports the cause of its field (a cause
// when a symptom it explains is present, a risk otherwise); records waiting on documented
// topics the checkpoint does not read are a symptom.
func (j *judge) contract() {
	for _, c := range contradictions(j.in) {
		c.Cause = contractCause[c.Field]
		j.contras = append(j.contras, c)
		line := c
		j.signal(c.Cause, c.Source, c.Source != SourceConfig, Fact{Kind: FactContradiction, Contradiction: &line})
	}
	for _, d := range j.in.Drift {
		if unsetInFile(d) {
			j.risk(Fact{Kind: FactNotSet, What: d.Field, Value: d.Documented, Source: d.Evidence, Drift: &d})
		}
	}
	u := unreadOf(j.in)
	if u.records <= 0 {
		return
	}
	for _, e := range u.evidence(j.in) {
		j.symptom(SymptomRecordsUnread, SourceBrokers, e)
	}
	if u.newPartitions > 0 {
		j.signal(CausePartitionsUnknown, SourceCheckpoint, true, Fact{Kind: FactNewPartitions, N: u.newRecords, M: int64(u.newPartitions)})
	}
	if u.newAbove0 > 0 {
		// Spark reads a partition it discovers from offset 0; one whose log starts later has
		// lost records, and failOnDataLoss fails the query on it.
		ev := Fact{Kind: FactPartitionsAbove0, M: int64(u.newAbove0), Restart: RestartFail}
		if d := j.in.Deployed; d != nil && d.FailOnDataLoss != "" {
			ev.Value, ev.Source = d.FailOnDataLoss, d.Sources[deployconf.FieldFailOnDataLoss]
			if !d.FailsOnDataLoss() {
				ev.Restart = RestartRead
			}
		}
		j.partitionsFail = ev.Restart == RestartFail
		j.signal(CausePartitionsUnknown, SourceCheckpoint, true, ev)
	}
}

func (j *judge) errors() {
	in := j.in
	if in.LagErr != nil && (errors.Is(in.LagErr, kafka.ErrUnreachable) || errors.Is(in.LagErr, kafka.ErrAuth)) {
		j.symptom(SymptomBrokersUnreachable, SourceBrokers, text(in.LagErr.Error()))
		j.signal(CauseBrokerDown, SourceBrokers, true, text(in.LagErr.Error()))
	} else if in.LagErr != nil {
		j.note(Fact{Kind: FactCheckError, Check: CheckLag, Text: in.LagErr.Error()})
	}
	if in.CheckpointErr != nil {
		j.note(Fact{Kind: FactCheckError, Check: CheckCheckpoint, Text: in.CheckpointErr.Error()})
	}
	if in.LogsErr != nil {
		j.note(Fact{Kind: FactCheckError, Check: CheckLogs, Text: in.LogsErr.Error()})
	}
	if in.DriftErr != nil {
		j.note(Fact{Kind: FactCheckError, Check: CheckDrift, Text: in.DriftErr.Error()})
	}
}

// errText is an error's message, as a Fact holds it ("<nil>" for none, as %v printed it).
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// conclude names the causes that explain a present symptom and grades them; the others are
// risks.
func (j *judge) conclude() {
	for _, id := range []string{SymptomProgressStopped, SymptomRecordsUnread, SymptomDocumentedGroupIdle, SymptomLagGrowing, SymptomProbeFailing, SymptomLogErrors, SymptomBrokersUnreachable} {
		if s := j.symptoms[id]; s != nil {
			j.v.Symptoms = append(j.v.Symptoms, *s)
		}
	}
	explained := map[string]bool{}
	for id, sources := range j.signals {
		c := Cause{ID: id, Evidence: j.evidence[id]}
		for _, k := range j.contras {
			if k.Cause == id {
				c.Contradictions = append(c.Contradictions, k)
			}
		}
		for src, direct := range sources {
			c.Signals = append(c.Signals, src)
			c.direct = c.direct || direct
		}
		slices.Sort(c.Signals)
		elsewhere := false
		for _, sid := range explainable[id] {
			s := j.symptoms[sid]
			if s == nil || !j.explains(id, s) {
				continue
			}
			c.Explains = append(c.Explains, sid)
			for _, src := range s.sources {
				if _, own := sources[src]; !own && !j.otherCauses(id, sid, src) {
					elsewhere = true
				}
			}
		}
		if len(c.Explains) == 0 {
			for _, e := range c.Evidence {
				e.Risk = id
				j.risk(e)
			}
			for i := range j.contras {
				if j.contras[i].Cause == id {
					j.contras[i].Risk = true
				}
			}
			continue
		}
		n := len(c.Signals)
		if elsewhere {
			n++
			c.Signals = append(c.Signals, SourceSymptom)
		}
		switch {
		case c.direct && n >= 2:
			c.Confidence = Confirmed
		case c.direct || n >= 2:
			c.Confidence = Likely
		default:
			c.Confidence = Possible
		}
		for _, sid := range c.Explains {
			explained[sid] = true
		}
		j.v.Causes = append(j.v.Causes, c)
	}
	sort.SliceStable(j.v.Causes, func(a, b int) bool {
		ca, cb := j.v.Causes[a], j.v.Causes[b]
		if ca.Confidence.rank() != cb.Confidence.rank() {
			return ca.Confidence.rank() < cb.Confidence.rank()
		}
		if len(ca.Signals) != len(cb.Signals) {
			return len(ca.Signals) > len(cb.Signals)
		}
		return ca.ID < cb.ID
	})
	for _, s := range j.v.Symptoms {
		if !explained[s.ID] {
			j.v.Unexplained = append(j.v.Unexplained, s.ID)
		}
	}
	j.v.Contradictions = j.contras
	j.v.Healthy = len(j.v.Symptoms) == 0 && len(j.in.Unfinished) == 0
}

// otherCauses says whether a probe or log symptom's source is the evidence of another cause
// (a probe refused by the access check is NOT_WRITABLE's, not CORRUPT's corroboration).
func (j *judge) otherCauses(cause, symptom string, src Source) bool {
	if symptom != SymptomProbeFailing && symptom != SymptomLogErrors {
		return false
	}
	for other, sources := range j.signals {
		if _, ok := sources[src]; ok && other != cause {
			return true
		}
	}
	return false
}

// explains says whether a cause accounts for a present symptom: a group mismatch explains a
// stop seen in Kafka, not one seen in the checkpoint; a log symptom needs a log signal of the
// cause; a probe symptom needs a probe or access signal.
func (j *judge) explains(cause string, s *Symptom) bool {
	own := j.signals[cause]
	switch s.ID {
	case SymptomProgressStopped:
		switch cause {
		case CauseGroupMismatch, CauseTopicMismatch:
			// The documented group stops on the documented topic; the checkpoint of a query
			// that reads other topics can still commit.
			return slices.Contains(s.sources, SourceKafka)
		case CauseCheckpointMismatch:
			// The documented checkpoint's stop; or any stop when the documented location
			// holds no checkpoint at all.
			_, none := own[SourceCheckpoint]
			return none || slices.Contains(s.sources, SourceCheckpoint)
		case CauseOffsetsGone:
			return j.v.Restart == RestartFail
		case CausePartitionsUnknown:
			return j.partitionsFail
		}
		return true
	case SymptomLogErrors:
		_, ok := own[SourceLogs]
		return ok
	case SymptomProbeFailing:
		_, p := own[SourceProbe]
		_, a := own[SourceAccess]
		_, c := own[SourceCheckpoint]
		return p || a || (cause == CauseCorrupt && c)
	}
	return true
}
