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
	v := pipeline.Verdict{Pipeline: "sms-replies",
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
			RuledOut: []pipeline.Ruled{{Checked: true}, {Checked: true}, {}}}: "p: progress stopped; no probable cause found (2 ruled out); next: `logs p`",
		{Pipeline: "p", Healthy: true, RiskFindings: []pipeline.Finding{{}}, Risks: []string{"x"}}: "p: healthy, 2 risks",
	} {
		if got := verdictSummary(*v); got != want {
			t.Errorf("summary %q, want %q", got, want)
		}
	}
}

// TestVerdictFindingsReply: what the pipeline returns as data reads as sentences: a stop with
// how long records waited, a documented topic nobody reads, each contradiction with the field,
// both values and where each was seen, offsets findings with their counts and what Spark does
// on restart, and a stop without a cause with what was ruled out and the one next step.
func TestVerdictFindingsReply(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	documented := pipeline.Fact{Value: "client.replies.sms", Seen: pipeline.SeenConfig, Where: "streamwatch.yaml:14 (pipelines[0].kafka.topics)"}
	deflt := pipeline.Fact{Value: "true", Seen: pipeline.SeenDefault}
	cases := []struct {
		name string
		v    pipeline.Verdict
		want []string
	}{
		{"a topic contradicted by the deployment and the checkpoint", pipeline.Verdict{Pipeline: "sms-replies",
			Symptoms: []pipeline.Symptom{{ID: pipeline.SymptomTopicUnread, Unread: []pipeline.TopicUnread{{Topic: "client.replies.sms", Records: 120, Partitions: 3,
				File: "offsets/12", Reads: "client.replies.sms.v2"}}}},
			Causes: []pipeline.Cause{{ID: pipeline.CauseTopicMismatch, Confidence: pipeline.Confirmed, Signals: []string{"checkpoint files", "deployed config", "the symptom"},
				Explains: []string{pipeline.SymptomTopicUnread}, Findings: []pipeline.Finding{
					{Cause: pipeline.CauseTopicMismatch, Contradiction: &pipeline.Contradiction{Field: pipeline.FieldTopics, Documented: documented,
						Observed: pipeline.Fact{Value: "client.replies.sms.v2", Seen: pipeline.SeenDeployed, Where: "sms-replies.conf:4: subscribe=client.replies.sms.v2"}}},
					{Cause: pipeline.CauseTopicMismatch, Contradiction: &pipeline.Contradiction{Field: pipeline.FieldTopics, Documented: documented,
						Observed: pipeline.Fact{Value: "client.replies.sms.v2", Seen: pipeline.SeenCheckpoint, Where: "offsets/12 line 3"}}}}}}},
			[]string{
				"- records of a documented topic wait and the checkpoint reads none of its partitions [DOCUMENTED_TOPIC_UNREAD]",
				"   client.replies.sms: 120 records on 3 partitions wait on the brokers; offsets/12 reads none of its partitions (it reads client.replies.sms.v2)",
				"1. The job reads other topics than the documented ones [TOPIC_MISMATCH] — confirmed (checkpoint files, deployed config, the symptom)",
				`   - kafka.topics: documented "client.replies.sms" (streamwatch.yaml:14 (pipelines[0].kafka.topics)); deployed config "client.replies.sms.v2" (sms-replies.conf:4: subscribe=client.replies.sms.v2)`,
				`   - kafka.topics: documented "client.replies.sms" (streamwatch.yaml:14 (pipelines[0].kafka.topics)); checkpoint "client.replies.sms.v2" (offsets/12 line 3)`,
				"   next: Make the job subscribe to the documented topics",
			}},
		{"offsets deleted: Spark fails by default", pipeline.Verdict{Pipeline: "sms-replies",
			Symptoms: []pipeline.Symptom{{ID: pipeline.SymptomProgressStopped, Title: "progress stopped",
				Stopped: &pipeline.StoppedCheckpoint{Waiting: 50, Waited: 30 * time.Minute, FromRecords: true, Commit: "commits/3", CommittedAt: at.Add(-40 * time.Minute), Deleted: 20}}},
			Causes: []pipeline.Cause{{ID: pipeline.CauseOffsetsGone, Confidence: pipeline.Confirmed, Explains: []string{pipeline.SymptomProgressStopped},
				Findings: []pipeline.Finding{{Cause: pipeline.CauseOffsetsGone, Offsets: &pipeline.OffsetsFinding{Code: pipeline.OffsetsDeleted,
					Partitions: []string{"client.replies.sms/0"}, PartitionCount: 1, Records: 20, File: "offsets/3", Brokers: "cluster main (127.0.0.1:9092)", FailOnDataLoss: deflt}}}}}},
			[]string{
				"   50 records have waited 30m with no checkpoint commit; last commit commits/3 written 2026-11-30 10:01:05Z; 20 records beyond it were deleted by the brokers before the query read them (not counted as waiting)",
				"   - offsets/3: 1 partition starts below the log start on cluster main (127.0.0.1:9092): 20 records were deleted before the query read them (client.replies.sms/0)",
				"     on restart (failOnDataLoss true, Spark's default): Spark fails the query ('Some data may have been lost",
				"   next: Back up the checkpoint (`checkpoint backup sms-replies`)",
			}},
		{"a partition the checkpoint does not know, skipped: a risk", pipeline.Verdict{Pipeline: "sms-replies", Healthy: true,
			RiskFindings: []pipeline.Finding{{Cause: pipeline.CausePartitionsUnknown, Offsets: &pipeline.OffsetsFinding{Code: pipeline.PartitionsUnknown,
				Partitions: []string{"client.replies.sms/2"}, PartitionCount: 1, Records: 35, File: "offsets/3", Brokers: "cluster main (127.0.0.1:9092)",
				FailOnDataLoss: pipeline.Fact{Value: "false", Seen: pipeline.SeenDeployed, Where: "sms-replies.conf:7"}}}}},
			[]string{
				"Risks (no present symptom comes from them):",
				"- partitions not in the checkpoint: offsets/3 does not know 1 partition of its topics on cluster main (127.0.0.1:9092): 35 records wait there (client.replies.sms/2)",
				"  on restart (failOnDataLoss false, sms-replies.conf:7): Spark reads them from their earliest offset at its next batch",
			}},
		{"a stop without a cause", pipeline.Verdict{Pipeline: "sms-replies",
			Symptoms:    []pipeline.Symptom{{ID: pipeline.SymptomProgressStopped, Title: "progress stopped"}},
			Unexplained: []string{pipeline.SymptomProgressStopped}, Next: pipeline.NextReadDriverLog,
			RuledOut: []pipeline.Ruled{
				{Cause: pipeline.CauseNotWritable, Checked: true, Seen: pipeline.RuledAccessWritable, Facts: []string{"uid 185 may create files"}},
				{Cause: pipeline.CauseGroupMismatch, Seen: pipeline.RuledNoDeployed},
				{Cause: pipeline.CauseOffsetsGone, Checked: true, Seen: pipeline.RuledOffsetsOnBrokers, Facts: []string{"offsets/3", "3", "cluster main (127.0.0.1:9092)"}},
			}},
			[]string{
				"No probable cause found for: progress stopped.",
				"Checked and ruled out:\n- CHECKPOINT_NOT_WRITABLE: the access check: uid 185 may create files\n" +
					"- CHECKPOINT_OFFSETS_GONE: every offset of offsets/3 lies between the earliest and the latest offset on cluster main (127.0.0.1:9092) (3 partitions)",
				"Not checked:\n- CONSUMER_GROUP_MISMATCH: pipelines[].deployed_config is not set",
				"Next step: read the driver's log (streamwatch reads none: set pipelines[].logs.paths)",
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Join(verdictLines(c.v), "\n")
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("the verdict lacks\n%s\nin\n%s", w, text)
				}
			}
			if c.name == "a stop without a cause" && strings.Contains(text, "healthy") {
				t.Errorf("a stop without a cause reads like healthy:\n%s", text)
			}
		})
	}
}
