package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// The words of a verdict's codes: what pipeline.Judge returns as IDs, kinds and fields,
// worded here.

// symptomTitle is a symptom's title, or its ID when it has none.
func symptomTitle(id string) string {
	if t, ok := symptomTitles[id]; ok {
		return t
	}
	return id
}

// causeWords are each cause's title and next step; PIPELINE stands for the pipeline's name.
var causeWords = map[string]struct{ title, next string }{
	pipeline.CauseNotWritable: {"The checkpoint location is not writable: the query cannot commit progress",
		"Restore write access for the job's user on the checkpoint location (storage policy, ACL, mount options), then restart the query and watch for the next commit: `watch PIPELINE`."},
	pipeline.CauseCorrupt: {"The newest checkpoint file is corrupted: Spark cannot restart on it",
		"Back up the checkpoint (`checkpoint backup PIPELINE`), then quarantine the corrupted fragment (`checkpoint repair PIPELINE`) and restart the query."},
	pipeline.CauseGroupMismatch: {"The job consumes with a different consumer group than the documented one",
		"Check the deployed job's kafka.group.id / groupIdPrefix; either redeploy with the documented group or update the pipeline's documented group."},
	pipeline.CauseBrokerDown: {"The Kafka brokers cannot be reached",
		"Check the brokers and the network path from the job (and from streamwatch); the lag cannot be judged meanwhile."},
	pipeline.CauseSlowConsumer: {"The consumer is healthy but slower than the producer: lag grows while commits advance",
		"Scale the job (more executors or partitions) or reduce the batch work; nothing is stuck."},
	pipeline.CauseTopicMismatch: {"The query reads other topics than the documented ones",
		"Compare the job's subscribe/assign/subscribePattern with the pipeline's kafka.topics; redeploy with the documented topics, or document the ones it reads."},
	pipeline.CauseClusterMismatch: {"The job reads another Kafka cluster than the documented one",
		"Compare the job's kafka.bootstrap.servers with the documented cluster's brokers; redeploy against the documented cluster, or correct the documentation."},
	pipeline.CauseCheckpointMismatch: {"The job writes its checkpoint somewhere else than the documented location",
		"Compare the job's checkpointLocation with the pipeline's checkpoint.location: streamwatch reads and probes a checkpoint the job does not write."},
	pipeline.CauseOffsetsGone: {"Retention deleted records the query had not read: the checkpoint resumes from offsets the brokers no longer hold",
		"With failOnDataLoss (Spark's default) the query fails until the offsets are moved past the gap: decide whether the lost records must be replayed from elsewhere, then restart with failOnDataLoss=false once, or repair the checkpoint's offsets; raise the topic's retention."},
	pipeline.CausePartitionsUnknown: {"Partitions of the topics the query reads are not in its checkpoint",
		"Spark adds new partitions of a subscribed topic at its next batch: if the query runs, they are read soon; with assign= it never reads them (add them); if the query is stopped, restart it. One whose log starts above offset 0 fails it under failOnDataLoss: restart once with failOnDataLoss=false to read it from its earliest offset."},
}

// causeTitle is a cause's title, or its ID when it has none.
func causeTitle(id string) string {
	if w, ok := causeWords[id]; ok {
		return w.title
	}
	return id
}

// causeNext is a cause's next step for pipeline p.
func causeNext(id, p string) string {
	return strings.ReplaceAll(causeWords[id].next, "PIPELINE", p)
}

// riskOf says what a cause's evidence is a risk of when it explains no present symptom.
var riskOf = map[string]string{
	pipeline.CauseNotWritable:        "checkpoint not writable (no live symptom yet: the next batch will fail to commit)",
	pipeline.CauseCorrupt:            "corrupt checkpoint file (no live symptom of it)",
	pipeline.CauseGroupMismatch:      "consumer group (no live symptom of it)",
	pipeline.CauseTopicMismatch:      "topics (no live symptom of it)",
	pipeline.CauseClusterMismatch:    "Kafka cluster (no live symptom of it)",
	pipeline.CauseCheckpointMismatch: "checkpoint location (no live symptom of it)",
	pipeline.CauseOffsetsGone:        "records deleted unread (the query skips them: failOnDataLoss=false)",
	pipeline.CausePartitionsUnknown:  "partitions not in the checkpoint (no live symptom of them)",
}

