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
	Pipeline string
	Now      time.Time // the diagnosis; zero means time.Now
	// Contract is what the pipeline documents, with where each fact is written.
	Contract      Contract
	Lag           *kafka.LagReport
	LagErr        error
	Checkpoint    *spark.Report
	CheckpointErr error
	// Brokers is what the brokers hold of the checkpoint's and the documented topics;
	// OldestWaiting the own timestamp of the oldest record waiting beyond the checkpoint.
	Brokers       *kafka.LogRanges
	BrokersErr    error
	OldestWaiting time.Time
	Probe         *probe.Result // the read-only probe run now, with its access judgment
	LastWrite     *probe.Result // the newest stored probe (with a write test when configured), if any
	Logs          *driverlog.Report
	LogsErr       error
	Deployed      *deployconf.Deployed // the deployed job's options, when deployed_config is set
	Drift         []deployconf.Difference
	DriftErr      error
	Unfinished    []string // checks still running at the deadline
}

// Symptom IDs: what is wrong now, seen live.
const (
	SymptomProgressStopped     = "PROGRESS_STOPPED"
	SymptomDocumentedGroupIdle = "DOCUMENTED_GROUP_IDLE"
	SymptomLagGrowing          = "LAG_GROWING"
	SymptomProbeFailing        = "PROBE_FAILING"
	SymptomLogErrors           = "LOG_ERRORS"
	SymptomBrokersUnreachable  = "BROKERS_UNREACHABLE"
	// SymptomTopicUnread: records of a documented topic wait on the brokers and the
	// checkpoint reads none of its partitions (Symptom.Unread).
	SymptomTopicUnread = "DOCUMENTED_TOPIC_UNREAD"
)

// symptomOrder is the order symptoms are listed in.
var symptomOrder = []string{SymptomProgressStopped, SymptomDocumentedGroupIdle, SymptomTopicUnread, SymptomLagGrowing,
	SymptomProbeFailing, SymptomLogErrors, SymptomBrokersUnreachable}

// Cause IDs, in the order the product tells them apart.
const (
	CauseNotWritable   = "CHECKPOINT_NOT_WRITABLE"
	CauseGroupMismatch = "CONSUMER_GROUP_MISMATCH"
	CauseCorrupt       = "CHECKPOINT_CORRUPT"
	CauseBrokerDown    = "BROKER_UNREACHABLE"
	CauseSlowConsumer  = "CONSUMER_SLOWER_THAN_PRODUCER"
	// The pipeline's contract contradicted: the job reads other topics, another cluster, or
	// checkpoints elsewhere than documented (Cause.Findings name the field and both values).
	CauseTopicMismatch    = "TOPIC_MISMATCH"
	CauseClusterMismatch  = "CLUSTER_MISMATCH"
	CauseLocationMismatch = "CHECKPOINT_LOCATION_MISMATCH"
	// The checkpoint's offsets against what the brokers hold (Cause.Findings count them).
	CauseOffsetsGone       = "CHECKPOINT_OFFSETS_GONE"
	CausePartitionsUnknown = "PARTITIONS_NOT_IN_CHECKPOINT"
)

