package triage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/triage"
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
	return &kafka.LagReport{Pipeline: "sms-replies", Status: kafka.StatusOK, Evidence: "all partitions caught up",
		Totals: kafka.LagTotals{Partitions: 3}}
}

func healthyCheckpoint() *spark.Report {
	return &spark.Report{Findings: []spark.Finding{{Code: spark.CodeOK, Summary: "the checkpoint is consistent"}}}
}

func okProbe() *probe.Result { return &probe.Result{Status: probe.StatusOK, Started: at} }

// TestJudgeTellsCausesApart: one scenario per cause the product must tell apart, each with the
// cause it must rank first; a healthy pipeline gets no cause at all.
func TestJudgeTellsCausesApart(t *testing.T) {
	cases := []struct {
		name string
		in   triage.Inputs
		top  string // "" means healthy
	}{
		{"healthy", triage.Inputs{Lag: healthyLag(), Checkpoint: healthyCheckpoint(), Probe: okProbe(),
			Logs: &driverlog.Report{}}, ""},
		{"checkpoint location not writable", triage.Inputs{Lag: healthyLag(), Checkpoint: healthyCheckpoint(), Probe: okProbe(),
			LastWrite: &probe.Result{Status: probe.StatusFailed, Class: probe.ClassPermissionDenied, Started: at,
				Reason: "permission denied writing /var/lib/spark/checkpoints/sms-replies/_streamwatch_probe/probe-1"},
			Logs: &driverlog.Report{Matches: []driverlog.Match{{Signature: sig("PERMISSION_DENIED"), Count: 3, Example: "java.nio.file.AccessDeniedException: …/offsets/.58.tmp"}}}},
			triage.CauseNotWritable},
		{"consumer group mismatch", triage.Inputs{Lag: &kafka.LagReport{Pipeline: "sms-replies", Status: kafka.StatusStopped,
			Mismatch: &kafka.Mismatch{Documented: "sms-replies-prod", Reason: "empty", Evidence: "sms-replies-prod is empty while sms-replies-v2 consumes client.replies.sms: 1 member, lag 0"}},
			Checkpoint: healthyCheckpoint(), Probe: okProbe(),
			Drift: []deployconf.Difference{{Field: deployconf.FieldGroup, Documented: "sms-replies-prod", Deployed: "sms-replies-v2", Evidence: "sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2"}}},
			triage.CauseGroupMismatch},
		{"corrupted newest checkpoint file", triage.Inputs{Lag: healthyLag(), Probe: &probe.Result{Status: probe.StatusFailed, Class: probe.ClassCorrupt, Reason: "corrupt offsets/4: line 1: empty"},
			Checkpoint: &spark.Report{Findings: []spark.Finding{{Code: spark.CodeCorruptFile, Severity: spark.SeverityCritical, File: "offsets/4", Summary: "offsets/4 is corrupt (empty)"}}}},
			triage.CauseCorrupt},
		{"checkpoint stale while the broker has new data", triage.Inputs{Lag: healthyLag(), Probe: okProbe(),
			Checkpoint: &spark.Report{PendingTotal: 1240, Findings: []spark.Finding{{Code: spark.CodeStale, Severity: spark.SeverityCritical, Summary: "no commit for 47m (stale after 10m)"}}}},
			triage.CauseStaleWithData},
		{"broker unreachable", triage.Inputs{LagErr: fmt.Errorf("cluster main: broker 127.0.0.1:9092 after 5s: %w", kafka.ErrUnreachable),
			Checkpoint: healthyCheckpoint(), Probe: okProbe()}, triage.CauseBrokerDown},
		{"consumer healthy but slower than the producer", triage.Inputs{Lag: &kafka.LagReport{Pipeline: "sms-replies", Status: kafka.StatusWarning,
			Evidence: "p3: lag grew 120 → 4800 over 30m while commits advanced 9000"}, Checkpoint: healthyCheckpoint(), Probe: okProbe()},
			triage.CauseSlowConsumer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Pipeline = "sms-replies"
			v := triage.Judge(c.in)
			if c.top == "" {
				if !v.Healthy || len(v.Causes) != 0 || v.Summary() != "sms-replies: healthy" {
					t.Fatalf("healthy pipeline judged %+v", v)
				}
				return
			}
			if v.Healthy || len(v.Causes) == 0 || v.Causes[0].ID != c.top {
				t.Fatalf("top cause %v, want %s", v.Causes, c.top)
			}
			if len(v.Causes[0].Evidence) == 0 || v.Causes[0].Next == "" {
				t.Fatalf("cause without evidence or next step: %+v", v.Causes[0])
			}
			if !strings.Contains(strings.Join(v.Lines(), "\n"), "next: ") {
				t.Fatalf("lines: %q", v.Lines())
			}
		})
	}
}

// TestRunNamesWhatDidNotFinish: checks run concurrently under one deadline; a check that hangs
// is named, what finished is judged.
func TestRunNamesWhatDidNotFinish(t *testing.T) {
	c := triage.Checks{
		Lag: func(ctx context.Context) (*kafka.LagReport, error) { <-ctx.Done(); return nil, ctx.Err() },
		Checkpoint: func(context.Context) (*spark.Report, error) {
			return &spark.Report{Findings: []spark.Finding{{Code: spark.CodeCorruptFile, File: "offsets/4", Summary: "offsets/4 is corrupt (empty)"}}}, nil
		},
		Logs: func(context.Context) (*driverlog.Report, error) { return nil, errors.New("no file matches /var/log/x") },
	}
	begin := time.Now()
	v := c.Run(context.Background(), "sms-replies", 300*time.Millisecond)
	if took := time.Since(begin); took > 5*time.Second {
		t.Fatalf("Run took %v past its deadline", took)
	}
	if len(v.Unfinished) != 1 || v.Unfinished[0] != triage.CheckLag {
		t.Fatalf("unfinished %v", v.Unfinished)
	}
	if len(v.Causes) == 0 || v.Causes[0].ID != triage.CauseCorrupt || v.Healthy {
		t.Fatalf("verdict %+v", v)
	}
	if !strings.Contains(strings.Join(v.Lines(), "\n"), "did not finish in time: lag and status") {
		t.Fatalf("lines %q", v.Lines())
	}
}
