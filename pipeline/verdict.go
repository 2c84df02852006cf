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
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/internal/human"
)

// Check names, as reported when one did not finish in time.
const (
	CheckLag        = "lag and status"
	CheckCheckpoint = "checkpoint"
	CheckProbe      = "read-only probe"
	CheckLogs       = "driver logs"
	CheckDrift      = "config drift"
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
	// MismatchWords words the lag report's wrong-group finding (commands.MismatchEvidence).
	MismatchWords func(*kafka.LagReport) string
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

// Signal sources: each counts once, however many lines it gives.
const (
	srcAccess     = "access check"
	srcProbe      = "write probe"
	srcLogs       = "driver log"
	srcCheckpoint = "checkpoint files"
	srcKafka      = "Kafka groups"
	srcConfig     = "deployed config"
	srcBrokers    = "brokers"
)

// Symptom is one thing wrong now, with its evidence.
type Symptom struct {
	ID       string
	Title    string
	Evidence []string
	sources  []string
}

// Cause is one probable cause: it explains at least one present symptom.
type Cause struct {
	ID         string
	Title      string
	Confidence Confidence
	Signals    []string // the independent sources that support it
	Explains   []string // the present symptoms it explains (IDs)
	Evidence   []string
	// Contradictions are the documented facts behind a contract cause: field, documented
	// and observed value, and where each was seen.
	Contradictions []Contradiction
	Next           string
	direct         bool
}

// Check is one cause as the diagnosis looked for it: found, ruled out by its evidence, or
// not checked (and why). Reason says which; the other fields are its values, as the reason's
// doc says (commands words them).
type Check struct {
	Cause  string
	Status CheckStatus
	Reason CheckReason
	Detail string    // a value the reason names: a probe's reason, a file, a status
	Note   string    // what a judgment does not cover (gs://: the job's own identity)
	Source string    // where a deployed config says it: "job.conf:12"
	Items  []string  // files or topics
	At     time.Time // when a probe ran
	N      int       // a count of partitions
}

// CheckStatus is what a diagnosis concluded of a cause.
type CheckStatus string

// The check statuses.
const (
	CheckFound      CheckStatus = "found"
	CheckRuledOut   CheckStatus = "ruled out"
	CheckNotChecked CheckStatus = "not checked"
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
	// Risks are problems that cause no present symptom, or findings from configuration text
	// alone: worth fixing, not the reason for an alert.
	Risks []string
	// History is evidence older than the newest progress.
	History []string
	// Progress is the newest progress seen (checkpoint commit or group commit); zero: none.
	Progress     time.Time
	ProgressWhat string
	// Access says whose write access was judged, and the verdict ("" when not judged).
	Access     string
	Notes      []string
	Unfinished []string
	// Contradictions are every documented fact that something observed contradicts, each
	// marked with its cause and whether it is only a risk.
	Contradictions []Contradiction
	// Checked is every cause the diagnosis looked for and what it concluded; Next is the one
	// step to take when a symptom has no cause ("" otherwise).
	Checked []Check
	Next    NextStep
	// Restart says what Spark does on restart with offsets retention deleted: "fail"
	// (failOnDataLoss true, the default) or "skip"; "" when none are gone.
	Restart string
}

type causeDef struct {
	title, next string
	explains    []string
}

var causeDefs = map[string]causeDef{
	CauseNotWritable: {"The checkpoint location is not writable: the query cannot commit progress",
		"Restore write access for the job's user on the checkpoint location (storage policy, ACL, mount options), then restart the query and watch for the next commit: `watch PIPELINE`.",
		[]string{SymptomProgressStopped, SymptomProbeFailing, SymptomLogErrors}},
	CauseCorrupt: {"The newest checkpoint file is corrupted: Spark cannot restart on it",
		"Back up the checkpoint (`checkpoint backup PIPELINE`), then quarantine the corrupted fragment (`checkpoint repair PIPELINE`) and restart the query.",
		[]string{SymptomProgressStopped, SymptomProbeFailing, SymptomLogErrors}},
	CauseGroupMismatch: {"The job consumes with a different consumer group than the documented one",
		"Check the deployed job's kafka.group.id / groupIdPrefix; either redeploy with the documented group or update the pipeline's documented group.",
		[]string{SymptomDocumentedGroupIdle, SymptomProgressStopped}},
	CauseBrokerDown: {"The Kafka brokers cannot be reached",
		"Check the brokers and the network path from the job (and from streamwatch); the lag cannot be judged meanwhile.",
		[]string{SymptomBrokersUnreachable, SymptomProgressStopped}},
	CauseSlowConsumer: {"The consumer is healthy but slower than the producer: lag grows while commits advance",
		"Scale the job (more executors or partitions) or reduce the batch work; nothing is stuck.",
		[]string{SymptomLagGrowing}},
	CauseTopicMismatch: {"The query reads other topics than the documented ones",
		"Compare the job's subscribe/assign/subscribePattern with the pipeline's kafka.topics; redeploy with the documented topics, or document the ones it reads.",
		[]string{SymptomRecordsUnread, SymptomProgressStopped, SymptomDocumentedGroupIdle}},
	CauseClusterMismatch: {"The job reads another Kafka cluster than the documented one",
		"Compare the job's kafka.bootstrap.servers with the documented cluster's brokers; redeploy against the documented cluster, or correct the documentation.",
		[]string{SymptomRecordsUnread, SymptomProgressStopped, SymptomDocumentedGroupIdle}},
	CauseCheckpointMismatch: {"The job writes its checkpoint somewhere else than the documented location",
		"Compare the job's checkpointLocation with the pipeline's checkpoint.location: streamwatch reads and probes a checkpoint the job does not write.",
		[]string{SymptomProgressStopped}},
	CauseOffsetsGone: {"Retention deleted records the query had not read: the checkpoint resumes from offsets the brokers no longer hold",
		"With failOnDataLoss (Spark's default) the query fails until the offsets are moved past the gap: decide whether the lost records must be replayed from elsewhere, then restart with failOnDataLoss=false once, or repair the checkpoint's offsets; raise the topic's retention.",
		[]string{SymptomProgressStopped}},
	CausePartitionsUnknown: {"Partitions of the topics the query reads are not in its checkpoint",
		"Spark adds new partitions of a subscribed topic at its next batch: if the query runs, they are read soon; with assign= it never reads them (add them); if the query is stopped, restart it. One whose log starts above offset 0 fails it under failOnDataLoss: restart once with failOnDataLoss=false to read it from its earliest offset.",
		[]string{SymptomRecordsUnread, SymptomProgressStopped}},
}

// judge is one Judge call's working state.
type judge struct {
	in       Inputs
	v        Verdict
	symptoms map[string]*Symptom
	signals  map[string]map[string]bool // cause → source → direct
	evidence map[string][]string
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
		symptoms: map[string]*Symptom{}, signals: map[string]map[string]bool{}, evidence: map[string][]string{}}
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

func (j *judge) symptom(id, title, source, evidence string) {
	s := j.symptoms[id]
	if s == nil {
		s = &Symptom{ID: id, Title: title}
		j.symptoms[id] = s
	}
	if evidence != "" && !slices.Contains(s.Evidence, evidence) {
		s.Evidence = append(s.Evidence, evidence)
	}
	if !slices.Contains(s.sources, source) {
		s.sources = append(s.sources, source)
	}
}

// signal records that source supports cause; direct signals check the thing itself.
func (j *judge) signal(cause, source string, direct bool, evidence ...string) {
	m := j.signals[cause]
	if m == nil {
		m = map[string]bool{}
		j.signals[cause] = m
	}
	m[source] = m[source] || direct
	for _, e := range evidence {
		if e != "" && !slices.Contains(j.evidence[cause], e) {
			j.evidence[cause] = append(j.evidence[cause], e)
		}
	}
}

// stale says whether evidence from t predates the newest progress: it is then history.
func (j *judge) stale(t time.Time) bool {
	return !j.v.Progress.IsZero() && !t.IsZero() && !t.After(j.v.Progress)
}

func (j *judge) history(what string, t time.Time) {
	j.v.History = append(j.v.History, fmt.Sprintf("%s (%s, before the newest progress)", what, stamp(t)))
}

// progress finds the newest progress of the query: its newest checkpoint commit, or, for a
// pipeline without a readable checkpoint, the last time the group's committed offsets moved.
// The log lines and probes it dates are about the query, so a group that commits while the
// checkpoint does not is no progress of the query.
func (j *judge) progress() {
	if c := j.in.Checkpoint; c != nil && c.Committed != nil && !c.Committed.ModTime.IsZero() {
		j.v.Progress = c.Committed.ModTime
		j.v.ProgressWhat = fmt.Sprintf("checkpoint commit of batch %d", c.Committed.ID)
		return
	}
	if l := j.in.Lag; l != nil && l.CommitsMoved.After(j.v.Progress) {
		j.v.Progress = l.CommitsMoved
		j.v.ProgressWhat = "commits of group " + l.Group.Name
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
		j.v.Access = "not judged: " + a.Err
		return
	}
	verdict := "may create files in the checkpoint's folders"
	if !a.Writable {
		verdict = "may NOT create files there"
	}
	j.v.Access = fmt.Sprintf("%s %s (judged without writing)", a.User, verdict)
	if a.Identity != "" { // an object store's judgment of streamwatch's own identity (gs://)
		j.v.Access = a.Reason + " (judged without writing; " + a.Note + ")"
	}
	if !a.Writable {
		j.signal(CauseNotWritable, srcAccess, true, a.Reason)
	}
}

func (j *judge) kafka() {
	l := j.in.Lag
	if l == nil {
		return
	}
	if mm := l.Mismatch; mm != nil {
		ev := j.in.mismatchEvidence()
		j.symptom(SymptomDocumentedGroupIdle, "the documented consumer group makes no progress while another group consumes the topic", srcKafka, ev)
		if len(mm.Active) > 0 {
			j.signal(CauseGroupMismatch, srcKafka, true, ev)
		}
	}
	switch l.Status {
	case kafka.StatusStalled, kafka.StatusStopped:
		if l.Mismatch == nil {
			j.symptom(SymptomProgressStopped, "progress stopped", srcKafka, fmt.Sprintf("group %s %s: %s", l.Group.Name, l.Status, l.Evidence))
		}
	case kafka.StatusWarning:
		j.symptom(SymptomLagGrowing, "lag grows while commits advance", srcKafka, l.Evidence)
		j.signal(CauseSlowConsumer, srcKafka, true, l.Evidence)
	}
	for _, u := range l.Unavailable {
		if u.What == "stored samples" {
			j.v.Notes = append(j.v.Notes, fmt.Sprintf("%s: %v", u.What, u.Err))
			continue
		}
		ev := fmt.Sprintf("%s unavailable for %d partition(s): %v", u.What, len(u.Partitions), u.Err)
		j.symptom(SymptomBrokersUnreachable, "the Kafka brokers do not answer", srcBrokers, ev)
		j.signal(CauseBrokerDown, srcBrokers, true, ev)
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
				ev := fmt.Sprintf("%s while %s records wait on the brokers", strings.TrimSuffix(f.Summary, "."), human.Digits(c.PendingTotal))
				if c.WaitingFor >= 0 {
					ev = fmt.Sprintf("%s records have waited %s on the brokers with no checkpoint commit (stale after %s)",
						human.Digits(c.PendingTotal), human.Age(c.WaitingFor), human.Age(c.StaleAfter))
					if c.Committed != nil {
						ev += fmt.Sprintf("; last commit %s (batch %d)", stamp(c.Committed.ModTime), c.Committed.ID)
					}
				}
				j.symptom(SymptomProgressStopped, "progress stopped", srcCheckpoint, ev)
			} else {
				j.v.Notes = append(j.v.Notes, "checkpoint: "+f.Summary+"; no records wait on the brokers (an idle topic needs no commits)")
			}
		case spark.CodeCorruptFile:
			j.signal(CauseCorrupt, srcCheckpoint, true, fileEvidence(f))
		case spark.CodeUnreadable:
			j.v.Notes = append(j.v.Notes, "checkpoint: "+f.Summary)
		case spark.CodeOffsetsGone:
			j.v.Restart = "fail"
			restart := "on restart Spark fails on them (failOnDataLoss is true, Spark's default)"
			if d := j.in.Deployed; d != nil && d.FailOnDataLoss != "" {
				restart = fmt.Sprintf("on restart Spark fails on them (failOnDataLoss=%s, %s)", d.FailOnDataLoss, d.Sources[deployconf.FieldFailOnDataLoss])
				if !d.FailsOnDataLoss() {
					j.v.Restart = "skip"
					restart = fmt.Sprintf("on restart Spark skips them (failOnDataLoss=%s, %s)", d.FailOnDataLoss, d.Sources[deployconf.FieldFailOnDataLoss])
				}
			}
			ev := []string{fmt.Sprintf("%s records on %s of %s are no longer on the brokers: retention deleted them before the query read them; %s",
				human.Digits(c.LostRecords), human.Count(c.LostPartitions, "partition"), f.File, restart)}
			j.signal(CauseOffsetsGone, srcBrokers, true, append(ev, f.Evidence...)...)
		case spark.CodePartitionGone:
			j.v.Risks = append(j.v.Risks, "checkpoint: "+fileEvidence(f)+" ("+strings.Join(f.Evidence, ", ")+")")
		case spark.CodeTempFilesLeft, spark.CodeStateBehind, spark.CodeMissing:
			if f.Severity >= spark.SeverityWarning {
				j.v.Risks = append(j.v.Risks, "checkpoint: "+fileEvidence(f))
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
		ev := "probe " + stamp(pr.Started) + ": " + pr.Reason
		if pr == j.in.LastWrite && j.stale(pr.Started) {
			j.history(ev, pr.Started)
			continue
		}
		if pr.Access.Judged() && !pr.Access.Writable && pr.Reason == pr.Access.Reason {
			j.symptom(SymptomProbeFailing, "the checkpoint-access probe fails", srcAccess, ev)
			j.signal(CauseNotWritable, srcAccess, true, pr.Access.Reason)
			continue // the access check's own verdict, counted once
		}
		src := srcProbe
		if pr.Class == probe.ClassCorrupt {
			src = srcCheckpoint // it read the same file the checkpoint check did
		}
		j.symptom(SymptomProbeFailing, "the checkpoint-access probe fails", src, ev)
		switch pr.Class {
		case probe.ClassPermissionDenied:
			if writable && judgedJob {
				j.v.Notes = append(j.v.Notes, "streamwatch's own probe was refused ("+pr.Reason+"), but the job's user may write: streamwatch runs as another user")
				continue
			}
			ev := []string{ev}
			if pr.Owner != nil {
				ev = append(ev, pr.Owner.Line())
			}
			j.signal(CauseNotWritable, srcProbe, true, ev...)
			switch {
			case writable && a.Access.Identity != "":
				j.v.Notes = append(j.v.Notes, "testIamPermissions said streamwatch's identity may write, but a real write was refused: GCS decides beyond the bucket's IAM policy (IAM conditions, VPC Service Controls, retention)")
			case writable:
				j.v.Notes = append(j.v.Notes, "the access check judged the location writable, but a real write was refused: the storage decides beyond mode bits and ACLs (NFS, SELinux, FUSE)")
			}
		case probe.ClassCorrupt:
			j.signal(CauseCorrupt, srcCheckpoint, true, "probe: "+pr.Reason)
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
		ev := logEvidence(m)
		if m.Last.IsZero() && !j.v.Progress.IsZero() {
			j.v.History = append(j.v.History, ev+" (undated: cannot be placed after the newest progress)")
			continue
		}
		if j.stale(m.Last) {
			j.history(ev, m.Last)
			continue
		}
		j.symptom(SymptomLogErrors, "the driver log reports checkpoint trouble", srcLogs, ev)
		switch m.Signature.ID {
		case "PERMISSION_DENIED", "CHECKPOINT_WRITE_FAILED", "STORAGE_FULL":
			if writable && m.Signature.ID != "STORAGE_FULL" {
				j.v.Notes = append(j.v.Notes, "the driver log's "+m.Signature.Title+" is contradicted by the access check ("+j.v.Access+
					"): access may have been restored since; restart the query")
				continue
			}
			j.signal(CauseNotWritable, srcLogs, false, ev)
		case "CHECKPOINT_LOG_CORRUPT":
			j.signal(CauseCorrupt, srcLogs, false, ev)
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
		j.signal(c.Cause, c.Source, c.Source != srcConfig, c.line())
	}
	for _, d := range j.in.Drift {
		if unsetInFile(d) {
			ev := fmt.Sprintf("deployed config: %s documented %q, not set (%s)", d.Field, d.Documented, d.Evidence)
			if d.Reason != "" {
				ev += ": " + d.Reason
			}
			j.v.Risks = append(j.v.Risks, ev)
		}
	}
	u := unreadOf(j.in)
	if u.records <= 0 {
		return
	}
	for _, e := range u.evidence(j.in) {
		j.symptom(SymptomRecordsUnread, "records wait on documented topics the query does not read", srcBrokers, e)
	}
	if u.newPartitions > 0 {
		j.signal(CausePartitionsUnknown, srcCheckpoint, true, fmt.Sprintf("%s records on %s of the topics the query reads are not in its newest offsets",
			human.Digits(u.newRecords), human.Count(u.newPartitions, "partition")))
	}
	if u.newAbove0 > 0 {
		// Spark reads a partition it discovers from offset 0; one whose log starts later has
		// lost records, and failOnDataLoss fails the query on it.
		restart := "on restart Spark fails on them ('Added partition … starts from … instead of 0'; failOnDataLoss is true, Spark's default)"
		j.partitionsFail = true
		if d := j.in.Deployed; d != nil && d.FailOnDataLoss != "" {
			restart = fmt.Sprintf("on restart Spark fails on them ('Added partition … starts from … instead of 0'; failOnDataLoss=%s, %s)", d.FailOnDataLoss, d.Sources[deployconf.FieldFailOnDataLoss])
			if !d.FailsOnDataLoss() {
				j.partitionsFail = false
				restart = fmt.Sprintf("on restart Spark reads them from their earliest offset (failOnDataLoss=%s, %s)", d.FailOnDataLoss, d.Sources[deployconf.FieldFailOnDataLoss])
			}
		}
		j.signal(CausePartitionsUnknown, srcCheckpoint, true, fmt.Sprintf("%s of them %s above offset 0: their first records are gone; %s",
			human.Count(u.newAbove0, "partition"), map[bool]string{true: "starts", false: "start"}[u.newAbove0 == 1], restart))
	}
}

// line is the contradiction as evidence: the field, both values and where each was seen.
func (c Contradiction) line() string {
	verb := "observed"
	switch c.Source {
	case srcConfig:
		verb = "deployed"
	case srcCheckpoint:
		verb = "read"
	}
	s := fmt.Sprintf("%s: %s documented %q (%s), %s %q (%s)", c.Source, c.Field, c.Documented, c.DocumentedAt, verb, c.Observed, c.ObservedAt)
	if c.Reason != "" {
		s += ": " + c.Reason
	}
	return s
}

func (j *judge) errors() {
	in := j.in
	if in.LagErr != nil && (errors.Is(in.LagErr, kafka.ErrUnreachable) || errors.Is(in.LagErr, kafka.ErrAuth)) {
		j.symptom(SymptomBrokersUnreachable, "the Kafka brokers do not answer", srcBrokers, in.LagErr.Error())
		j.signal(CauseBrokerDown, srcBrokers, true, in.LagErr.Error())
	} else if in.LagErr != nil {
		j.v.Notes = append(j.v.Notes, "lag: "+in.LagErr.Error())
	}
	if in.CheckpointErr != nil {
		j.v.Notes = append(j.v.Notes, "checkpoint: "+in.CheckpointErr.Error())
	}
	if in.LogsErr != nil {
		j.v.Notes = append(j.v.Notes, "driver logs: "+in.LogsErr.Error())
	}
	if in.DriftErr != nil {
		j.v.Notes = append(j.v.Notes, "deployed config: "+in.DriftErr.Error())
	}
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
		def := causeDefs[id]
		c := Cause{ID: id, Title: def.title, Next: def.next, Evidence: j.evidence[id]}
		for _, k := range j.contras {
			if k.Cause == id {
				c.Contradictions = append(c.Contradictions, k)
			}
		}
		for src, direct := range sources {
			c.Signals = append(c.Signals, src)
			c.direct = c.direct || direct
		}
		sort.Strings(c.Signals)
		elsewhere := false
		for _, sid := range def.explains {
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
				j.v.Risks = append(j.v.Risks, riskOf(id)+": "+e)
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
			c.Signals = append(c.Signals, "the symptom")
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
func (j *judge) otherCauses(cause, symptom, src string) bool {
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
			return slices.Contains(s.sources, srcKafka)
		case CauseCheckpointMismatch:
			// The documented checkpoint's stop; or any stop when the documented location
			// holds no checkpoint at all.
			_, none := own[srcCheckpoint]
			return none || slices.Contains(s.sources, srcCheckpoint)
		case CauseOffsetsGone:
			return j.v.Restart == "fail"
		case CausePartitionsUnknown:
			return j.partitionsFail
		}
		return true
	case SymptomLogErrors:
		_, ok := own[srcLogs]
		return ok
	case SymptomProbeFailing:
		_, p := own[srcProbe]
		_, a := own[srcAccess]
		_, c := own[srcCheckpoint]
		return p || a || (cause == CauseCorrupt && c)
	}
	return true
}

func riskOf(cause string) string {
	switch cause {
	case CauseNotWritable:
		return "checkpoint not writable (no live symptom yet: the next batch will fail to commit)"
	case CauseCorrupt:
		return "corrupt checkpoint file (no live symptom of it)"
	case CauseGroupMismatch:
		return "consumer group (no live symptom of it)"
	case CauseTopicMismatch:
		return "topics (no live symptom of it)"
	case CauseClusterMismatch:
		return "Kafka cluster (no live symptom of it)"
	case CauseCheckpointMismatch:
		return "checkpoint location (no live symptom of it)"
	case CauseOffsetsGone:
		return "records deleted unread (the query skips them: failOnDataLoss=false)"
	case CausePartitionsUnknown:
		return "partitions not in the checkpoint (no live symptom of them)"
	}
	return cause
}

func logEvidence(m driverlog.Match) string {
	when := ""
	if !m.Last.IsZero() {
		when = " (last " + human.Stamp(m.Last) + ")"
	}
	return fmt.Sprintf("driver log: %s ×%d%s: %s", m.Signature.Title, m.Count, when, m.Example)
}

func fileEvidence(f spark.Finding) string {
	s := f.Summary
	if f.File != "" && !strings.Contains(s, f.File) {
		s = f.File + ": " + s
	}
	return s
}

func stamp(t time.Time) string { return human.Stamp(t) }