// causeOrder lists every cause.
var causeOrder = []string{CauseNotWritable, CauseGroupMismatch, CauseTopicMismatch, CauseClusterMismatch, CauseLocationMismatch,
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

// Sources of a cause's signals, as Cause.Signals names them (besides "the symptom").
const (
	SignalAccess     = srcAccess
	SignalProbe      = srcProbe
	SignalLogs       = srcLogs
	SignalCheckpoint = srcCheckpoint
	SignalKafka      = srcKafka
	SignalDeployed   = srcConfig
	SignalBrokers    = srcBrokers
)

// Symptom is one thing wrong now, with its evidence.
type Symptom struct {
	ID       string
	Title    string // "" for the symptoms whose title the reply's layout gives (by ID)
	Evidence []string
	// Unread are the documented topics nobody reads (DOCUMENTED_TOPIC_UNREAD).
	Unread []TopicUnread
	// Stopped is the stop seen in the checkpoint (PROGRESS_STOPPED), nil when it was seen
	// elsewhere only.
	Stopped *StoppedCheckpoint
	sources []string
}

// StoppedCheckpoint is a checkpoint whose records have waited checkpoint.stale_after with no
// commit.
type StoppedCheckpoint struct {
	Waiting int64         // the records waiting beyond it that the brokers still hold
	Waited  time.Duration // how long they have waited with no commit
	// FromRecords says Waited counts from the oldest waiting record's own timestamp;
	// otherwise it counts from the newest commit (the records' times could not be read).
	FromRecords bool
	Commit      string    // the newest commit's file
	CommittedAt time.Time // when it was written
	Deleted     int64     // records beyond it the brokers no longer hold (lost, not waiting)
}

// Cause is one probable cause: it explains at least one present symptom.
type Cause struct {
	ID         string
	Title      string // "" for the causes whose title and next step the reply's layout gives (by ID)
	Confidence Confidence
	Signals    []string // the independent sources that support it
	Explains   []string // the present symptoms it explains (IDs)
	Evidence   []string
	// Findings are the contradictions and offsets findings behind it, as data.
	Findings []Finding
	Next     string
	direct   bool
}

// Verdict is the answer of diagnose.
type Verdict struct {
	Pipeline string
	Healthy  bool
	Symptoms []Symptom
	Causes   []Cause // most probable first
	// Unexplained are the present symptoms no cause explains.
	Unexplained []string
	// Risks are problems that cause no present symptom, or findings from configuration text
	// alone: worth fixing, not the reason for an alert. RiskFindings are those found as data
	// (a contradicted documented fact, offsets the brokers no longer hold).
	Risks        []string
	RiskFindings []Finding
	// RuledOut lists, when a present symptom has no cause, every cause that could explain it
	// with what the checks saw of it (or why they could not look); Next is the one step a
	// person should take then (a Next* code).
	RuledOut []Ruled
	Next     string
	// History is evidence older than the newest progress.
	History []string
	// Progress is the newest progress seen (checkpoint commit or group commit); zero: none.
	Progress     time.Time
	ProgressWhat string
	// Access says whose write access was judged, and the verdict ("" when not judged).
	Access     string
	Notes      []string
	Unfinished []string
}

type causeDef struct {
	title, next string // "" for the causes the reply's layout names
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
	CauseTopicMismatch:     {explains: []string{SymptomTopicUnread, SymptomDocumentedGroupIdle, SymptomProgressStopped}},
	CauseClusterMismatch:   {explains: []string{SymptomProgressStopped, SymptomDocumentedGroupIdle, SymptomTopicUnread}},
	CauseLocationMismatch:  {explains: []string{SymptomProgressStopped}},
	CauseOffsetsGone:       {explains: []string{SymptomProgressStopped, SymptomLogErrors}},
	CausePartitionsUnknown: {explains: []string{SymptomProgressStopped}},
}

// judge is one Judge call's working state.
type judge struct {
	in       Inputs
	v        Verdict
	symptoms map[string]*Symptom
	signals  map[string]map[string]bool // cause → source → direct
	evidence map[string][]string
	findings map[string][]Finding
}

// Judge establishes the symptoms and names the causes that explain them.
func Judge(in Inputs) Verdict {
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	j := &judge{in: in, v: Verdict{Pipeline: in.Pipeline, Unfinished: in.Unfinished},
		symptoms: map[string]*Symptom{}, signals: map[string]map[string]bool{}, evidence: map[string][]string{}, findings: map[string][]Finding{}}
	j.progress()
	j.access()
	j.kafka()
	j.checkpoint()
	j.probes()
	j.logs()
	j.drift()
	j.contract()
	j.offsets()
	j.errors()
	j.conclude()
	j.ruleOut()
	return j.v
}

// finding records a finding as a signal of its cause from source.
func (j *judge) finding(f Finding, source string, direct bool) {
	j.signal(f.Cause, source, direct)
	j.findings[f.Cause] = append(j.findings[f.Cause], f)
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
		ev := mm.Evidence
		if ev == "" {
			ev = fmt.Sprintf("documented group %s is %s: %s", mm.Documented, mm.Reason, mm.Detail)
		}
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
			stop := j.stopped(c)
			switch {
			case c.PendingTotal > 0 && stop.Waited >= c.StaleAfter:
				j.symptom(SymptomProgressStopped, "progress stopped", srcCheckpoint, "")
				j.symptoms[SymptomProgressStopped].Stopped = &stop
			case c.PendingTotal > 0:
				j.v.Notes = append(j.v.Notes, fmt.Sprintf("checkpoint: %s; the %s records waiting began to wait only %s ago (the topic was quiet before): no stall yet",
					f.Summary, human.Digits(c.PendingTotal), human.Age(stop.Waited)))
			default:
				j.v.Notes = append(j.v.Notes, "checkpoint: "+f.Summary+"; no records wait on the brokers (an idle topic needs no commits)")
			}
		case spark.CodeCorruptFile:
			j.signal(CauseCorrupt, srcCheckpoint, true, fileEvidence(f))
		case spark.CodeUnreadable:
			j.v.Notes = append(j.v.Notes, "checkpoint: "+f.Summary)
		case spark.CodeTempFilesLeft, spark.CodeStateBehind, spark.CodeMissing:
			if f.Severity >= spark.SeverityWarning {
				j.v.Risks = append(j.v.Risks, "checkpoint: "+fileEvidence(f))
			}
		}
	}
}

