package commands

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// verdictLines lay a verdict out: the live symptoms with their evidence, the probable causes
// ranked with their confidence, signals, evidence and next step, what nothing explains, whose
// access was judged, the newest progress, risks, history and notes.
func verdictLines(v pipeline.Verdict) []string {
	var out []string
	if v.Description != "" {
		out = append(out, v.Pipeline+": "+v.Description)
	}
	switch {
	case v.Healthy:
		out = append(out, v.Pipeline+" is healthy: no live symptom.")
	case len(v.Symptoms) == 0:
		out = append(out, "No live symptom among the checks that finished.")
	}
	if len(v.Symptoms) > 0 {
		out = append(out, "Symptoms (live):")
		for _, s := range v.Symptoms {
			out = append(out, fmt.Sprintf("- %s [%s]", symptomTitle(s.ID), s.ID))
			for _, e := range s.Evidence {
				out = append(out, "   "+factLine(v, e))
			}
		}
	}
	for i, c := range v.Causes {
		if i == 0 {
			out = append(out, "Probable causes:")
		}
		out = append(out, fmt.Sprintf("%d. %s [%s] — %s (%s)", i+1, causeTitle(c.ID), c.ID, c.Confidence, signalsLine(c.Signals)))
		var explains []string
		for _, id := range c.Explains {
			explains = append(explains, symptomTitle(id))
		}
		out = append(out, "   explains: "+strings.Join(explains, "; "))
		for _, e := range c.Evidence {
			out = append(out, "   - "+factLine(v, e))
		}
		out = append(out, "   next: "+causeNext(c.ID, v.Pipeline))
	}
	if len(v.Unexplained) > 0 {
		var titles []string
		for _, id := range v.Unexplained {
			titles = append(titles, symptomTitle(id))
		}
		out = append(out, fmt.Sprintf("No probable cause found for %s. This is not healthy: the symptom is live. What was checked:", strings.Join(titles, "; ")))
		for _, c := range v.Checked {
			if c.Status == pipeline.CheckFound {
				continue
			}
			out = append(out, fmt.Sprintf("- %s %s: %s", c.Cause, checkStatusWords[c.Status], checkEvidence(c)))
		}
		out = append(out, "Next step: "+nextStep(v.Next, v.Pipeline))
	}
	if v.Access != nil {
		out = append(out, "access: "+accessLine(v.Access))
	}
	if !v.Progress.IsZero() {
		out = append(out, fmt.Sprintf("newest progress: %s at %s", newestProgress(v), human.Stamp(v.Progress)))
	}
	if len(v.Risks) > 0 {
		out = append(out, "Risks (no present symptom comes from them):")
		for _, r := range v.Risks {
			out = append(out, "- "+riskLine(v, r))
		}
	}
	if len(v.History) > 0 {
		out = append(out, "History (older than the newest progress; not a cause):")
		for _, h := range v.History {
			out = append(out, "- "+historyLine(v, h))
		}
	}
	for _, n := range v.Notes {
		out = append(out, "note: "+factLine(v, n))
	}
	if len(v.Unfinished) > 0 {
		var checks []string
		for _, c := range v.Unfinished {
			checks = append(checks, word(unfinishedWords, c))
		}
		out = append(out, "did not finish in time: "+strings.Join(checks, ", "))
	}
	return out
}

// verdictSummary is the verdict in one line.
func verdictSummary(v pipeline.Verdict) string { return headlineText(v.Headline()) }

// symptomTitles name the symptoms by ID, for the lines that only have the IDs (a verdict's
// headline in a timeline).
var symptomTitles = map[string]string{
	pipeline.SymptomProgressStopped:     "progress stopped",
	pipeline.SymptomDocumentedGroupIdle: "the documented consumer group makes no progress while another group consumes the topic",
	pipeline.SymptomLagGrowing:          "lag grows while commits advance",
	pipeline.SymptomProbeFailing:        "the checkpoint-access probe fails",
	pipeline.SymptomLogErrors:           "the driver log reports checkpoint trouble",
	pipeline.SymptomBrokersUnreachable:  "the Kafka brokers do not answer",
	pipeline.SymptomRecordsUnread:       "records wait on documented topics the query does not read",
}