// sourceWords name the sources of a cause's signals.
var sourceWords = map[pipeline.Source]string{
	pipeline.SourceAccess:     "access check",
	pipeline.SourceProbe:      "write probe",
	pipeline.SourceLogs:       "driver log",
	pipeline.SourceCheckpoint: "checkpoint files",
	pipeline.SourceKafka:      "Kafka groups",
	pipeline.SourceConfig:     "deployed config",
	pipeline.SourceBrokers:    "brokers",
	pipeline.SourceSymptom:    "the symptom",
}

func sourceWord(s pipeline.Source) string {
	if w, ok := sourceWords[s]; ok {
		return w
	}
	return string(s)
}

// signalsLine names a cause's sources in order of their words, the symptom seen elsewhere
// last.
func signalsLine(signals []pipeline.Source) string {
	var words []string
	symptom := false
	for _, s := range signals {
		if s == pipeline.SourceSymptom {
			symptom = true
			continue
		}
		words = append(words, sourceWord(s))
	}
	slices.Sort(words)
	if symptom {
		words = append(words, sourceWord(pipeline.SourceSymptom))
	}
	return strings.Join(words, ", ")
}

// checkStatusWords word what a diagnosis concluded of a cause.
var checkStatusWords = map[pipeline.CheckStatus]string{
	pipeline.CheckFound:      "found",
	pipeline.CheckRuledOut:   "ruled out",
	pipeline.CheckNotChecked: "not checked",
}

// unfinishedWords name the checks, as "did not finish in time" lists them.
var unfinishedWords = map[string]string{
	pipeline.CheckLag:        "lag and status",
	pipeline.CheckCheckpoint: "checkpoint",
	pipeline.CheckProbe:      "read-only probe",
	pipeline.CheckLogs:       "driver logs",
	pipeline.CheckDrift:      "config drift",
}

// checkErrorWords name the checks, as a note of their error does.
var checkErrorWords = map[string]string{
	pipeline.CheckLag:        "lag",
	pipeline.CheckCheckpoint: "checkpoint",
	pipeline.CheckProbe:      "probe",
	pipeline.CheckLogs:       "driver logs",
	pipeline.CheckDrift:      "deployed config",
}

// fieldWords name the documented fields a contradiction is about.
var fieldWords = map[string]string{
	pipeline.FieldGroup:      "group",
	pipeline.FieldTopics:     "topics",
	pipeline.FieldBrokers:    "bootstrap servers",
	pipeline.FieldCheckpoint: "checkpoint location",
}

func word(words map[string]string, code string) string {
	if w, ok := words[code]; ok {
		return w
	}
	return code
}

// accessLine is whose write access the read-only probe judged, and its verdict.
func accessLine(a *pipeline.Access) string {
	switch {
	case a == nil:
		return ""
	case a.Report != nil && !a.Report.Judged():
		return "not judged: " + AccessNotJudged(a.Report)
	case a.Err != "":
		return "not judged: " + a.Err
	case a.Identity && a.Report != nil:
		return AccessReason(a.Report) + " (judged without writing; " + AccessNote(a.Report) + ")"
	case a.Identity:
		return a.Reason + " (judged without writing; " + a.Note + ")"
	case a.Writable:
		return a.User + " may create files in the checkpoint's folders (judged without writing)"
	}
	return a.User + " may NOT create files there (judged without writing)"
}

// newestProgress is what the newest progress was.
func newestProgress(v pipeline.Verdict) string {
	if v.ProgressGroup != "" {
		return "commits of group " + v.ProgressGroup
	}
	return fmt.Sprintf("checkpoint commit of batch %d", v.ProgressBatch)
}

// riskLine is a risk: a cause's evidence with what it is a risk of, or a finding of its own.
func riskLine(v pipeline.Verdict, f pipeline.Fact) string {
	if f.Risk != "" {
		return word(riskOf, f.Risk) + ": " + factLine(v, f)
	}
	return factLine(v, f)
}

// historyLine is evidence older than the newest progress, with its date.
func historyLine(v pipeline.Verdict, f pipeline.Fact) string {
	if f.At.IsZero() {
		return factLine(v, f) + " (undated: cannot be placed after the newest progress)"
	}
	return fmt.Sprintf("%s (%s, before the newest progress)", factLine(v, f), human.Stamp(f.At))
}

// factProbeWhy is a probe fact's reason; an earlier version's fact has its words in Text.
func factProbeWhy(f pipeline.Fact) string {
	if len(f.Why) == 0 {
		return f.Text
	}
	return probeWhy(f.Why, f.Access)
}

// factLine words one finding of verdict v.
func factLine(v pipeline.Verdict, f pipeline.Fact) string {
	switch f.Kind {
	case pipeline.FactText:
		return f.Text
	case pipeline.FactGroupIdle:
		if l := f.Lag; l != nil && l.Mismatch != nil {
			if ev := MismatchEvidence(l); ev != "" {
				return ev
			}
			return fmt.Sprintf("documented group %s is %s: %s", l.Mismatch.Documented, l.Mismatch.Reason, idleDetail(l))
		}
		return f.Text
	case pipeline.FactGroupStopped:
		if f.LagSummary != nil {
			return fmt.Sprintf("group %s %s: %s", f.Group, f.Status, lagSummaryLine(*f.LagSummary))
		}
		return fmt.Sprintf("group %s %s: %s", f.Group, f.Status, f.Text)
	case pipeline.FactLagWarning:
		if f.LagSummary != nil {
			return lagSummaryLine(*f.LagSummary)
		}
		return f.Text
	case pipeline.FactUnavailable:
		return fmt.Sprintf("%s unavailable for %d partition(s): %s", partWords(kafka.Part(f.What), f.Value), f.N, f.Text)
	case pipeline.FactSamplesUnread:
		return partWords(kafka.Part(f.What), f.Value) + ": " + f.Text
	case pipeline.FactStalePending:
		return fmt.Sprintf("%s while %s records wait on the brokers", strings.TrimSuffix(findingText(f), "."), human.Digits(f.N))
	case pipeline.FactRecordsWaiting:
		s := fmt.Sprintf("%s records have waited %s on the brokers with no checkpoint commit (stale after %s)",
			human.Digits(f.N), human.Age(f.Wait), human.Age(f.StaleAfter))
		if !f.At.IsZero() {
			s += fmt.Sprintf("; last commit %s (batch %d)", human.Stamp(f.At), f.Batch)
		}
		return s
	case pipeline.FactIdleCheckpoint:
		return "checkpoint: " + findingText(f) + "; no records wait on the brokers (an idle topic needs no commits)"
	case pipeline.FactFinding:
		return fileEvidence(f)
	case pipeline.FactCheckpointRisk:
		return "checkpoint: " + fileEvidence(f)
	case pipeline.FactPartitionGone:
		items := f.Items
		if f.Line != nil {
			items = make([]string, len(f.Lines))
			for i, l := range f.Lines {
				items[i] = sparkLine(l)
			}
		}
		return "checkpoint: " + fileEvidence(f) + " (" + strings.Join(items, ", ") + ")"
	case pipeline.FactCheckpointLine:
		return findingText(f)
	case pipeline.FactOffsetsGone:
		return fmt.Sprintf("%s records on %s of %s are no longer on the brokers: retention deleted them before the query read them; %s",
			human.Digits(f.N), human.Count(int(f.M), "partition"), f.File, onRestart(f, "", "skips them"))
	case pipeline.FactProbe:
		return "probe " + human.Stamp(f.At) + ": " + factProbeWhy(f)
	case pipeline.FactProbeCorrupt:
		return "probe: " + factProbeWhy(f)
	case pipeline.FactOwnProbeRefused:
		return "streamwatch's own probe was refused (" + factProbeWhy(f) + "), but the job's user may write: streamwatch runs as another user"
	case pipeline.FactAccess:
		if f.Access == nil {
			return string(f.Kind)
		}
		return AccessReason(f.Access)
	case pipeline.FactProbeOwner:
		if f.Owner == nil {
			return string(f.Kind)
		}
		return OwnershipLine(*f.Owner)
	case pipeline.FactIAMWriteRefused:
		return "testIamPermissions said streamwatch's identity may write, but a real write was refused: GCS decides beyond the bucket's IAM policy (IAM conditions, VPC Service Controls, retention)"
	case pipeline.FactWriteRefused:
		return "the access check judged the location writable, but a real write was refused: the storage decides beyond mode bits and ACLs (NFS, SELinux, FUSE)"
	case pipeline.FactLog:
		when := ""
		if !f.At.IsZero() {
			when = " (last " + human.Stamp(f.At) + ")"
		}
		return fmt.Sprintf("driver log: %s ×%d%s: %s", logFactTitle(f), f.N, when, f.Text)
	case pipeline.FactLogContradicted:
		return "the driver log's " + logFactTitle(f) + " is contradicted by the access check (" + accessLine(v.Access) +
			"): access may have been restored since; restart the query"
	case pipeline.FactContradiction:
		if f.Contradiction == nil {
			return string(f.Kind)
		}
		return contradictionLine(*f.Contradiction)
	case pipeline.FactNotSet:
		s := fmt.Sprintf("deployed config: %s documented %q, not set (%s)", f.What, f.Value, f.Source)
		reason := f.Text // stored by an earlier version
		if f.Drift != nil {
			reason = DriftReason(*f.Drift)
		}
		if reason != "" {
			s += ": " + reason
		}
		return s
	case pipeline.FactUnreadTopics:
		pronoun := "them"
		if len(f.Items) == 1 {
			pronoun = "it"
		}
		return fmt.Sprintf("%s: %d records on the brokers; the checkpoint (%s) has no offsets for %s", strings.Join(f.Items, ", "), f.N, f.File, pronoun)
	case pipeline.FactUnknownPartitions:
		return fmt.Sprintf("%d records on %d partition(s) of the topics it reads that %s does not know", f.N, f.M, f.File)
	case pipeline.FactNewPartitions:
		return fmt.Sprintf("%s records on %s of the topics the query reads are not in its newest offsets",
			human.Digits(f.N), human.Count(int(f.M), "partition"))
	case pipeline.FactPartitionsAbove0:
		restart := onRestart(f, "'Added partition … starts from … instead of 0'; ", "reads them from their earliest offset")
		verb := "start"
		if f.M == 1 {
			verb = "starts"
		}
		return fmt.Sprintf("%s of them %s above offset 0: their first records are gone; %s", human.Count(int(f.M), "partition"), verb, restart)
	case pipeline.FactCheckError:
		return word(checkErrorWords, f.Check) + ": " + findingText(f)
	}
	return string(f.Kind) + ": " + f.Text
}

// onRestart says what Spark does on restart with the records a fact counts: fails on them
// (why: Spark's message, and failOnDataLoss as deployed or by default), or, with failOnDataLoss
// false, what it does instead.
func onRestart(f pipeline.Fact, why, instead string) string {
	setting := "failOnDataLoss is true, Spark's default"
	if f.Value != "" {
		setting = fmt.Sprintf("failOnDataLoss=%s, %s", f.Value, f.Source)
		if f.Restart != pipeline.RestartFail {
			return "on restart Spark " + instead + " (" + setting + ")"
		}
	}
	return "on restart Spark fails on them (" + why + setting + ")"
}

// logFactTitle is a log fact's signature title: by its ID, or the title an earlier version
// stored.
func logFactTitle(f pipeline.Fact) string {
	if f.What == "" {
		return f.Title
	}
	return signatureTitle(f.What)
}

// fileEvidence is a checkpoint finding's summary, led by its file when the summary does not
// name it.
func fileEvidence(f pipeline.Fact) string {
	text := findingText(f)
	if f.File != "" && !strings.Contains(text, f.File) {
		return f.File + ": " + text
	}
	return text
}

// findingText is a fact's checkpoint line worded, or its Text when it has none (an error, or
// an earlier version's words).
func findingText(f pipeline.Fact) string {
	if f.Line != nil {
		return sparkLine(*f.Line)
	}
	return f.Text
}

// contradictionLine is a contradiction as evidence: the field, both values and where each was
// seen.
func contradictionLine(c pipeline.Contradiction) string {
	verb := "observed"
	switch c.Source {
	case pipeline.SourceConfig:
		verb = "deployed"
	case pipeline.SourceCheckpoint:
		verb = "read"
	}
	observed, at, reason := c.Observed, c.ObservedAt, c.Reason
	switch c.Kind {
	case pipeline.ContraDeployed:
		if observed == "" {
			observed = "not set"
		}
		if c.Drift != nil { // else Reason, stored by an earlier version
			reason = DriftReason(*c.Drift)
		}
	case pipeline.ContraNoCheckpoint:
		observed, at = "no checkpoint (no metadata, offsets/ or commits/)", "checkpoint "+c.ObservedAt
	case pipeline.ContraCheckpointTopics:
		at = "checkpoint " + c.ObservedAt
		var parts []string
		if len(c.NotRead) > 0 {
			parts = append(parts, "documented but not read by the query: "+strings.Join(c.NotRead, ", "))
		}
		if len(c.NotDocumented) > 0 {
			parts = append(parts, "read by the query but not documented: "+strings.Join(c.NotDocumented, ", "))
		}
		reason = strings.Join(parts, "; ")
	case pipeline.ContraNoSuchTopic:
		observed, at = "no such topic", "brokers of cluster "+c.ObservedAt
		reason = "the documented topic does not exist on the documented cluster"
	}
	s := fmt.Sprintf("%s: %s documented %q (%s), %s %q (%s)", sourceWord(c.Source), word(fieldWords, c.Field), c.Documented, c.DocumentedAt, verb, observed, at)
	if reason != "" {
		s += ": " + reason
	}
	return s
}
