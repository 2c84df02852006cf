package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/pipeline"
)

var at = time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)

func sig(id string) driverlog.Signature {
	for _, s := range driverlog.Signatures {
		if s.ID == id {
			return s
		}
	}
	panic("no signature " + id)
}

func healthyLag() *kafka.LagReport {
	return &kafka.LagReport{Pipeline: "sms-replies", Status: kafka.StatusOK, Summary: kafka.Summary{Status: kafka.StatusOK, Judged: 1, Same: 1, Worst: kafka.PartitionVerdict{Evidence: kafka.Evidence{Rule: kafka.RuleCaughtUp}}},
		Group: kafka.GroupInfo{Name: "sms-replies-prod"}, Totals: kafka.LagTotals{Partitions: 3}, CommitsMoved: at.Add(-2 * time.Second)}
}

// committing is a checkpoint whose newest commit is a few seconds old.
func committing() *spark.Report {
	return &spark.Report{Committed: &spark.CommittedBatch{ID: 812, ModTime: at.Add(-2 * time.Second)},
		Findings: []spark.Finding{{Code: spark.CodeOK, Summary: spark.Line{Kind: spark.LineConsistent}}}}
}

// stopped is a checkpoint whose newest commit is 40 minutes old while records wait.
func stopped(extra ...spark.Finding) *spark.Report {
	return &spark.Report{Committed: &spark.CommittedBatch{ID: 3, ModTime: at.Add(-40 * time.Minute)}, PendingTotal: 96,
		Findings: append([]spark.Finding{{Code: spark.CodeStale, Severity: spark.SeverityCritical, Summary: spark.Line{Kind: spark.LineNoCommitFor, For: 40 * time.Minute, Limit: 10 * time.Minute}}}, extra...)}
}

var jobUser = access.User{UID: 185, GIDs: []int{185}, Whose: "job_user"}

func probeWith(writable bool) *probe.Result {
	r := &probe.Result{Status: probe.StatusOK, Started: at,
		Access: &access.Report{Location: "/cp", User: jobUser, Writable: writable, Reason: "uid 185 groups [185] (job_user) may create files in /cp"}}
	if !writable {
		r.Access.Reason = "uid 185 groups [185] (job_user) may not create files in /cp (owner root:root, mode dr-xr-xr-x (0555), no ACL): it is neither the owner nor in the group root, and the other bits r-x lack write"
		r.Status, r.Class, r.Reason = probe.StatusFailed, probe.ClassPermissionDenied, r.Access.Reason
	}
	return r
}

// gcsProbe is a probe of gs:// whose access testIamPermissions judged for streamwatch's own
// identity (access.GCS).
func gcsProbe(granted ...string) *probe.Result {
	a := access.GCS("gs://spark/cp", "gs://spark", granted, true)
	r := &probe.Result{Status: probe.StatusOK, Started: at, Access: &a}
	if !a.Writable {
		r.Status, r.Class, r.Reason = probe.StatusFailed, probe.ClassPermissionDenied, a.Reason
	}
	return r
}

func permissionLine(last time.Time) *driverlog.Report {
	return &driverlog.Report{Matches: []driverlog.Match{{Signature: sig("PERMISSION_DENIED"), Count: 3, First: last.Add(-time.Minute), Last: last,
		Example: "java.io.FileNotFoundException: /cp/offsets/.4.3b1d.tmp (Permission denied)"}}}
}

var missingGroup = deployconf.Difference{Field: deployconf.FieldGroup, Documented: "sms-replies-prod", Deployed: "spark-kafka-source-<uuid>-…",
	Evidence: "sms-replies.conf: no kafka.group.id or groupIdPrefix", Severity: deployconf.SeverityMissing}

var otherGroupConsumes = &kafka.Mismatch{Documented: "sms-replies-prod", Reason: kafka.IdleEmpty,
	Active: []kafka.TopicGroup{{Group: kafka.GroupInfo{Name: "sms-replies-v2"}, Topic: "client.replies.sms", Members: 1}}}