func symptomNames(ids []string) string {
	titles := make([]string, len(ids))
	for i, id := range ids {
		titles[i] = cmp.Or(symptomTitles[id], id)
	}
	return strings.Join(titles, "; ")
}

// headlineText is a verdict's headline in one line.
func headlineText(h pipeline.Headline) string {
	if h.Healthy {
		if h.Risks > 0 {
			return fmt.Sprintf("%s: healthy, %d risk%s", h.Pipeline, h.Risks, human.Plural(h.Risks))
		}
		return h.Pipeline + ": healthy"
	}
	if len(h.Causes) == 0 {
		if len(h.Symptoms) == 0 {
			return h.Pipeline + ": no live symptom among the checks that finished"
		}
		return fmt.Sprintf("%s: %s; no probable cause found (%d causes ruled out); next: %s", h.Pipeline, symptomNames(h.Symptoms), h.RuledOut,
			nextStepShort[h.Next])
	}
	var ids []string
	for _, c := range h.Causes {
		ids = append(ids, fmt.Sprintf("%s (%s)", c.ID, c.Confidence))
	}
	s := h.Pipeline + ": probable cause " + strings.Join(ids, ", ")
	if len(h.Unexplained) > 0 {
		s += "; no cause found for " + symptomNames(h.Unexplained)
	}
	return s
}

// nextStepShort names each next step in a few words, for the one-line summary.
var nextStepShort = map[pipeline.NextStep]string{
	pipeline.NextWaitForChecks: "diagnose again",
	pipeline.NextConfigureLogs: "read the driver log",
	pipeline.NextWriteProbe:    "probe with a write test",
	pipeline.NextReadLogs:      "read the driver log",
	pipeline.NextCheckJob:      "look at the job itself",
	"":                         "look at the job itself",
}

// nextStep is the one step to take about a symptom nothing explains.
func nextStep(n pipeline.NextStep, p string) string {
	switch n {
	case pipeline.NextWaitForChecks:
		return "run `diagnose " + p + "` again: some checks did not finish in time, and the missing one may hold the cause"
	case pipeline.NextConfigureLogs:
		return "read the driver log around the stop: the query's own error is the evidence streamwatch lacks (set pipelines[].logs.paths so that it reads it next time)"
	case pipeline.NextWriteProbe:
		return "run `probe " + p + "` with a write test: write access could not be judged without writing"
	case pipeline.NextReadLogs:
		return "read the driver log around the stop (`logs " + p + "`): it shows lines streamwatch does not recognise as a cause"
	}
	return "look at the job itself (Spark UI: a batch stuck in a sink or waiting for executors), then restart the query and `watch " + p + "`"
}

