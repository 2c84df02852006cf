package commands

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// TestHandlerRepliesWorded: the replies the handlers' render functions make, sentence by
// sentence, as the handlers made them inline before.
func TestHandlerRepliesWorded(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 40, 0, 0, time.UTC)
	entry := state.AuditEntry{At: at, Actor: "U0ALICE", Action: "read the audit trail of sms", Target: "sms",
		Outcome: "refused", Detail: "nobody may read the audit trail of sms", Via: "command", Channel: "C0SMS"}
	took, _ := json.Marshal(probe.Result{Took: 1500 * time.Millisecond})
	for _, c := range []struct{ name, got, want string }{
		{"audit of nothing", auditReply("", nil).Text, "No audit entries for everything."},
		{"audit of one", auditReply("sms", []state.AuditEntry{entry}).Text, "Audit trail of sms: the newest 1 entry, oldest first"},
		{"audit line", auditReply("sms", []state.AuditEntry{entry}).Sections[0].Lines[0],
			human.Stamp(at) + "  U0ALICE    refused  read the audit trail of sms sms (command in C0SMS): nobody may read the audit trail of sms"},
		{"audit of two", auditReply("", []state.AuditEntry{entry, entry}).Text, "Audit trail of everything: the newest 2 entries, oldest first"},
		{"audit action, all", auditAction(""), "read the whole audit trail"},
		{"checkpoint", checkpointReply("sms", &spark.Report{Findings: []spark.Finding{{Code: spark.CodeStale}, {Code: spark.CodeCorruptFile}}}).Text,
			"Checkpoint of sms: STALE, CORRUPT_FILE"},
		{"logs, clean", logsReply("sms", driverlog.Report{}).Text, "No checkpoint trouble in the logs of sms."},
		{"logs, trouble", logsReply("sms", driverlog.Report{Matches: []driverlog.Match{{Signature: driverlog.Signature{ID: "CONCURRENT_QUERY"}, Count: 2}}}).Text,
			"Checkpoint trouble in the logs of sms: Two runs on one checkpoint"},
		{"groups", groupsReply("orders", &kafka.GroupsReport{Groups: make([]kafka.TopicGroup, 2)}).Text, "2 group(s) on orders"},
		{"diagnosed again", diagnosedAgain("sms", "INC-4"), "Diagnosed sms again; the verdict is in INC-4's thread."},
		{"no pipeline to diagnose", noPipelineToDiagnose("INC-4").Error(), "INC-4 belongs to no pipeline: there is nothing to diagnose"},
		{"never probed", probeHistoryReply("sms", nil).Text, "sms has not been probed yet."},
		{"probe history", probeHistoryReply("sms", []state.ProbeRecord{{At: at, Status: "FAILED", Class: "permission", Reason: "denied", Result: took}}).Text,
			"Last 1 probes of sms"},
		{"probe history line", probeHistoryReply("sms", []state.ProbeRecord{{At: at, Status: "FAILED", Reason: "denied", Result: took}}).Sections[0].Lines[1],
			human.Stamp(at) + " FAILED    -                      1.5s  denied"},
		{"probe of none", probeReply(nil, nil).Text, "No pipeline has a checkpoint to probe."},
		{"probe of two", probeReply([]string{"a", "b"}, []probe.Result{{Status: probe.StatusOK}, {Status: probe.StatusFailed}}).Text, "a OK; b FAILED"},
		{"status, all OK", statusReply(pipeline.Digest{Rows: []pipeline.DigestRow{{Pipeline: "a", Status: "OK"}, {Pipeline: "b", Status: "OK"}}}).Text,
			"2 pipelines, all OK"},
		{"status, a look", statusReply(pipeline.Digest{Rows: []pipeline.DigestRow{{Pipeline: "a", Status: "OK"}, {Pipeline: "b"}},
			Notes: []pipeline.StatusNote{{}}}).Text, "Needs a look: b never probed (1 note below)"},
		{"watching", watchingText("sms", 30*time.Minute, "INC-4", pipeline.Progress{}),
			"Watching sms for 30m0s; I will report in INC-4's thread when progress resumes or the time runs out. Now: " + ProgressText(pipeline.Progress{})},
		{"watching here", watchingText("sms", time.Hour, "", pipeline.Progress{})[:60], "Watching sms for 1h0m0s; I will report in this channel when "},
		{"unknown command", unknownCommand("streamwatch", []string{"frobnicate"}, nil).(*UsageError).Usages[0], "streamwatch help"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, c.got, c.want)
		}
	}
}

// TestNotAllowedWorded: each refusal says who may do the action.
func TestNotAllowedWorded(t *testing.T) {
	for _, c := range []struct {
		e    ErrNotAllowed
		want string
	}{
		{ErrNotAllowed{Reason: notMemberText("INC-4")}, "INC-4 belongs to a channel you are not a member of"},
		{ErrNotAllowed{Action: "read the whole audit trail", Nobody: true}, "nobody may read the whole audit trail: slack.remediators names nobody"},
		{ErrNotAllowed{Action: "confirm checkpoint repairs", Pipeline: "sms", Nobody: true},
			"nobody may confirm checkpoint repairs: no remediator is named for sms (slack.remediators, pipelines[sms].remediators)"},
		{ErrNotAllowed{Action: "read the whole audit trail"}, "only the people listed in slack.remediators may read the whole audit trail"},
		{ErrNotAllowed{Action: "confirm checkpoint repairs", Pipeline: "sms"},
			"only the people listed in slack.remediators or pipelines[sms].remediators may confirm checkpoint repairs"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if got := notYetSafe(errors.New("timeout")).Lines[0]; got != "Redis did not say whether its replicas have this change (timeout)." {
		t.Errorf("not yet safe: got %q", got)
	}
}