type want struct {
	healthy  bool
	causes   []string // "ID confidence", in order
	symptoms []string
	risks    []pipeline.Fact // patterns (hasFact), one per risk
	history  []pipeline.Fact // patterns
	notes    []pipeline.Fact // patterns
}

type judgeCase struct {
	name string
	in   pipeline.Inputs
	want want
}

// verdictInputs are the inputs of every scenario of TestJudge.
func verdictInputs() []pipeline.Inputs {
	var out []pipeline.Inputs
	for _, c := range judgeCases() {
		out = append(out, c.in)
	}
	return out
}

func judgeCases() []judgeCase {
	return []judgeCase{
		{"healthy", pipeline.Inputs{Lag: healthyLag(), Checkpoint: committing(), Probe: probeWith(true), Logs: &driverlog.Report{}},
			want{healthy: true}},
		{"healthy, the missing group id is a risk, not a cause",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: committing(), Probe: probeWith(true), Drift: []deployconf.Difference{missingGroup}},
			want{healthy: true, risks: []pipeline.Fact{{Risk: pipeline.CauseGroupMismatch, Kind: pipeline.FactContradiction, Contradiction: &pipeline.Contradiction{
				Kind: pipeline.ContraDeployed, Field: pipeline.FieldGroup, Documented: "sms-replies-prod", Source: pipeline.SourceConfig}}}}},
		{"not writable while records wait: confirmed",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: stopped(), Probe: probeWith(false)},
			want{causes: []string{"CHECKPOINT_NOT_WRITABLE confirmed"}, symptoms: []string{"PROGRESS_STOPPED", "PROBE_FAILING"}}},
		{"not writable with nothing waiting: a risk",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: committing(), Probe: func() *probe.Result {
				r := probeWith(false)
				r.Status, r.Class = probe.StatusOK, ""
				return r
			}()},
			want{healthy: true, risks: []pipeline.Fact{{Risk: pipeline.CauseNotWritable, Kind: pipeline.FactAccess, Access: &access.Report{Location: "/cp", User: jobUser}}}}},
		{"a permission error older than the newest commit is history",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: committing(), Probe: probeWith(true), Logs: permissionLine(at.Add(-40 * time.Minute)),
				LastWrite: &probe.Result{Status: probe.StatusFailed, Class: probe.ClassPermissionDenied, Started: at.Add(-30 * time.Minute), Reason: "permission denied writing /cp/_streamwatch_probe/probe-1"}},
			want{healthy: true, history: []pipeline.Fact{{Kind: pipeline.FactLog, What: "PERMISSION_DENIED", N: 3, At: at.Add(-40 * time.Minute)},
				{Kind: pipeline.FactProbe, At: at.Add(-30 * time.Minute), Text: "permission denied writing"}}}},
		{"the access check contradicts newer permission errors: no cause, the stop is unexplained",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: stopped(), Probe: probeWith(true), Logs: permissionLine(at.Add(-10 * time.Minute))},
			want{symptoms: []string{"PROGRESS_STOPPED", "LOG_ERRORS"}, notes: []pipeline.Fact{{Kind: pipeline.FactLogContradicted, What: "PERMISSION_DENIED"}}}},
		{"gs://: streamwatch's identity lacks storage.objects.create while records wait: confirmed",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: stopped(), Probe: gcsProbe("storage.objects.delete")},
			want{causes: []string{"CHECKPOINT_NOT_WRITABLE confirmed"}, symptoms: []string{"PROGRESS_STOPPED", "PROBE_FAILING"}}},
		{"gs://: streamwatch's identity may write, which does not contradict the job's permission errors",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: stopped(), Probe: gcsProbe(access.GCSWrite...), Logs: permissionLine(at.Add(-10 * time.Minute))},
			want{causes: []string{"CHECKPOINT_NOT_WRITABLE likely"}, symptoms: []string{"PROGRESS_STOPPED", "LOG_ERRORS"}}},
		{"permission errors in the log alone: possible",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: committing(), Logs: permissionLine(at.Add(time.Second))},
			want{causes: []string{"CHECKPOINT_NOT_WRITABLE possible"}, symptoms: []string{"LOG_ERRORS"}}},
		{"permission errors in the log while records wait (s3: access not judged): likely",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: stopped(), Logs: permissionLine(at.Add(-10 * time.Minute))},
			want{causes: []string{"CHECKPOINT_NOT_WRITABLE likely"}, symptoms: []string{"PROGRESS_STOPPED", "LOG_ERRORS"}}},
		{"another group consumes and the deployed config names it: confirmed",
			pipeline.Inputs{Lag: &kafka.LagReport{Status: kafka.StatusOK, Mismatch: otherGroupConsumes}, Checkpoint: committing(), Probe: probeWith(true),
				Drift: []deployconf.Difference{{Field: deployconf.FieldGroup, Documented: "sms-replies-prod", Deployed: "sms-replies-v2", Evidence: "sms-replies.conf:3: spark.kafka.group.id=sms-replies-v2"}}},
			want{causes: []string{"CONSUMER_GROUP_MISMATCH confirmed"}, symptoms: []string{"DOCUMENTED_GROUP_IDLE"}}},
		{"another group consumes: likely",
			pipeline.Inputs{Lag: &kafka.LagReport{Status: kafka.StatusOK, Mismatch: otherGroupConsumes}, Checkpoint: committing()},
			want{causes: []string{"CONSUMER_GROUP_MISMATCH likely"}, symptoms: []string{"DOCUMENTED_GROUP_IDLE"}}},
		{"a corrupt newest offsets file while records wait: likely (the stop is seen in the same files)",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: stopped(spark.Finding{Code: spark.CodeCorruptFile, Severity: spark.SeverityCritical, File: "offsets/4", Summary: spark.Line{Kind: spark.LineCorrupt, File: "offsets/4", Problem: spark.ProblemEmpty}}),
				Probe: probeWith(true)},
			want{causes: []string{"CHECKPOINT_CORRUPT likely"}, symptoms: []string{"PROGRESS_STOPPED"}}},
		{"the brokers do not answer: likely",
			pipeline.Inputs{LagErr: fmt.Errorf("cluster main: broker 127.0.0.1:9092 after 5s: %w", kafka.ErrUnreachable), Checkpoint: committing()},
			want{causes: []string{"BROKER_UNREACHABLE likely"}, symptoms: []string{"BROKERS_UNREACHABLE"}}},
		{"the brokers do not answer and the checkpoint stopped: confirmed",
			pipeline.Inputs{LagErr: fmt.Errorf("cluster main: broker 127.0.0.1:9092 after 5s: %w", kafka.ErrUnreachable), Checkpoint: stopped()},
			want{causes: []string{"BROKER_UNREACHABLE confirmed"}, symptoms: []string{"PROGRESS_STOPPED", "BROKERS_UNREACHABLE"}}},
		{"slower than the producer",
			pipeline.Inputs{Lag: &kafka.LagReport{Status: kafka.StatusWarning, Summary: kafka.Summary{Status: kafka.StatusWarning, Judged: 1, Same: 1, Worst: kafka.PartitionVerdict{Partition: 3, Evidence: kafka.Evidence{Rule: kafka.RuleWarning, Samples: 6}}}}, Checkpoint: committing()},
			want{causes: []string{"CONSUMER_SLOWER_THAN_PRODUCER likely"}, symptoms: []string{"LAG_GROWING"}}},
		{"the checkpoint stopped and nothing says why",
			pipeline.Inputs{Lag: healthyLag(), Checkpoint: stopped(), Probe: probeWith(true)},
			want{symptoms: []string{"PROGRESS_STOPPED"}}},
	}
}

// TestJudge: one scenario per rule of the verdict: symptoms first, a cause only when it
// explains one, confidence from independent signals, old evidence as history, config text
// as a risk.
func TestJudge(t *testing.T) {
	for _, c := range judgeCases() {
		t.Run(c.name, func(t *testing.T) {
			c.in.Pipeline, c.in.Now = "sms-replies", at
			v := pipeline.Judge(c.in)
			defer func() {
				if t.Failed() {
					t.Logf("%+v", v)
				}
			}()
			if v.Healthy != c.want.healthy {
				t.Errorf("healthy = %v, want %v", v.Healthy, c.want.healthy)
			}
			var causes []string
			for _, cause := range v.Causes {
				causes = append(causes, cause.ID+" "+string(cause.Confidence))
				if len(cause.Evidence) == 0 || len(cause.Explains) == 0 {
					t.Errorf("cause without evidence or symptom: %+v", cause)
				}
			}
			if strings.Join(causes, ",") != strings.Join(c.want.causes, ",") {
				t.Errorf("causes %v, want %v", causes, c.want.causes)
			}
			var symptoms []string
			for _, s := range v.Symptoms {
				symptoms = append(symptoms, s.ID)
			}
			if strings.Join(symptoms, ",") != strings.Join(c.want.symptoms, ",") {
				t.Errorf("symptoms %v, want %v", symptoms, c.want.symptoms)
			}
			if len(v.Risks) != len(c.want.risks) {
				t.Errorf("risks %+v, want %d", v.Risks, len(c.want.risks))
			}
			for _, group := range []struct {
				have []pipeline.Fact
				want []pipeline.Fact
			}{{v.Risks, c.want.risks}, {v.History, c.want.history}, {v.Notes, c.want.notes}} {
				for _, w := range group.want {
					if !hasFact(group.have, w) {
						t.Errorf("%+v lacks %+v", group.have, w)
					}
				}
			}
			if c.in.Probe == nil {
				return
			}
			a := v.Access
			switch {
			case a == nil:
				t.Errorf("the verdict does not say whose access it judged")
			case c.in.Probe.Access.Identity != "":
				if !a.Identity || a.Report == nil || a.Report.Identity != access.GCSIdentity || !a.Report.JobUserUnjudged {
					t.Errorf("the verdict does not say it judged streamwatch's identity, not job_user: %+v", a)
				}
			case a.User != "uid 185 groups [185] (job_user)" || a.Writable != c.in.Probe.Access.Writable:
				t.Errorf("the verdict does not say whose access it judged, or what: %+v", a)
			}
		})
	}
}

// TestRunNamesWhatDidNotFinish: checks run concurrently under one deadline; a check that hangs
// is named, what finished is judged.
func TestRunNamesWhatDidNotFinish(t *testing.T) {
	c := pipeline.Checks{
		Lag: func(ctx context.Context) (*kafka.LagReport, error) { <-ctx.Done(); return nil, ctx.Err() },
		Checkpoint: func(context.Context) (pipeline.CheckpointReading, error) {
			return pipeline.CheckpointReading{Report: stopped(spark.Finding{Code: spark.CodeCorruptFile, File: "offsets/4", Summary: spark.Line{Kind: spark.LineCorrupt, File: "offsets/4", Problem: spark.ProblemEmpty}})}, nil
		},
		Logs: func(context.Context) (*driverlog.Report, error) { return nil, errors.New("no file matches /var/log/x") },
	}
	begin := time.Now()
	v := c.Run(context.Background(), "sms-replies", 300*time.Millisecond)
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("Run took %v past its deadline", took)
	}
	if len(v.Unfinished) != 1 || v.Unfinished[0] != pipeline.CheckLag {
		t.Fatalf("unfinished %v", v.Unfinished)
	}
	if len(v.Causes) == 0 || v.Causes[0].ID != pipeline.CauseCorrupt || v.Healthy {
		t.Fatalf("verdict %+v", v)
	}
}
