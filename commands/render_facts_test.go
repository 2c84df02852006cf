package commands

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestFactLine: each finding of a diagnosis as the reply words it, from its kind and fields.
func TestFactLine(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	v := pipeline.Verdict{Pipeline: "sms-replies", Access: &pipeline.Access{User: "uid 185 groups [185] (job_user)", Writable: true}}
	cases := []struct {
		f    pipeline.Fact
		want string
	}{
		{pipeline.Fact{Kind: pipeline.FactText, Text: "p3: lag never fell over 6 samples"}, "p3: lag never fell over 6 samples"},
		{pipeline.Fact{Kind: pipeline.FactGroupIdle, Lag: &kafka.LagReport{Cluster: "main", Topics: []string{"t"}, Group: kafka.GroupInfo{Name: "g", State: "Empty"},
			Mismatch: &kafka.Mismatch{Documented: "g", Reason: kafka.IdleEmpty, Watched: true, Unchanged: 10 * time.Minute,
				Active: []kafka.TopicGroup{{Group: kafka.GroupInfo{Name: "h"}, Topic: "t", Members: 2, LagKnown: true, Lag: 40}}}}},
			"documented group g is empty (Empty, no member on t, commits unchanged over 10m) while h consumes t: 2 members, lag 40"},
		{pipeline.Fact{Kind: pipeline.FactGroupIdle, Lag: &kafka.LagReport{Cluster: "main", Topics: []string{"t"}, Group: kafka.GroupInfo{Name: "g"},
			Mismatch: &kafka.Mismatch{Documented: "g", Reason: kafka.IdleMissing}}},
			"documented group g is missing: no group g on cluster main: no members, no commits on t"},
		{pipeline.Fact{Kind: pipeline.FactGroupStopped, Group: "g", Status: "STALLED", Text: "no commit for 20m"}, "group g STALLED: no commit for 20m"},
		{pipeline.Fact{Kind: pipeline.FactGroupStopped, Group: "g", Status: "STALLED", LagSummary: &kafka.Summary{Status: kafka.StatusStalled, Judged: 3, Same: 1,
			Worst: kafka.PartitionVerdict{Partition: 2, Committed: 90, LogEnd: 500, Lag: 410, Evidence: kafka.Evidence{Rule: kafka.RuleStalled, For: 5 * time.Minute, Grew: 10}}}},
			"group g STALLED: 1 of 3 partitions STALLED; worst p2: lag 410 for 5m, committed unchanged at 90, log end 500 (+10 in that time), held by a live member"},
		{pipeline.Fact{Kind: pipeline.FactLagWarning, LagSummary: &kafka.Summary{Status: kafka.StatusWarning, Judged: 1, Same: 1,
			Worst: kafka.PartitionVerdict{Partition: 5, Lag: 550, Committed: 320, Evidence: kafka.Evidence{Rule: kafka.RuleWarning, Samples: 6, FromLag: 100, For: 150 * time.Second, From: 100}}}},
			"all 1 partition WARNING; worst p5: lag never fell over 6 samples, from 100 to 550 over 2m30s, while committed advanced 100 → 320"},
		{pipeline.Fact{Kind: pipeline.FactUnavailable, What: "log end offsets", N: 3, Text: "broker down"}, "log end offsets unavailable for 3 partition(s): broker down"},
		{pipeline.Fact{Kind: pipeline.FactSamplesUnread, What: "stored samples", Text: "read samples of x: EOF"}, "stored samples: read samples of x: EOF"},
		// The parts by their codes (the two rows above are an earlier version's stored words).
		{pipeline.Fact{Kind: pipeline.FactUnavailable, What: string(kafka.PartLogEnds), N: 3, Text: "broker down"}, "log end offsets unavailable for 3 partition(s): broker down"},
		{pipeline.Fact{Kind: pipeline.FactUnavailable, What: string(kafka.PartTopicGroups), Value: "sms", Text: "broker down"}, "groups on sms unavailable for 0 partition(s): broker down"},
		{pipeline.Fact{Kind: pipeline.FactSamplesUnread, What: string(kafka.PartStoredSamples), Text: "read samples of x: EOF"}, "stored samples: read samples of x: EOF"},
		{pipeline.Fact{Kind: pipeline.FactStalePending, Text: "no commit for 40m (stale after 10m).", N: 1234}, "no commit for 40m (stale after 10m) while 1,234 records wait on the brokers"},
		{pipeline.Fact{Kind: pipeline.FactRecordsWaiting, N: 96, Wait: 30 * time.Minute, StaleAfter: 10 * time.Minute, At: at, Batch: 3},
			"96 records have waited 30m on the brokers with no checkpoint commit (stale after 10m); last commit 2026-11-30 10:41:05Z (batch 3)"},
		{pipeline.Fact{Kind: pipeline.FactRecordsWaiting, N: 96, Wait: 30 * time.Minute, StaleAfter: 10 * time.Minute},
			"96 records have waited 30m on the brokers with no checkpoint commit (stale after 10m)"},
		{pipeline.Fact{Kind: pipeline.FactIdleCheckpoint, Text: "no commit for 2h"}, "checkpoint: no commit for 2h; no records wait on the brokers (an idle topic needs no commits)"},
		{pipeline.Fact{Kind: pipeline.FactFinding, Text: "empty file", File: "offsets/4"}, "offsets/4: empty file"},
		{pipeline.Fact{Kind: pipeline.FactFinding, Text: "offsets/4 is corrupt (empty)", File: "offsets/4"}, "offsets/4 is corrupt (empty)"},
		{pipeline.Fact{Kind: pipeline.FactCheckpointRisk, Text: "2 leftover files", File: "offsets"}, "checkpoint: offsets: 2 leftover files"},
		{pipeline.Fact{Kind: pipeline.FactPartitionGone, Text: "t/3 is gone", File: "offsets/3", Items: []string{"t/3: not on the brokers", "t/4"}},
			"checkpoint: offsets/3: t/3 is gone (t/3: not on the brokers, t/4)"},
		{pipeline.Fact{Kind: pipeline.FactOffsetsGone, N: 60, M: 3, File: "offsets/3", Restart: pipeline.RestartFail},
			"60 records on 3 partitions of offsets/3 are no longer on the brokers: retention deleted them before the query read them; on restart Spark fails on them (failOnDataLoss is true, Spark's default)"},
		{pipeline.Fact{Kind: pipeline.FactOffsetsGone, N: 1, M: 1, File: "offsets/3", Restart: pipeline.RestartFail, Value: "true", Source: "job.conf:16"},
			"1 records on 1 partition of offsets/3 are no longer on the brokers: retention deleted them before the query read them; on restart Spark fails on them (failOnDataLoss=true, job.conf:16)"},
		{pipeline.Fact{Kind: pipeline.FactOffsetsGone, N: 60, M: 3, File: "offsets/3", Restart: pipeline.RestartSkip, Value: "false", Source: "job.conf:16"},
			"60 records on 3 partitions of offsets/3 are no longer on the brokers: retention deleted them before the query read them; on restart Spark skips them (failOnDataLoss=false, job.conf:16)"},
		{pipeline.Fact{Kind: pipeline.FactProbe, At: at, Text: "permission denied writing /cp/x"}, "probe 2026-11-30 10:41:05Z: permission denied writing /cp/x"},
		{pipeline.Fact{Kind: pipeline.FactProbeCorrupt, Text: "offsets/4 is empty"}, "probe: offsets/4 is empty"},
		{pipeline.Fact{Kind: pipeline.FactOwnProbeRefused, Text: "EACCES"}, "streamwatch's own probe was refused (EACCES), but the job's user may write: streamwatch runs as another user"},
		{pipeline.Fact{Kind: pipeline.FactProbe, At: at, Why: []probe.Finding{{Code: probe.CodePermissionDenied, Step: probe.StepWrite, Path: "/cp/x"}}},
			"probe 2026-11-30 10:41:05Z: permission denied writing /cp/x"},
		{pipeline.Fact{Kind: pipeline.FactProbeCorrupt, Why: []probe.Finding{{Code: probe.CodeCorruptFile, Path: "/cp/offsets/4", Line: 1, Problem: "empty"}}},
			"probe: corrupt /cp/offsets/4: line 1: empty"},
		{pipeline.Fact{Kind: pipeline.FactOwnProbeRefused, Why: []probe.Finding{{Code: probe.CodePermissionDenied, Step: probe.StepWrite, Path: "/cp/x"}}},
			"streamwatch's own probe was refused (permission denied writing /cp/x), but the job's user may write: streamwatch runs as another user"},
		{pipeline.Fact{Kind: pipeline.FactProbeOwner, Owner: &probe.Ownership{Dir: "/cp", Owner: "root", Group: "root", Mode: fs.ModeDir | 0o555, ProcUID: 185, ProcGroups: []int{185}}},
			"dir /cp owner root:root mode dr-xr-xr-x; probe runs as uid 185 groups [185] (the mode bits do not let it write there)"},
		{pipeline.Fact{Kind: pipeline.FactIAMWriteRefused}, "testIamPermissions said streamwatch's identity may write, but a real write was refused: GCS decides beyond the bucket's IAM policy (IAM conditions, VPC Service Controls, retention)"},
		{pipeline.Fact{Kind: pipeline.FactWriteRefused}, "the access check judged the location writable, but a real write was refused: the storage decides beyond mode bits and ACLs (NFS, SELinux, FUSE)"},
		{pipeline.Fact{Kind: pipeline.FactLog, Title: "Permission denied", N: 3, At: at, Text: "java.io.IOException"}, "driver log: Permission denied ×3 (last 2026-11-30 10:41:05Z): java.io.IOException"},
		{pipeline.Fact{Kind: pipeline.FactLog, Title: "Permission denied", N: 1, Text: "java.io.IOException"}, "driver log: Permission denied ×1: java.io.IOException"},
		{pipeline.Fact{Kind: pipeline.FactLogContradicted, Title: "Permission denied"},
			"the driver log's Permission denied is contradicted by the access check (uid 185 groups [185] (job_user) may create files in the checkpoint's folders (judged without writing)): access may have been restored since; restart the query"},
		// The signature by its ID (the rows above are an earlier version's stored titles).
		{pipeline.Fact{Kind: pipeline.FactLog, What: "PERMISSION_DENIED", N: 3, At: at, Text: "java.io.IOException"},
			"driver log: Permission denied on checkpoint storage ×3 (last 2026-11-30 10:41:05Z): java.io.IOException"},
		{pipeline.Fact{Kind: pipeline.FactLog, What: "NEW_SIGNATURE", N: 1, Text: "x"}, "driver log: NEW_SIGNATURE ×1: x"},
		{pipeline.Fact{Kind: pipeline.FactLogContradicted, What: "CHECKPOINT_WRITE_FAILED"},
			"the driver log's Checkpoint write failed is contradicted by the access check (uid 185 groups [185] (job_user) may create files in the checkpoint's folders (judged without writing)): access may have been restored since; restart the query"},
		{pipeline.Fact{Kind: pipeline.FactNotSet, What: "bootstrap", Value: "kafka-0:9092", Source: "job.conf: no kafka.bootstrap.servers"},
			`deployed config: bootstrap documented "kafka-0:9092", not set (job.conf: no kafka.bootstrap.servers)`},
		{pipeline.Fact{Kind: pipeline.FactNotSet, What: "topics", Value: "t", Source: "job.conf", Text: "set in code?"}, `deployed config: topics documented "t", not set (job.conf): set in code?`},
		{pipeline.Fact{Kind: pipeline.FactNotSet, What: "topics", Value: "t", Source: "job.conf: no subscribe, subscribePattern or assign",
			Drift: &deployconf.Difference{Field: deployconf.FieldTopics, Severity: deployconf.SeverityMissing, Why: deployconf.WhyNoTopics}},
			`deployed config: topics documented "t", not set (job.conf: no subscribe, subscribePattern or assign): The file names no topics; Spark refuses to start a Kafka query without one of them, unless the job sets it in code.`},
		{pipeline.Fact{Kind: pipeline.FactUnreadTopics, Items: []string{"a"}, N: 30, File: "offsets/3"}, "a: 30 records on the brokers; the checkpoint (offsets/3) has no offsets for it"},
		{pipeline.Fact{Kind: pipeline.FactUnreadTopics, Items: []string{"a", "b"}, N: 30, File: "offsets/3"}, "a, b: 30 records on the brokers; the checkpoint (offsets/3) has no offsets for them"},
		{pipeline.Fact{Kind: pipeline.FactUnknownPartitions, N: 7, M: 1, File: "offsets/3"}, "7 records on 1 partition(s) of the topics it reads that offsets/3 does not know"},
		{pipeline.Fact{Kind: pipeline.FactNewPartitions, N: 7, M: 1}, "7 records on 1 partition of the topics the query reads are not in its newest offsets"},
		{pipeline.Fact{Kind: pipeline.FactPartitionsAbove0, M: 1, Restart: pipeline.RestartFail},
			"1 partition of them starts above offset 0: their first records are gone; on restart Spark fails on them ('Added partition … starts from … instead of 0'; failOnDataLoss is true, Spark's default)"},
		{pipeline.Fact{Kind: pipeline.FactPartitionsAbove0, M: 2, Restart: pipeline.RestartFail, Value: "true", Source: "job.conf:16"},
			"2 partitions of them start above offset 0: their first records are gone; on restart Spark fails on them ('Added partition … starts from … instead of 0'; failOnDataLoss=true, job.conf:16)"},
		{pipeline.Fact{Kind: pipeline.FactPartitionsAbove0, M: 2, Restart: pipeline.RestartRead, Value: "false", Source: "job.conf:16"},
			"2 partitions of them start above offset 0: their first records are gone; on restart Spark reads them from their earliest offset (failOnDataLoss=false, job.conf:16)"},
		{pipeline.Fact{Kind: pipeline.FactCheckError, Check: pipeline.CheckLag, Text: "timeout"}, "lag: timeout"},
		{pipeline.Fact{Kind: pipeline.FactCheckError, Check: pipeline.CheckCheckpoint, Text: "unreadable"}, "checkpoint: unreadable"},
		{pipeline.Fact{Kind: pipeline.FactCheckError, Check: pipeline.CheckLogs, Text: "no file"}, "driver logs: no file"},
		{pipeline.Fact{Kind: pipeline.FactCheckError, Check: pipeline.CheckDrift, Text: "no file"}, "deployed config: no file"},
		{contradiction(pipeline.Contradiction{Kind: pipeline.ContraDeployed, Source: pipeline.SourceConfig, Field: pipeline.FieldBrokers, Documented: "kafka-0:9092",
			DocumentedAt: "kafka.clusters (pipelines[p].kafka.cluster)", Observed: "kafka-dr-0:9092", ObservedAt: "job.conf:14: spark.kafka.bootstrap.servers=kafka-dr-0:9092", Reason: "No broker in common"}),
			`deployed config: bootstrap servers documented "kafka-0:9092" (kafka.clusters (pipelines[p].kafka.cluster)), deployed "kafka-dr-0:9092" (job.conf:14: spark.kafka.bootstrap.servers=kafka-dr-0:9092): No broker in common`},
		{contradiction(pipeline.Contradiction{Kind: pipeline.ContraDeployed, Source: pipeline.SourceConfig, Field: pipeline.FieldBrokers, Documented: "kafka-0:9092",
			DocumentedAt: "kafka.clusters (pipelines[p].kafka.cluster)", Observed: "kafka-dr-0:9092", ObservedAt: "job.conf:14: spark.kafka.bootstrap.servers=kafka-dr-0:9092",
			Drift: &deployconf.Difference{Field: deployconf.FieldBootstrap, Severity: deployconf.SeverityMismatch, Why: deployconf.WhyOtherCluster}}),
			`deployed config: bootstrap servers documented "kafka-0:9092" (kafka.clusters (pipelines[p].kafka.cluster)), deployed "kafka-dr-0:9092" (job.conf:14: spark.kafka.bootstrap.servers=kafka-dr-0:9092): No broker in common: the job may read another cluster than the one streamwatch watches.`},
		{contradiction(pipeline.Contradiction{Kind: pipeline.ContraDeployed, Source: pipeline.SourceConfig, Field: pipeline.FieldGroup, Documented: "g",
			DocumentedAt: "pipelines[p].kafka.group", ObservedAt: "job.conf: no kafka.group.id"}),
			`deployed config: group documented "g" (pipelines[p].kafka.group), deployed "not set" (job.conf: no kafka.group.id)`},
		{contradiction(pipeline.Contradiction{Kind: pipeline.ContraNoCheckpoint, Source: pipeline.SourceCheckpoint, Field: pipeline.FieldCheckpoint, Documented: "/cp",
			DocumentedAt: "pipelines[p].checkpoint.location", ObservedAt: "/cp"}),
			`checkpoint files: checkpoint location documented "/cp" (pipelines[p].checkpoint.location), read "no checkpoint (no metadata, offsets/ or commits/)" (checkpoint /cp)`},
		{contradiction(pipeline.Contradiction{Kind: pipeline.ContraCheckpointTopics, Source: pipeline.SourceCheckpoint, Field: pipeline.FieldTopics, Documented: "a, b",
			DocumentedAt: "pipelines[p].kafka.topics", Observed: "b, c", ObservedAt: "offsets/3", NotRead: []string{"a"}, NotDocumented: []string{"c"}}),
			`checkpoint files: topics documented "a, b" (pipelines[p].kafka.topics), read "b, c" (checkpoint offsets/3): documented but not read by the query: a; read by the query but not documented: c`},
		{contradiction(pipeline.Contradiction{Kind: pipeline.ContraNoSuchTopic, Source: pipeline.SourceBrokers, Field: pipeline.FieldTopics, Documented: "a",
			DocumentedAt: "pipelines[p].kafka.topics", ObservedAt: "main"}),
			`brokers: topics documented "a" (pipelines[p].kafka.topics), observed "no such topic" (brokers of cluster main): the documented topic does not exist on the documented cluster`},
	}
	for _, c := range cases {
		if got := factLine(v, c.f); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.f.Kind, got, c.want)
		}
	}
}

func contradiction(c pipeline.Contradiction) pipeline.Fact {
	return pipeline.Fact{Kind: pipeline.FactContradiction, Contradiction: &c}
}

// TestVerdictLines: whose access was judged in each of its forms, risks with what they are a
// risk of, history with its date, the newest progress of a group, the unfinished checks.
func TestVerdictLines(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	cases := []struct {
		v    pipeline.Verdict
		want []string
	}{
		{pipeline.Verdict{Pipeline: "p", Access: &pipeline.Access{Err: "stat /cp: permission denied"}}, []string{"access: not judged: stat /cp: permission denied"}},
		{pipeline.Verdict{Pipeline: "p", Access: &pipeline.Access{User: "uid 185 groups [185] (job_user)", Writable: true}},
			[]string{"access: uid 185 groups [185] (job_user) may create files in the checkpoint's folders (judged without writing)"}},
		{pipeline.Verdict{Pipeline: "p", Access: &pipeline.Access{Identity: true, Reason: "streamwatch's identity may create objects in gs://b", Note: "job_user was not judged"}},
			[]string{"access: streamwatch's identity may create objects in gs://b (judged without writing; job_user was not judged)"}},
		{pipeline.Verdict{Pipeline: "p", Access: &pipeline.Access{Identity: true, Report: func() *access.Report { r := access.GCS("gs://b/cp", "gs://b", nil, true); return &r }()}},
			[]string{"access: streamwatch's identity lacks storage.objects.create and storage.objects.delete in gs://b (testIamPermissions), so it may not create or delete objects there (judged without writing; testIamPermissions answers for the identity streamwatch calls GCS with, not for the job's; job_user was not judged)"}},
		{pipeline.Verdict{Pipeline: "p", Access: &pipeline.Access{Report: &access.Report{Location: "s3://b/cp", Code: access.NotJudgedObjectStore}}},
			[]string{"access: not judged: access to s3://b/cp cannot be judged without writing: the write probe and the driver logs tell"}},
		{pipeline.Verdict{Pipeline: "p", Risks: []pipeline.Fact{{Kind: pipeline.FactAccess, Risk: pipeline.CauseNotWritable, Access: &access.Report{Location: "/cp",
			User: access.User{UID: 185, GIDs: []int{185}}, Code: access.ReportNotWritable,
			Dirs: []access.DirJudgment{{Dir: access.Dir{Path: "/cp", Owner: "root", Group: "root", Mode: fs.ModeDir | 0o555}, Denied: &access.Denial{Code: access.DeniedOtherBits, Want: 3, Perm: 5, Have: 5, Group: "root"}}}}}}},
			[]string{"- checkpoint not writable (no live symptom yet: the next batch will fail to commit): uid 185 groups [185] may not create files in /cp (owner root:root, mode dr-xr-xr-x (0555), no ACL): it is neither the owner nor in the group root, and the other bits r-x lack write"}},
		{pipeline.Verdict{Pipeline: "p", Progress: at, ProgressGroup: "g"}, []string{"newest progress: commits of group g at 2026-11-30 10:41:05Z"}},
		{pipeline.Verdict{Pipeline: "p", Risks: []pipeline.Fact{{Kind: pipeline.FactText, Text: "uid 185 may not create files", Risk: pipeline.CauseNotWritable},
			{Kind: pipeline.FactNewPartitions, N: 7, M: 1, Risk: pipeline.CausePartitionsUnknown}}},
			[]string{"- checkpoint not writable (no live symptom yet: the next batch will fail to commit): uid 185 may not create files",
				"- partitions not in the checkpoint (no live symptom of them): 7 records on 1 partition of the topics"}},
		{pipeline.Verdict{Pipeline: "p", History: []pipeline.Fact{{Kind: pipeline.FactProbe, At: at, Text: "denied"}, {Kind: pipeline.FactLog, Title: "T", N: 1, Text: "x"}}},
			[]string{"- probe 2026-11-30 10:41:05Z: denied (2026-11-30 10:41:05Z, before the newest progress)",
				"- driver log: T ×1: x (undated: cannot be placed after the newest progress)"}},
		{pipeline.Verdict{Pipeline: "p", Unfinished: []string{pipeline.CheckProbe, pipeline.CheckLogs, pipeline.CheckDrift, pipeline.CheckCheckpoint}},
			[]string{"did not finish in time: read-only probe, driver logs, config drift, checkpoint"}},
	}
	for _, c := range cases {
		text := strings.Join(verdictLines(c.v), "\n")
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("lacks %q:\n%s", w, text)
			}
		}
	}
}

// TestEveryCodeHasWords: every cause has a title and a next step; every symptom a title; every
// source, check and documented field a name. (A risk of a cause without words of its own is
// named by its ID.)
func TestEveryCodeHasWords(t *testing.T) {
	for _, id := range pipeline.Causes {
		if w := causeWords[id]; w.title == "" || w.next == "" {
			t.Errorf("cause %s lacks a title or next step: %+v", id, w)
		}
	}
	for _, id := range []string{pipeline.SymptomProgressStopped, pipeline.SymptomDocumentedGroupIdle, pipeline.SymptomLagGrowing, pipeline.SymptomProbeFailing,
		pipeline.SymptomLogErrors, pipeline.SymptomBrokersUnreachable, pipeline.SymptomRecordsUnread} {
		if symptomTitles[id] == "" {
			t.Errorf("symptom %s has no title", id)
		}
	}
	for _, s := range []pipeline.Source{pipeline.SourceAccess, pipeline.SourceProbe, pipeline.SourceLogs, pipeline.SourceCheckpoint, pipeline.SourceKafka,
		pipeline.SourceConfig, pipeline.SourceBrokers, pipeline.SourceSymptom} {
		if sourceWords[s] == "" {
			t.Errorf("source %s has no name", s)
		}
	}
	for _, c := range []string{pipeline.CheckLag, pipeline.CheckCheckpoint, pipeline.CheckProbe, pipeline.CheckLogs, pipeline.CheckDrift} {
		if unfinishedWords[c] == "" || checkErrorWords[c] == "" {
			t.Errorf("check %s has no name", c)
		}
	}
	for _, f := range []string{pipeline.FieldGroup, pipeline.FieldTopics, pipeline.FieldBrokers, pipeline.FieldCheckpoint} {
		if fieldWords[f] == "" {
			t.Errorf("field %s has no name", f)
		}
	}
	if got := signalsLine([]pipeline.Source{pipeline.SourceSymptom, pipeline.SourceProbe, pipeline.SourceKafka, pipeline.SourceAccess}); got != "Kafka groups, access check, write probe, the symptom" {
		t.Errorf("signals %q", got)
	}
}

// TestVerdictJSONRendersTheSame: a verdict stored as JSON and read back renders as the verdict
// itself.
func TestVerdictJSONRendersTheSame(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	c := pipeline.Contradiction{Kind: pipeline.ContraCheckpointTopics, Source: pipeline.SourceCheckpoint, Field: pipeline.FieldTopics, Documented: "a",
		DocumentedAt: "pipelines[p].kafka.topics", Observed: "b", ObservedAt: "offsets/3", NotRead: []string{"a"}, NotDocumented: []string{"b"},
		Cause: pipeline.CauseTopicMismatch}
	v := pipeline.Verdict{Pipeline: "sms-replies", Description: "inbound SMS",
		Symptoms: []pipeline.Symptom{{ID: pipeline.SymptomProgressStopped, Evidence: []pipeline.Fact{
			{Kind: pipeline.FactRecordsWaiting, N: 96, Wait: 30 * time.Minute, StaleAfter: 10 * time.Minute, At: at.Add(-time.Hour), Batch: 3}}},
			{ID: pipeline.SymptomLogErrors, Evidence: []pipeline.Fact{{Kind: pipeline.FactLog, Title: "Permission denied", N: 3, At: at, Text: "EACCES"}}},
			{ID: pipeline.SymptomDocumentedGroupIdle, Evidence: []pipeline.Fact{{Kind: pipeline.FactGroupIdle, Lag: &kafka.LagReport{Cluster: "main",
				Topics: []string{"t"}, Group: kafka.GroupInfo{Name: "g", State: "Empty"}, Mismatch: &kafka.Mismatch{Documented: "g", Reason: kafka.IdleEmpty,
					Active: []kafka.TopicGroup{{Group: kafka.GroupInfo{Name: "h"}, Topic: "t", Members: 1}}}}}}}},
		Causes: []pipeline.Cause{{ID: pipeline.CauseTopicMismatch, Confidence: pipeline.Likely, Signals: []pipeline.Source{pipeline.SourceCheckpoint, pipeline.SourceSymptom},
			Explains: []string{pipeline.SymptomProgressStopped}, Evidence: []pipeline.Fact{{Kind: pipeline.FactContradiction, Contradiction: &c}},
			Contradictions: []pipeline.Contradiction{c}}},
		Unexplained: []string{pipeline.SymptomLogErrors},
		Risks:       []pipeline.Fact{{Kind: pipeline.FactOffsetsGone, N: 60, M: 3, File: "offsets/3", Restart: pipeline.RestartSkip, Value: "false", Source: "job.conf:16", Risk: pipeline.CauseOffsetsGone}},
		History:     []pipeline.Fact{{Kind: pipeline.FactProbe, At: at.Add(-2 * time.Hour), Text: "denied"}},
		Progress:    at.Add(-time.Hour), ProgressBatch: 3,
		Access:     &pipeline.Access{User: "uid 185 groups [185] (job_user)", Writable: true},
		Notes:      []pipeline.Fact{{Kind: pipeline.FactLogContradicted, Title: "Permission denied"}, {Kind: pipeline.FactCheckError, Check: pipeline.CheckLogs, Text: "x"}},
		Unfinished: []string{pipeline.CheckDrift},
		Checked: []pipeline.Check{{Cause: pipeline.CauseNotWritable, Status: pipeline.CheckRuledOut, Reason: pipeline.ReasonWriteProbeOK, At: at},
			{Cause: pipeline.CauseClusterMismatch, Status: pipeline.CheckNotChecked, Reason: pipeline.ReasonNoDeployedBootstrap}},
		Next: pipeline.NextReadLogs, Restart: pipeline.RestartSkip}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back pipeline.Verdict
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want, got := VerdictReply(v), VerdictReply(back)
	if want.Text != got.Text || strings.Join(want.Sections[0].Text(), "\n") != strings.Join(got.Sections[0].Text(), "\n") {
		t.Errorf("stored and read back, the verdict renders otherwise:\n%s\n%s\n---\n%s\n%s", want.Text, strings.Join(want.Sections[0].Text(), "\n"),
			got.Text, strings.Join(got.Sections[0].Text(), "\n"))
	}
	for _, w := range []string{"note: the driver log's Permission denied is contradicted by the access check (uid 185", "read \"b\" (checkpoint offsets/3)",
		"- CHECKPOINT_NOT_WRITABLE ruled out: the write probe of 2026-11-30 10:41:05Z wrote and deleted a file"} {
		if !strings.Contains(strings.Join(got.Sections[0].Text(), "\n"), w) {
			t.Errorf("the verdict read back lacks %q", w)
		}
	}
}

// TestDriftFactsOfAnEarlierVersion: the deployed config's facts as an earlier version stored
// them, with its words for their reasons (Contradiction.Reason, FactNotSet's Text), render as
// the facts of this version, which carry the difference instead.
func TestDriftFactsOfAnEarlierVersion(t *testing.T) {
	stored := `[{"Kind":"contradiction","At":"0001-01-01T00:00:00Z","Contradiction":{"Kind":"deployed","Field":"group","Documented":"sms-replies-prod",` +
		`"DocumentedAt":"pipelines[p].kafka.group","Observed":"sms-replies-v2","ObservedAt":"job.conf:12: spark.kafka.group.id=sms-replies-v2","Source":"config",` +
		`"Reason":"The job consumes as sms-replies-v2; streamwatch watches sms-replies-prod, so the lag it reports is not the job's.","Cause":"CONSUMER_GROUP_MISMATCH","Risk":false}},` +
		`{"Kind":"not_set","Text":"The file names no topics; Spark refuses to start a Kafka query without one of them, unless the job sets it in code.",` +
		`"What":"topics","Value":"t","Source":"job.conf: no subscribe, subscribePattern or assign","At":"0001-01-01T00:00:00Z"}]`
	var old []pipeline.Fact
	if err := json.Unmarshal([]byte(stored), &old); err != nil {
		t.Fatal(err)
	}
	group := deployconf.Difference{Field: deployconf.FieldGroup, Documented: "sms-replies-prod", Deployed: "sms-replies-v2",
		Evidence: "job.conf:12: spark.kafka.group.id=sms-replies-v2", Severity: deployconf.SeverityMismatch, Why: deployconf.WhyOtherGroup}
	topics := deployconf.Difference{Field: deployconf.FieldTopics, Documented: "t", Evidence: "job.conf: no subscribe, subscribePattern or assign",
		Severity: deployconf.SeverityMissing, Why: deployconf.WhyNoTopics}
	current := []pipeline.Fact{
		{Kind: pipeline.FactContradiction, Contradiction: &pipeline.Contradiction{Kind: pipeline.ContraDeployed, Field: pipeline.FieldGroup, Documented: "sms-replies-prod",
			DocumentedAt: "pipelines[p].kafka.group", Observed: "sms-replies-v2", ObservedAt: group.Evidence, Source: pipeline.SourceConfig, Drift: &group,
			Cause: pipeline.CauseGroupMismatch}},
		{Kind: pipeline.FactNotSet, What: "topics", Value: "t", Source: topics.Evidence, Drift: &topics},
	}
	for i := range current {
		b, err := json.Marshal(current[i])
		if err != nil {
			t.Fatal(err)
		}
		var back pipeline.Fact
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		want := factLine(pipeline.Verdict{}, current[i])
		reason := old[i].Text
		if old[i].Contradiction != nil {
			reason = old[i].Contradiction.Reason
		}
		if !strings.HasSuffix(want, ": "+reason) {
			t.Errorf("%q lacks the reason", want)
		}
		if got := factLine(pipeline.Verdict{}, old[i]); got != want {
			t.Errorf("an earlier version's fact renders\n\t%q\nthis version's\n\t%q", got, want)
		}
		if got := factLine(pipeline.Verdict{}, back); got != want {
			t.Errorf("stored and read back, the fact renders\n\t%q\nnot\n\t%q", got, want)
		}
	}
}

// TestEarlierVersionFactsRender: facts an earlier version stored in words (a log signature's
// title, a Kafka part's name) read as they did once decoded by this version, beside the same
// facts as this version stores them, by code.
func TestEarlierVersionFactsRender(t *testing.T) {
	for _, tt := range []struct{ stored, want string }{
		{`{"Kind":"log","Title":"Permission denied on checkpoint storage","N":3,"At":"0001-01-01T00:00:00Z","Text":"EACCES"}`,
			"driver log: Permission denied on checkpoint storage ×3: EACCES"},
		{`{"Kind":"log","What":"PERMISSION_DENIED","N":3,"At":"0001-01-01T00:00:00Z","Text":"EACCES"}`,
			"driver log: Permission denied on checkpoint storage ×3: EACCES"},
		{`{"Kind":"unavailable","What":"groups coordinated by broker 1 (k:9092)","At":"0001-01-01T00:00:00Z","Text":"EOF"}`,
			"groups coordinated by broker 1 (k:9092) unavailable for 0 partition(s): EOF"},
		{`{"Kind":"unavailable","What":"coordinated","Value":"broker 1 (k:9092)","At":"0001-01-01T00:00:00Z","Text":"EOF"}`,
			"groups coordinated by broker 1 (k:9092) unavailable for 0 partition(s): EOF"},
	} {
		var f pipeline.Fact
		if err := json.Unmarshal([]byte(tt.stored), &f); err != nil {
			t.Fatal(err)
		}
		if got := factLine(pipeline.Verdict{}, f); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.stored, got, tt.want)
		}
	}
}