// checkEvidence is the one line of evidence a diagnosis ruled a cause out with, or why it could
// not check it.
func checkEvidence(c pipeline.Check) string {
	switch c.Reason {
	case pipeline.ReasonFound:
		return "see above"
	case pipeline.ReasonOnlyRisk:
		return "only a risk: no present symptom needs it (see risks)"
	case pipeline.ReasonAccessJudged:
		detail, note := c.Detail, c.Note
		if c.Access != nil {
			detail, note = AccessReason(c.Access), AccessNote(c.Access)
		}
		if note != "" {
			return detail + " (judged without writing; " + note + ")"
		}
		return detail + " (judged without writing)"
	case pipeline.ReasonWriteProbeOK:
		return "the write probe of " + human.Stamp(c.At) + " wrote and deleted a file"
	case pipeline.ReasonAccessNotJudged:
		detail := c.Detail
		if c.Access != nil {
			detail = AccessNotJudged(c.Access)
		}
		return "access not judged: " + detail + "; no write probe has run"
	case pipeline.ReasonNoAccessCheck:
		return "no checkpoint access check ran"
	case pipeline.ReasonCheckpointUnread:
		return "the checkpoint was not read"
	case pipeline.ReasonFilesParse:
		return "the newest checkpoint files parse (" + strings.Join(c.Items, ", ") + ")"
	case pipeline.ReasonGroupsUnread:
		return "the consumer groups were not read"
	case pipeline.ReasonNoOtherGroup:
		if c.Source != "" {
			return "no other group consumes the documented topics; the deployed group is the documented one (" + c.Source + ")"
		}
		return "no other group consumes the documented topics"
	case pipeline.ReasonCheckpointTopics:
		return "the checkpoint (" + c.Detail + ") reads the documented topics: " + strings.Join(c.Items, ", ")
	case pipeline.ReasonDeployedTopics:
		return "the deployed config subscribes to the documented topics (" + c.Source + ")"
	case pipeline.ReasonTopicsUnknown:
		return "neither the checkpoint nor a deployed config names the topics read"
	case pipeline.ReasonBootstrapShared:
		return "the deployed bootstrap servers share a broker with the documented cluster (" + c.Source + ")"
	case pipeline.ReasonNoDeployedBootstrap:
		return "no deployed config names the bootstrap servers (pipelines[].deployed_config)"
	case pipeline.ReasonDeployedLocation:
		return "the deployed checkpoint location is the documented one (" + c.Source + ")"
	case pipeline.ReasonNoDeployedLocation:
		return "no deployed config names the checkpoint location (pipelines[].deployed_config)"
	case pipeline.ReasonOffsetsHeld:
		return "every offset the checkpoint resumes from is still on the brokers"
	case pipeline.ReasonEarliestUnread:
		return "the brokers' earliest offsets were not read"
	case pipeline.ReasonPartitionsKnown:
		return "the checkpoint knows every partition of the topics it reads"
	case pipeline.ReasonPartitionsUnread:
		return "the brokers' partitions were not read"
	case pipeline.ReasonBrokersAnswered:
		return fmt.Sprintf("the brokers answered for %d partitions", c.N)
	case pipeline.ReasonBrokersUnasked:
		return "the brokers were not asked"
	case pipeline.ReasonLagNotGrowing:
		return "the documented group's lag is not growing (" + c.Detail + ")"
	case pipeline.ReasonGroupUnread:
		return "the consumer group was not read"
	}
	return string(c.Reason)
}

// VerdictReply renders a triage verdict.
func VerdictReply(v pipeline.Verdict) Reply {
	return Reply{Text: verdictSummary(v), Sections: []Section{{Lines: verdictLines(v), Pre: true}}}
}

// DiagnosisReply words a verdict posted into an incident's thread (an EventDiagnosis's Detail,
// as pipeline.Verdicts stores it) when the bot delivers it; ok is false for a detail that is
// no verdict.
func DiagnosisReply(detail string) (r Reply, ok bool) {
	p, ok := pipeline.DecodeVerdict(detail)
	if !ok {
		return Reply{}, false
	}
	r = VerdictReply(p.Verdict)
	r.Text = "Automatic diagnosis — " + r.Text
	return r, true
}

// diagnosedAgain answers `incident diagnose`: the verdict went into the incident's thread.
func diagnosedAgain(pipeline, id string) string {
	return fmt.Sprintf("Diagnosed %s again; the verdict is in %s's thread.", pipeline, id)
}

// noPipelineToDiagnose refuses `incident diagnose` of an incident without a pipeline.
func noPipelineToDiagnose(id string) error {
	return fmt.Errorf("%s belongs to no pipeline: there is nothing to diagnose", id)
}

// errNoDiagnosis answers `incident diagnose` when nothing posts verdicts.
var errNoDiagnosis = errors.New("no diagnosis is set up")