// stopped measures how long the records waiting beyond the checkpoint have waited with no
// commit: from the oldest one's own timestamp, or from the newest commit when that is later
// or the timestamps could not be read. The quiet time before records arrived never counts.
func (j *judge) stopped(c *spark.Report) StoppedCheckpoint {
	st := StoppedCheckpoint{Waiting: c.PendingTotal, Deleted: c.DeletedTotal}
	since := time.Time{}
	if cb := c.Committed; cb != nil {
		st.Commit, st.CommittedAt, since = cb.File, cb.ModTime, cb.ModTime
	}
	if o := j.in.OldestWaiting; !o.IsZero() {
		st.FromRecords = true
		if o.After(since) {
			since = o
		}
	}
	if !since.IsZero() {
		st.Waited = max(j.in.Now.Sub(since), 0)
	}
	return st
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
			if writable {
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
	writable := j.in.Probe != nil && j.in.Probe.Access.Judged() && j.in.Probe.Access.Writable
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
		case "KAFKA_DATA_LOSS":
			j.signal(CauseOffsetsGone, srcLogs, false, ev)
		}
	}
}

// drift turns each field the deployed config contradicts into a finding of its cause: the
// text of a file is an indirect signal. A field other than the group that the file does not
// set at all contradicts nothing (the job may set it in its code): a risk to look at.
func (j *judge) drift() {
	for _, d := range j.in.Drift {
		if d.Severity == deployconf.SeverityMissing && d.Field != deployconf.FieldGroup {
			ev := fmt.Sprintf("deployed config: %s documented %q, not set (%s)", d.Field, d.Documented, d.Evidence)
			if d.Reason != "" {
				ev += ": " + d.Reason
			}
			j.v.Risks = append(j.v.Risks, ev)
			continue
		}
		field, cause := FieldGroup, CauseGroupMismatch
		switch d.Field {
		case deployconf.FieldTopics:
			field, cause = FieldTopics, CauseTopicMismatch
		case deployconf.FieldBootstrap:
			field, cause = FieldCluster, CauseClusterMismatch
		case deployconf.FieldCheckpointLocation:
			field, cause = FieldCheckpoint, CauseLocationMismatch
		}
		c := &Contradiction{Field: field, Documented: j.documented(field, d.Documented),
			Observed: Fact{Value: d.Deployed, Seen: SeenDeployed, Where: d.Evidence}, Reason: d.Reason}
		j.finding(Finding{Cause: cause, Contradiction: c}, srcConfig, false)
	}
}

// documented is the documented fact of field, or value as the comparison saw it when the
// contract was not given.
func (j *judge) documented(field, value string) Fact {
	ct := j.in.Contract
	f := map[string]Fact{FieldCluster: ct.Cluster, FieldTopics: ct.Topics, FieldGroup: ct.Group, FieldCheckpoint: ct.Checkpoint}[field]
	if f.Seen == "" {
		f = Fact{Value: value, Seen: SeenConfig}
	}
	return f
}

// contract compares the documented facts with the checkpoint and the brokers: the topics
// the checkpoint's offsets read, whether the documented location holds a checkpoint at all,
// whether the documented topics exist on the documented cluster. What the checkpoint or the
// brokers show of themselves is a direct signal.
func (j *judge) contract() {
	ct := j.in.Contract
	documented := topicSet(ct.TopicList)
	if c := j.in.Checkpoint; c != nil {
		if pb := baseline(c); pb != nil && len(documented) > 0 {
			reads, where := checkpointTopics(pb)
			if len(reads) > 0 && !slices.Equal(reads, documented) {
				first := reads[0]
				for _, t := range reads {
					if !slices.Contains(documented, t) {
						first = t
						break
					}
				}
				j.finding(Finding{Cause: CauseTopicMismatch, Contradiction: &Contradiction{Field: FieldTopics,
					Documented: j.documented(FieldTopics, strings.Join(documented, ", ")),
					Observed:   Fact{Value: strings.Join(reads, ", "), Seen: SeenCheckpoint, Where: where[first]}}}, srcCheckpoint, true)
			}
		}
		if f := c.Finding(spark.CodeMissing); f != nil && f.File == "" && f.Severity == spark.SeverityCritical && !c.Has(spark.CodeUnreadable) {
			j.finding(Finding{Cause: CauseLocationMismatch, Contradiction: &Contradiction{Field: FieldCheckpoint,
				Documented: j.documented(FieldCheckpoint, c.Location),
				Observed:   Fact{Seen: SeenCheckpoint, Where: c.Location}}}, srcCheckpoint, true)
		}
	}
	if b := j.in.Brokers; b != nil {
		var absent []string
		for _, t := range documented {
			if tr, ok := b.Topic(t); ok && !tr.Exists {
				absent = append(absent, t)
			}
		}
		if len(absent) > 0 {
			j.finding(Finding{Cause: CauseTopicMismatch, Contradiction: &Contradiction{Field: FieldTopics,
				Documented: j.documented(FieldTopics, strings.Join(documented, ", ")),
				Observed:   Fact{Value: strings.Join(without(documented, absent), ", "), Seen: SeenBrokers, Where: brokersWhere(b)},
				Absent:     absent}}, srcBrokers, true)
		}
	}
}

