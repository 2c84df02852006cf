package commands

import (
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// verdictLines lay a verdict out: the live symptoms with their evidence, the probable causes
// ranked with their confidence, signals, evidence and next step, what nothing explains with
// what was checked and ruled out and the one next step, whose access was judged, the newest
// progress, risks, history and notes.
func verdictLines(v pipeline.Verdict) []string {
	var out []string
	switch {
	case v.Healthy:
		out = append(out, v.Pipeline+" is healthy: no live symptom.")
	case len(v.Symptoms) == 0:
		out = append(out, "No live symptom among the checks that finished.")
	}
	if len(v.Symptoms) > 0 {
		out = append(out, "Symptoms (live):")
		for _, s := range v.Symptoms {
			out = append(out, fmt.Sprintf("- %s [%s]", symptomTitle(v.Symptoms, s.ID), s.ID))
			if s.Stopped != nil {
				out = append(out, "   "+stoppedLine(*s.Stopped))
			}
			for _, u := range s.Unread {
				out = append(out, "   "+unreadLine(u))
			}
			for _, e := range s.Evidence {
				out = append(out, "   "+e)
			}
		}
	}
	for i, c := range v.Causes {
		if i == 0 {
			out = append(out, "Probable causes:")
		}
		out = append(out, fmt.Sprintf("%d. %s [%s] — %s (%s)", i+1, causeTitle(c), c.ID, c.Confidence, strings.Join(c.Signals, ", ")))
		var explains []string
		for _, id := range c.Explains {
			explains = append(explains, symptomTitle(v.Symptoms, id))
		}
		out = append(out, "   explains: "+strings.Join(explains, "; "))
		for _, e := range c.Evidence {
			out = append(out, "   - "+e)
		}
		for _, f := range c.Findings {
			for k, l := range findingLines(f) {
				out = append(out, map[bool]string{true: "   - ", false: "     "}[k == 0]+l)
			}
		}
		out = append(out, "   next: "+strings.ReplaceAll(causeNext(c), "PIPELINE", v.Pipeline))
	}
	out = append(out, unexplainedLines(v)...)
	if v.Access != "" {
		out = append(out, "access: "+v.Access)
	}
	if !v.Progress.IsZero() {
		out = append(out, fmt.Sprintf("newest progress: %s at %s", v.ProgressWhat, stamp(v.Progress)))
	}
	if len(v.Risks)+len(v.RiskFindings) > 0 {
		out = append(out, "Risks (no present symptom comes from them):")
		for _, r := range v.Risks {
			out = append(out, "- "+r)
		}
		for _, f := range v.RiskFindings {
			for k, l := range findingLines(f) {
				if k == 0 {
					l = "- " + riskTitle(f.Cause) + ": " + l
				} else {
					l = "  " + l
				}
				out = append(out, l)
			}
		}
	}
	if len(v.History) > 0 {
		out = append(out, "History (older than the newest progress; not a cause):")
		for _, h := range v.History {
			out = append(out, "- "+h)
		}
	}
	for _, n := range v.Notes {
		out = append(out, "note: "+n)
	}
	if len(v.Unfinished) > 0 {
		out = append(out, "did not finish in time: "+strings.Join(v.Unfinished, ", "))
	}
	return out
}

// symptomTitles are the titles of the symptoms the pipeline names by ID only.
var symptomTitles = map[string]string{
	pipeline.SymptomTopicUnread: "records of a documented topic wait and the checkpoint reads none of its partitions",
}

func symptomTitle(ss []pipeline.Symptom, id string) string {
	for _, s := range ss {
		if s.ID == id && s.Title != "" {
			return s.Title
		}
	}
	if t, ok := symptomTitles[id]; ok {
		return t
	}
	return id
}

// causeTexts are the title, the next step and the risk's name of the causes the pipeline
// names by ID only.
var causeTexts = map[string]struct{ title, next, risk string }{
	pipeline.CauseTopicMismatch: {"The job reads other topics than the documented ones",
		"Make the job subscribe to the documented topics (its subscribe option), or correct pipelines[].kafka.topics; the documented topic's records wait until then.",
		"topics"},
	pipeline.CauseClusterMismatch: {"The job reads another Kafka cluster than the documented one",
		"Point the job's kafka.bootstrap.servers at the documented cluster, or correct the pipeline's kafka.cluster.",
		"cluster"},
	pipeline.CauseLocationMismatch: {"The job checkpoints elsewhere than the documented location",
		"Correct pipelines[].checkpoint.location, or the job's checkpointLocation: streamwatch reads and probes a checkpoint the job does not write.",
		"checkpoint location"},
	pipeline.CauseOffsetsGone: {"The offsets the checkpoint reads next are no longer on the brokers",
		"Back up the checkpoint (`checkpoint backup PIPELINE`), then decide: replay the lost records from their source, or restart the query with failOnDataLoss=false to skip them; watch for the next commit (`watch PIPELINE`).",
		"offsets no longer on the brokers"},
	pipeline.CausePartitionsUnknown: {"Partitions of the checkpoint's topics are not in its offsets",
		"Restart the query so that it plans the partitions; one whose log starts above offset 0 lost its first records, and with failOnDataLoss=true Spark refuses it: set failOnDataLoss=false to read it from its earliest offset.",
		"partitions not in the checkpoint"},
}

func causeTitle(c pipeline.Cause) string {
	if c.Title != "" {
		return c.Title
	}
	return causeTexts[c.ID].title
}

func causeNext(c pipeline.Cause) string {
	if c.Next != "" {
		return c.Next
	}
	return causeTexts[c.ID].next
}

// riskTitle names a risk found as data.
func riskTitle(cause string) string {
	if t, ok := causeTexts[cause]; ok {
		return t.risk
	}
	if cause == pipeline.CauseGroupMismatch {
		return "consumer group"
	}
	return cause
}

// stoppedLine is a checkpoint stop's evidence: how long the waiting records waited with no
// commit, from what.
func stoppedLine(s pipeline.StoppedCheckpoint) string {
	line := fmt.Sprintf("%s have waited %s with no checkpoint commit", recordsWord(s.Waiting), human.Age(s.Waited))
	if !s.FromRecords {
		line += " (at most: counted from the last commit, the waiting records' timestamps could not be read)"
	}
	if s.Commit != "" {
		line += fmt.Sprintf("; last commit %s written %s", s.Commit, stamp(s.CommittedAt))
	}
	if s.Deleted > 0 {
		line += fmt.Sprintf("; %s beyond it were deleted by the brokers before the query read them (not counted as waiting)", recordsWord(s.Deleted))
	}
	return line
}

func unreadLine(u pipeline.TopicUnread) string {
	return fmt.Sprintf("%s: %s on %s wait on the brokers; %s reads none of its partitions (it reads %s)",
		u.Topic, recordsWord(u.Records), human.Count(u.Partitions, "partition"), u.File, u.Reads)
}

func recordsWord(n int64) string {
	if n == 1 {
		return "1 record"
	}
	return human.Digits(n) + " records"
}

// findingLines lay a finding out: a contradiction on one line (the field, the documented
// value and where it is written, the observed value and where it was seen); an offsets
// finding with its counts, then what Spark does about it on restart.
func findingLines(f pipeline.Finding) []string {
	switch {
	case f.Contradiction != nil:
		return []string{contradictionLine(*f.Contradiction)}
	case f.Offsets != nil:
		return offsetsLines(*f.Offsets)
	}
	return nil
}

func contradictionLine(c pipeline.Contradiction) string {
	doc := fmt.Sprintf("%s: documented %s", c.Field, quoted(c.Documented.Value))
	if c.Documented.Where != "" {
		doc += " (" + c.Documented.Where + ")"
	}
	obs := c.Observed
	var seen string
	switch {
	case obs.Seen == pipeline.SeenBrokers && len(c.Absent) > 0:
		seen = fmt.Sprintf("the brokers of %s hold no topic %s", obs.Where, strings.Join(c.Absent, ", "))
	case obs.Seen == pipeline.SeenCheckpoint && c.Field == pipeline.FieldCheckpoint && obs.Value == "":
		seen = fmt.Sprintf("no checkpoint at %s (no metadata, offsets/ or commits/)", obs.Where)
	case obs.Value == "":
		seen = fmt.Sprintf("%s sets none (%s)", obs.Seen, obs.Where)
	default:
		seen = fmt.Sprintf("%s %s (%s)", obs.Seen, quoted(obs.Value), obs.Where)
	}
	line := doc + "; " + seen
	if c.Reason != "" {
		line += ": " + c.Reason
	}
	return line
}

func quoted(v string) string {
	if v == "" {
		return "nothing"
	}
	return fmt.Sprintf("%q", v)
}

func offsetsLines(f pipeline.OffsetsFinding) []string {
	parts := strings.Join(f.Partitions, ", ")
	if more := f.PartitionCount - len(f.Partitions); more > 0 {
		parts += fmt.Sprintf(" and %d more", more)
	}
	n := human.Count(f.PartitionCount, "partition")
	one := f.PartitionCount == 1
	verb := func(singular, plural string) string {
		if one {
			return singular
		}
		return plural
	}
	var what, fail, skip string
	switch f.Code {
	case pipeline.OffsetsDeleted:
		what = fmt.Sprintf("%s: %s %s below the log start on %s: %s were deleted before the query read them (%s)",
			f.File, n, verb("starts", "start"), f.Brokers, recordsWord(f.Records), parts)
		fail, skip = "Spark fails the query ('Some data may have been lost because they are not available in Kafka any more')", "Spark skips them: those records are lost"
	case pipeline.OffsetsAhead:
		what = fmt.Sprintf("%s: %s %s beyond the log end on %s, by %s in all: the topic was recreated or truncated, or the job reads another cluster (%s)",
			f.File, n, verb("is", "are"), f.Brokers, human.Count(int(f.Records), "offset"), parts)
		fail, skip = "Spark fails the query ('offset was changed from …, some data may have been missed')", "Spark skips to the new log end: the records written since are not read"
	case pipeline.PartitionsGone:
		what = fmt.Sprintf("%s: %s it reads no longer %s on %s (%s)", f.File, n, verb("exists", "exist"), f.Brokers, parts)
		fail, skip = "Spark fails the query ('… are gone. Some data may have been missed')", "Spark drops those partitions"
	case pipeline.PartitionsUnknown:
		what = fmt.Sprintf("%s does not know %s of its topics on %s: %s wait there (%s)", f.File, n, f.Brokers, recordsWord(f.Records), parts)
		if f.StartAbove0 > 0 {
			fail = fmt.Sprintf("Spark reads a partition it discovers from offset 0, and %d of them starts above it: Spark fails the query ('Added partition … starts from … instead of 0')", f.StartAbove0)
		}
		skip = "Spark reads them from their earliest offset at its next batch"
	}
	where := "Spark's default"
	if f.FailOnDataLoss.Where != "" {
		where = f.FailOnDataLoss.Where
	}
	restart := fmt.Sprintf("on restart (failOnDataLoss %s, %s): ", f.FailOnDataLoss.Value, where)
	if f.Fails() {
		restart += fail
	} else {
		restart += skip
	}
	return []string{what, restart}
}

// unexplainedLines say which present symptoms have no cause, what was checked and ruled out
// (or could not be looked at), and the one next step.
func unexplainedLines(v pipeline.Verdict) []string {
	if len(v.Unexplained) == 0 {
		return nil
	}
	var titles []string
	for _, id := range v.Unexplained {
		titles = append(titles, symptomTitle(v.Symptoms, id))
	}
	out := []string{"No probable cause found for: " + strings.Join(titles, "; ") + "."}
	var ruled, unchecked []string
	for _, r := range v.RuledOut {
		l := "- " + r.Cause + ": " + ruledLine(r)
		if r.Checked {
			ruled = append(ruled, l)
		} else {
			unchecked = append(unchecked, l)
		}
	}
	if len(ruled) > 0 {
		out = append(out, "Checked and ruled out:")
		out = append(out, ruled...)
	}
	if len(unchecked) > 0 {
		out = append(out, "Not checked:")
		out = append(out, unchecked...)
	}
	return append(out, "Next step: "+nextStep(v.Next, v.Pipeline))
}

func ruledLine(r pipeline.Ruled) string {
	fact := func(i int) string {
		if i < len(r.Facts) && r.Facts[i] != "" {
			return r.Facts[i]
		}
		return "?"
	}
	switch r.Seen {
	case pipeline.RuledFoundAsRisk:
		return "found, but it explains none of these symptoms (see Risks)"
	case pipeline.RuledAccessWritable:
		return "the access check: " + fact(0)
	case pipeline.RuledProbeOK:
		return "the read-only probe read the checkpoint at " + fact(0)
	case pipeline.RuledFilesParse:
		return "the newest checkpoint files parse (" + fact(0) + ")"
	case pipeline.RuledNoOtherGroup:
		return fmt.Sprintf("Kafka: no other group than %s consumes %s", fact(0), fact(1))
	case pipeline.RuledDeployedAgrees:
		return fmt.Sprintf("the deployed config agrees on %s (%s)", fact(0), fact(1))
	case pipeline.RuledCheckpointReads:
		return fmt.Sprintf("%s reads the documented topics (%s)", fact(1), fact(0))
	case pipeline.RuledTopicsExist:
		return fmt.Sprintf("%s holds %s", fact(1), fact(0))
	case pipeline.RuledLocationHolds:
		return fmt.Sprintf("%s holds the checkpoint (query id %s)", fact(0), fact(1))
	case pipeline.RuledBrokersAnswer:
		return "the brokers of cluster " + fact(0) + " answered"
	case pipeline.RuledOffsetsOnBrokers:
		return fmt.Sprintf("every offset of %s lies between the earliest and the latest offset on %s (%s partitions)", fact(0), fact(2), fact(1))
	case pipeline.RuledPartitionsKnown:
		return fmt.Sprintf("%s knows every partition of its topics (%s)", fact(0), fact(1))
	case pipeline.RuledAccessNotJudged:
		return "access was not judged: " + fact(0)
	case pipeline.RuledNoProbe:
		return "no probe ran"
	case pipeline.RuledCheckpointUnread:
		return "the checkpoint could not be read: " + fact(0)
	case pipeline.RuledNoKafka:
		return "the pipeline has no kafka section: the brokers were not compared"
	case pipeline.RuledLagUnread, pipeline.RuledBrokersUnread:
		return "the brokers could not be read: " + fact(0)
	case pipeline.RuledNoDeployed:
		return "pipelines[].deployed_config is not set: the job's options were not compared"
	case pipeline.RuledDeployedUnread:
		return "the deployed config could not be read: " + fact(0)
	case pipeline.RuledNoKafkaOffsets:
		return "the checkpoint holds no Kafka offsets to compare"
	case pipeline.RuledUnfinished:
		return "the " + fact(0) + " check did not finish in time"
	}
	return r.Seen
}

// nextStep is the one step a person takes when a symptom has no cause.
func nextStep(code, p string) string {
	switch code {
	case pipeline.NextDiagnoseAgain:
		return fmt.Sprintf("diagnose again (`diagnose %s`): checks that did not finish may hold the cause.", p)
	case pipeline.NextReadLogs:
		return fmt.Sprintf("read the driver's last error (`logs %s`), then restart the query once its cause is fixed.", p)
	case pipeline.NextCheckJobOptions:
		return "compare the running job's options (its group and subscribe) with pipelines[].deployed_config: the job may run with other options than that file."
	case pipeline.NextSetDeployedConfig:
		return "set pipelines[].deployed_config to the job's options file, so that streamwatch compares its group and topics with the documented ones."
	case pipeline.NextRunProbe:
		return fmt.Sprintf("run `probe %s` for the probe's failure class and the owner and mode it met.", p)
	}
	return "read the driver's log (streamwatch reads none: set pipelines[].logs.paths), then restart the query once its cause is fixed."
}

// nextShort is nextStep in a few words, for the one-line summary.
func nextShort(code, p string) string {
	switch code {
	case pipeline.NextDiagnoseAgain:
		return "diagnose again"
	case pipeline.NextReadLogs:
		return "`logs " + p + "`"
	case pipeline.NextCheckJobOptions:
		return "compare the job's options"
	case pipeline.NextSetDeployedConfig:
		return "set deployed_config"
	case pipeline.NextRunProbe:
		return "`probe " + p + "`"
	}
	return "read the driver's log"
}

// verdictSummary is the verdict in one line.
func verdictSummary(v pipeline.Verdict) string {
	if v.Healthy {
		if n := len(v.Risks) + len(v.RiskFindings); n > 0 {
			return fmt.Sprintf("%s: healthy, %d risk%s", v.Pipeline, n, map[bool]string{true: "", false: "s"}[n == 1])
		}
		return v.Pipeline + ": healthy"
	}
	if len(v.Causes) == 0 {
		if len(v.Symptoms) == 0 {
			return v.Pipeline + ": no live symptom among the checks that finished"
		}
		var titles []string
		for _, s := range v.Symptoms {
			titles = append(titles, symptomTitle(v.Symptoms, s.ID))
		}
		ruled := 0
		for _, r := range v.RuledOut {
			if r.Checked {
				ruled++
			}
		}
		return fmt.Sprintf("%s: %s; no probable cause found (%d ruled out); next: %s", v.Pipeline, strings.Join(titles, "; "), ruled, nextShort(v.Next, v.Pipeline))
	}
	var ids []string
	for _, c := range v.Causes {
		ids = append(ids, fmt.Sprintf("%s (%s)", c.ID, c.Confidence))
	}
	line := v.Pipeline + ": probable cause " + strings.Join(ids, ", ")
	if len(v.Unexplained) > 0 {
		var titles []string
		for _, id := range v.Unexplained {
			titles = append(titles, symptomTitle(v.Symptoms, id))
		}
		line += "; no probable cause found for " + strings.Join(titles, "; ")
	}
	return line
}
