package commands

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// TestVerdictReply: a verdict in one line and in full: causes ranked with their confidence and
// signals, evidence and the next step with the pipeline's name, whose access was judged, the
// newest progress, risks, history, what did not finish.
func TestVerdictReply(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	v := pipeline.Verdict{Pipeline: "sms-replies", Description: "inbound SMS replies, Kafka to Spark",
		Symptoms: []pipeline.Symptom{{ID: pipeline.SymptomProgressStopped, Evidence: []pipeline.Fact{{Kind: pipeline.FactStalePending, Text: "no commit for 40m", N: 96}}}},
		Causes: []pipeline.Cause{{ID: pipeline.CauseNotWritable, Confidence: pipeline.Confirmed,
			Signals: []pipeline.Source{pipeline.SourceSymptom, pipeline.SourceLogs, pipeline.SourceAccess}, Explains: []string{pipeline.SymptomProgressStopped},
			Evidence: []pipeline.Fact{{Kind: pipeline.FactText, Text: "uid 185 may not create files in /cp"}}}},
		Access: &pipeline.Access{User: "uid 185 groups [185] (job_user)"}, Progress: at, ProgressBatch: 3,
		Risks:      []pipeline.Fact{{Kind: pipeline.FactCheckpointRisk, Text: "2 leftover files"}},
		History:    []pipeline.Fact{{Kind: pipeline.FactLog, Title: "Permission denied", N: 2, At: at.Add(-time.Hour), Text: "java.io.IOException"}},
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
		"Symptoms (live):\n- progress stopped [PROGRESS_STOPPED]\n   no commit for 40m while 96 records wait on the brokers\n",
		"1. The checkpoint location is not writable: the query cannot commit progress [CHECKPOINT_NOT_WRITABLE] — confirmed (access check, driver log, the symptom)",
		"   explains: progress stopped\n   - uid 185 may not create files in /cp\n",
		"   next: Restore write access for the job's user on the checkpoint location (storage policy, ACL, mount options), then restart the query and watch for the next commit: `watch sms-replies`.",
		"access: uid 185 groups [185] (job_user) may NOT create files there (judged without writing)\n",
		"newest progress: checkpoint commit of batch 3 at 2026-11-30 10:41:05Z",
		"Risks (no present symptom comes from them):\n- checkpoint: 2 leftover files",
		"History (older than the newest progress; not a cause):\n- driver log: Permission denied ×2 (last 2026-11-30 09:41:05Z): java.io.IOException (2026-11-30 09:41:05Z, before the newest progress)",
		"did not finish in time: lag and status",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the verdict lacks %q:\n%s", want, text)
		}
	}
	for v, want := range map[*pipeline.Verdict]string{
		{Pipeline: "p", Healthy: true}: "p: healthy",
		{Pipeline: "p", Healthy: true, Risks: []pipeline.Fact{{Kind: pipeline.FactText, Text: "x"}}}: "p: healthy, 1 risk",
		{Pipeline: "p", Symptoms: []pipeline.Symptom{{ID: pipeline.SymptomProgressStopped}}, Next: pipeline.NextReadLogs,
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
		Symptoms:    []pipeline.Symptom{{ID: pipeline.SymptomProgressStopped}},
		Unexplained: []string{pipeline.SymptomProgressStopped},
		Checked: []pipeline.Check{
			{Cause: pipeline.CauseNotWritable, Status: pipeline.CheckRuledOut, Reason: pipeline.ReasonAccessJudged, Detail: "uid 185 may create files in /cp"},
			{Cause: pipeline.CauseClusterMismatch, Status: pipeline.CheckNotChecked, Reason: pipeline.ReasonNoDeployedBootstrap},
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

// TestCheckEvidence: each reason a diagnosis gives for a cause it ruled out or could not
// check, as the reply's "checked" lines word it.
func TestCheckEvidence(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 4, 5, 0, time.UTC)
	cases := []struct {
		c    pipeline.Check
		want string
	}{
		{pipeline.Check{Reason: pipeline.ReasonFound}, "see above"},
		{pipeline.Check{Reason: pipeline.ReasonOnlyRisk}, "only a risk: no present symptom needs it (see risks)"},
		{pipeline.Check{Reason: pipeline.ReasonAccessJudged, Detail: "uid 185 may create files in /cp"}, "uid 185 may create files in /cp (judged without writing)"},
		{pipeline.Check{Reason: pipeline.ReasonWriteProbeOK, At: at}, "the write probe of " + human.Stamp(at) + " wrote and deleted a file"},
		{pipeline.Check{Reason: pipeline.ReasonAccessNotJudged, Detail: "stat /cp: permission denied"}, "access not judged: stat /cp: permission denied; no write probe has run"},
		{pipeline.Check{Reason: pipeline.ReasonAccessJudged, Access: &access.Report{Location: "/cp", User: access.User{UID: 185, GIDs: []int{185}}, Code: access.ReportWritable, Writable: true,
			Dirs: []access.DirJudgment{{Dir: access.Dir{Path: "/cp"}, Writable: true}}}}, "uid 185 groups [185] may create files in /cp (judged without writing)"},
		{pipeline.Check{Reason: pipeline.ReasonAccessJudged, Access: func() *access.Report { r := access.GCS("gs://b/cp", "gs://b", access.GCSWrite, false); return &r }()},
			"streamwatch's identity may create and delete objects in gs://b (testIamPermissions) (judged without writing; testIamPermissions answers for the identity streamwatch calls GCS with, not for the job's)"},
		{pipeline.Check{Reason: pipeline.ReasonAccessNotJudged, Access: &access.Report{Location: "s3://b/cp", Code: access.NotJudgedObjectStore}},
			"access not judged: access to s3://b/cp cannot be judged without writing: the write probe and the driver logs tell; no write probe has run"},
		{pipeline.Check{Reason: pipeline.ReasonNoAccessCheck}, "no checkpoint access check ran"},
		{pipeline.Check{Reason: pipeline.ReasonCheckpointUnread}, "the checkpoint was not read"},
		{pipeline.Check{Reason: pipeline.ReasonFilesParse, Items: []string{"offsets/42", "commits/41"}}, "the newest checkpoint files parse (offsets/42, commits/41)"},
		{pipeline.Check{Reason: pipeline.ReasonGroupsUnread}, "the consumer groups were not read"},
		{pipeline.Check{Reason: pipeline.ReasonNoOtherGroup}, "no other group consumes the documented topics"},
		{pipeline.Check{Reason: pipeline.ReasonNoOtherGroup, Source: "job.conf:12"}, "no other group consumes the documented topics; the deployed group is the documented one (job.conf:12)"},
		{pipeline.Check{Reason: pipeline.ReasonCheckpointTopics, Detail: "offsets/42", Items: []string{"a", "b"}}, "the checkpoint (offsets/42) reads the documented topics: a, b"},
		{pipeline.Check{Reason: pipeline.ReasonDeployedTopics, Source: "job.conf:3"}, "the deployed config subscribes to the documented topics (job.conf:3)"},
		{pipeline.Check{Reason: pipeline.ReasonTopicsUnknown}, "neither the checkpoint nor a deployed config names the topics read"},
		{pipeline.Check{Reason: pipeline.ReasonBootstrapShared, Source: "job.conf:4"}, "the deployed bootstrap servers share a broker with the documented cluster (job.conf:4)"},
		{pipeline.Check{Reason: pipeline.ReasonNoDeployedBootstrap}, "no deployed config names the bootstrap servers (pipelines[].deployed_config)"},
		{pipeline.Check{Reason: pipeline.ReasonDeployedLocation, Source: "job.conf:5"}, "the deployed checkpoint location is the documented one (job.conf:5)"},
		{pipeline.Check{Reason: pipeline.ReasonNoDeployedLocation}, "no deployed config names the checkpoint location (pipelines[].deployed_config)"},
		{pipeline.Check{Reason: pipeline.ReasonOffsetsHeld}, "every offset the checkpoint resumes from is still on the brokers"},
		{pipeline.Check{Reason: pipeline.ReasonEarliestUnread}, "the brokers' earliest offsets were not read"},
		{pipeline.Check{Reason: pipeline.ReasonPartitionsKnown}, "the checkpoint knows every partition of the topics it reads"},
		{pipeline.Check{Reason: pipeline.ReasonPartitionsUnread}, "the brokers' partitions were not read"},
		{pipeline.Check{Reason: pipeline.ReasonBrokersAnswered, N: 6}, "the brokers answered for 6 partitions"},
		{pipeline.Check{Reason: pipeline.ReasonBrokersUnasked}, "the brokers were not asked"},
		{pipeline.Check{Reason: pipeline.ReasonLagNotGrowing, Detail: "OK"}, "the documented group's lag is not growing (OK)"},
		{pipeline.Check{Reason: pipeline.ReasonGroupUnread}, "the consumer group was not read"},
	}
	for _, c := range cases {
		if got := checkEvidence(c.c); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.c.Reason, got, c.want)
		}
	}
}

// TestDiagnosisAsData: a verdict stored as data (pipeline.Verdicts) reads in the thread as the
// verdict itself, and in the timeline as its one line; text that is no verdict is not read as
// one.
func TestDiagnosisAsData(t *testing.T) {
	v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", LagErr: fmt.Errorf("metadata: %w", kafka.ErrUnreachable)})
	detail, _ := json.Marshal(pipeline.PostedVerdict{Verdict: v})
	head, _ := json.Marshal(v.Headline())
	want := VerdictReply(v)
	r, ok := DiagnosisReply(string(detail))
	if !ok || r.Text != "Automatic diagnosis — sms-replies: probable cause BROKER_UNREACHABLE (likely)" ||
		!reflect.DeepEqual(r.Sections, want.Sections) {
		t.Fatalf("the thread reads %+v (%v), want the verdict %+v", r, ok, want)
	}
	for _, detail := range []string{string(head), string(detail)} {
		if got := EventDetail(state.Event{Name: state.EventDiagnosis, Detail: detail}); got != r.Text {
			t.Errorf("the timeline reads %q, want %q", got, r.Text)
		}
	}
	if _, ok := DiagnosisReply(`{"text":"a reply"}`); ok {
		t.Error("a reply was read as a verdict")
	}
}