// offsets compares the checkpoint's offsets with what the brokers hold (offsetsFindings),
// and finds the documented topics whose records wait while the checkpoint reads none of
// their partitions.
func (j *judge) offsets() {
	c, b := j.in.Checkpoint, j.in.Brokers
	if c == nil || b == nil {
		return
	}
	for _, f := range offsetsFindings(c, b, failOnDataLoss(j.in.Deployed)) {
		cause := CauseOffsetsGone
		if f.Code == PartitionsUnknown {
			cause = CausePartitionsUnknown
		}
		j.finding(Finding{Cause: cause, Offsets: f}, srcBrokers, true)
	}
	if unread := unreadTopics(j.in.Contract.TopicList, c, b); len(unread) > 0 {
		j.symptom(SymptomTopicUnread, "", srcBrokers, "")
		j.symptoms[SymptomTopicUnread].Unread = unread
	}
}

// topicSet sorts and deduplicates.
func topicSet(topics []string) []string {
	out := slices.Clone(topics)
	slices.Sort(out)
	return slices.Compact(out)
}

// without is a less the elements of b.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
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
	for _, id := range symptomOrder {
		if s := j.symptoms[id]; s != nil {
			j.v.Symptoms = append(j.v.Symptoms, *s)
		}
	}
	explained := map[string]bool{}
	for id, sources := range j.signals {
		def := causeDefs[id]
		c := Cause{ID: id, Title: def.title, Next: def.next, Evidence: j.evidence[id], Findings: j.findings[id]}
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
			j.v.RiskFindings = append(j.v.RiskFindings, c.Findings...)
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
	sort.SliceStable(j.v.RiskFindings, func(a, b int) bool {
		return slices.Index(causeOrder, j.v.RiskFindings[a].Cause) < slices.Index(causeOrder, j.v.RiskFindings[b].Cause)
	})
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
		case CauseGroupMismatch:
			// The documented group's stop, not the checkpoint's: the job reads elsewhere.
			return slices.Contains(s.sources, srcKafka)
		case CauseTopicMismatch:
			// The same; or the documented topic is not on the cluster at all.
			_, absent := own[srcBrokers]
			return absent || slices.Contains(s.sources, srcKafka)
		case CauseOffsetsGone, CausePartitionsUnknown:
			// Only when Spark fails over them (failOnDataLoss); otherwise it skips them.
			return j.fails(cause)
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

// fails says whether Spark fails the query over a cause's offsets findings, or, for a driver
// log that reports data loss, whether failOnDataLoss is true.
func (j *judge) fails(cause string) bool {
	for _, f := range j.findings[cause] {
		if f.Offsets != nil && f.Offsets.Fails() {
			return true
		}
	}
	_, logged := j.signals[cause][srcLogs]
	return logged && cause == CauseOffsetsGone && failOnDataLoss(j.in.Deployed).Value == "true"
}

func riskOf(cause string) string {
	switch cause {
	case CauseNotWritable:
		return "checkpoint not writable (no live symptom yet: the next batch will fail to commit)"
	case CauseCorrupt:
		return "corrupt checkpoint file (no live symptom of it)"
	case CauseGroupMismatch:
		return "consumer group (no live symptom of it)"
	}
	return cause
}

func logEvidence(m driverlog.Match) string {
	when := ""
	if !m.Last.IsZero() {
		when = " (last " + m.Last.UTC().Format("2006-01-02 15:04:05Z") + ")"
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

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }
