package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/pipeline"
)

// TestVerdictReply: a verdict in one line and in full: causes ranked with their confidence and
// signals, evidence and the next step with the pipeline's name, whose access was judged, the
// newest progress, risks, history, what did not finish.
func TestVerdictReply(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	v := pipeline.Verdict{Pipeline: "sms-replies", Description: "inbound SMS replies, Kafka to Spark",
		Symptoms: []pipeline.Symptom{{ID: pipeline.SymptomProgressStopped, Title: "progress stopped", Evidence: []string{"no commit for 40m while 96 records wait on the brokers"}}},
		Causes: []pipeline.Cause{{ID: pipeline.CauseNotWritable, Title: "The checkpoint location is not writable", Confidence: pipeline.Confirmed,
			Signals: []string{"access check", "the symptom"}, Explains: []string{pipeline.SymptomProgressStopped},
			Evidence: []string{"uid 185 may not create files in /cp"}, Next: "Restore write access, then `watch PIPELINE`."}},
		Access: "uid 185 groups [185] (job_user) may NOT create files there (judged without writing)", Progress: at, ProgressWhat: "checkpoint commit of batch 3",
		Risks: []string{"checkpoint: 2 leftover files"}, History: []string{"driver log: Permission denied (2026-11-30 09:00:00Z, before the newest progress)"},
		Unfinished: []string{pipeline.CheckLag}}
	r := VerdictReply(v)
	if r.Text != "sms-replies: probable cause CHECKPOINT_NOT_WRITABLE (confirmed)" {
		t.Errorf("summary %q", r.Text)
	}
	text := strings.Join(r.Sections[0].Text(), "\n")
	if !strings.HasPrefix(text, "sms-replies: inbound SMS replies, Kafka to Spark\n") {
		t.Errorf("the verdict does not describe its pipeline first:\n%s", text)
	}
	for _, want := range []string{
		"Symptoms (live):\n- progress stopped [PROGRESS_STOPPED]\n   no commit for 40m",
		"1. The checkpoint location is not writable [CHECKPOINT_NOT_WRITABLE] — confirmed (access check, the symptom)",
		"   explains: progress stopped",
		"   next: Restore write access, then `watch sms-replies`.",
		"access: uid 185 groups [185] (job_user) may NOT create files there",
		"newest progress: checkpoint commit of batch 3 at 2026-11-30 10:41:05Z",
		"Risks (no present symptom comes from them):\n- checkpoint: 2 leftover files",
		"History (older than the newest progress; not a cause):",
		"did not finish in time: lag and status",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the verdict lacks %q:\n%s", want, text)
		}
	}
	for v, want := range map[*pipeline.Verdict]string{
		{Pipeline: "p", Healthy: true}:                       "p: healthy",
		{Pipeline: "p", Healthy: true, Risks: []string{"x"}}: "p: healthy, 1 risk",
		{Pipeline: "p", Symptoms: []pipeline.Symptom{{Title: "progress stopped"}}, Next: pipeline.NextReadLogs,
			Checked: []pipeline.Check{{Status: pipeline.CheckRuledOut}, {Status: pipeline.CheckNotChecked}}}: "p: progress stopped; no probable cause found (1 causes ruled out); next: read the driver log",
	} {
		if got := verdictSummary(*v); got != want {
			t.Errorf("summary %q, want %q", got, want)
		}
	}
}

// TestNoCauseIsAnAnswer: a live symptom without a cause lists every cause checked, ruled out
// or not checked with its one line of evidence, and the one next step; it never reads as
// healthy.
func TestNoCauseIsAnAnswer(t *testing.T) {
	v := pipeline.Verdict{Pipeline: "sms-replies",
		Symptoms:    []pipeline.Symptom{{ID: pipeline.SymptomProgressStopped, Title: "progress stopped"}},
		Unexplained: []string{pipeline.SymptomProgressStopped},
		Checked: []pipeline.Check{
			{Cause: pipeline.CauseNotWritable, Status: pipeline.CheckRuledOut, Evidence: "uid 185 may create files in /cp (judged without writing)"},
			{Cause: pipeline.CauseClusterMismatch, Status: pipeline.CheckNotChecked, Evidence: "no deployed config names the bootstrap servers"},
		},
		Next: pipeline.NextCheckJob}
	r := VerdictReply(v)
	text := strings.Join(r.Sections[0].Text(), "\n")
	for _, want := range []string{
		"No probable cause found for progress stopped. This is not healthy: the symptom is live.",
		"- CHECKPOINT_NOT_WRITABLE ruled out: uid 185 may create files in /cp",
		"- CLUSTER_MISMATCH not checked: no deployed config names the bootstrap servers",
		"Next step: look at the job itself",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the reply lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(r.Text, "healthy") || strings.Contains(text, "is healthy") {
		t.Errorf("a live symptom reads as healthy: %q\n%s", r.Text, text)
	}
}
