package commands_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestRefusalText: every refused remediation, worded with what to do next, and its evidence.
func TestRefusalText(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 40, 5, 0, time.UTC)
	alive := []pipeline.AliveSign{
		{Kind: pipeline.SignWritten, Path: "offsets/.5.9f1c.tmp", At: at, Ago: 12*time.Second + 400*time.Millisecond},
		{Kind: pipeline.SignProbeCommit, At: at.Add(-time.Minute), Ago: 72 * time.Second, Probed: at.Add(-30 * time.Second)},
		{Kind: pipeline.SignDriverLog, Path: "/var/log/spark/driver.log", At: at, Ago: 12 * time.Second},
	}
	stop := []string{
		"Stop the query first: query.stop() in the driver, or stop the job (spark-submit --kill, yarn application -kill, kubectl delete sparkapplication).",
		"Then wait until nothing is written for 2m0s (repair.quiet_for) and confirm again; `--force REASON` (remediators, audited) overrides.",
	}
	r := func(code pipeline.RepairRefusal) pipeline.RefusalError {
		return pipeline.RefusalError{Code: code, Pipeline: "sms-replies", Kind: pipeline.KindRepair, Plan: "P-3"}
	}
	with := func(e pipeline.RefusalError, f func(*pipeline.RefusalError)) pipeline.RefusalError { f(&e); return e }
	for _, c := range []struct {
		err     pipeline.RefusalError
		text    string
		details []string
	}{
		{r(pipeline.RefusedNoBackupLocation), "pipelines[sms-replies].checkpoint.backup_location is not set: no backup, no repair", nil},
		{with(r(pipeline.RefusedBusy), func(e *pipeline.RefusalError) { e.Holder = "checkpoint backup by bob since 10:40:00Z" }),
			"another remediation of sms-replies is running (checkpoint backup by bob since 10:40:00Z); one at a time per pipeline: try again when it is done", nil},
		{with(r(pipeline.RefusedBackupName), func(e *pipeline.RefusalError) { e.Backup = "yesterday" }),
			"\"yesterday\" is not a backup name such as 20261130T104105Z: see `checkpoint backups sms-replies`", nil},
		{with(r(pipeline.RefusedNoSuchBackup), func(e *pipeline.RefusalError) { e.Backup = "20261130T104105Z" }),
			"sms-replies has no backup 20261130T104105Z: see `checkpoint backups sms-replies`", nil},
		{r(pipeline.RefusedNothingQuarantined), "no backup of sms-replies holds quarantined files: there is nothing to restore", nil},
		{with(r(pipeline.RefusedUnknownPlan), func(e *pipeline.RefusalError) { e.Limit = 3 * time.Minute }),
			"plan P-3 is unknown, expired (plans last 3m0s, repair.confirm_within) or already carried out: run `checkpoint repair sms-replies` again", nil},
		{with(r(pipeline.RefusedOtherPlan), func(e *pipeline.RefusalError) {
			e.Kind, e.PlanKind, e.PlanPipeline = pipeline.KindRestore, pipeline.KindRepair, "orders"
		}), "plan P-3 is a repair of orders, not a restore of sms-replies", nil},
		{with(r(pipeline.RefusedMoved), func(e *pipeline.RefusalError) { e.PlanLocation, e.Location = "/cp/old", "/cp/new" }),
			"plan P-3 was made for /cp/old; the checkpoint is now /cp/new: run `checkpoint repair sms-replies` again", nil},
		{with(r(pipeline.RefusedAlive), func(e *pipeline.RefusalError) { e.Alive, e.Limit = alive, 2*time.Minute }),
			"sms-replies looks alive: a checkpoint repair now could break the running query; nothing was changed",
			append([]string{"Seen within 2m0s (repair.quiet_for):",
				"offsets/.5.9f1c.tmp was written 12s ago (10:40:05Z)",
				"the probe of 10:39:35Z saw a commit written 1m12s ago (10:39:05Z)",
				"the driver log /var/log/spark/driver.log was written 12s ago (10:40:05Z)"}, stop...)},
		{r(pipeline.RefusedNoVerifiedBackup), "no verified backup of sms-replies: run `checkpoint backup sms-replies` first", nil},
		{with(r(pipeline.RefusedOldBackup), func(e *pipeline.RefusalError) { e.Age, e.Limit = 2*time.Hour+300*time.Millisecond, time.Hour }),
			"the newest verified backup of sms-replies is 2h0m0s old, older than repair.backup_max_age (1h0m0s): back up again first", nil},
		{with(r(pipeline.RefusedChanged), func(e *pipeline.RefusalError) {
			e.Digest = "bd601cdd2766aa00"
			e.Changes = pipeline.PlanChanges{Files: []remediate.FileChange{{Path: "offsets/4", Code: remediate.ChangeModified,
				Now: remediate.FileState{Size: 8}, Changed: []remediate.FileField{remediate.FieldSize}}},
				Added:   []remediate.PlanFile{{Path: "offsets/5", Reason: "offsets/5 is empty: Spark cannot parse it on restart"}},
				Dropped: []string{"commits/4"}}
		}), "the checkpoint of sms-replies changed since dry run P-3 (digest bd601cdd2766): nothing was moved; run `checkpoint repair sms-replies` again and look at the new plan",
			[]string{"offsets/4: size 0 → 8 bytes",
				"offsets/5: not in the plan that was shown, the checkpoint now needs it moved too (offsets/5 is empty: Spark cannot parse it on restart)",
				"commits/4: in the plan that was shown, no longer one to move"}},
		{with(r(pipeline.RefusedChanged), func(e *pipeline.RefusalError) {
			e.Kind, e.Digest, e.Changes = pipeline.KindRestore, "bd601cdd2766aa00", pipeline.PlanChanges{Files: []remediate.FileChange{{Path: "offsets/4", Code: remediate.ChangeGone}}}
		}), "the quarantine or the checkpoint of sms-replies changed since dry run P-3 (digest bd601cdd2766): nothing was put back; run `checkpoint restore sms-replies` again",
			[]string{"offsets/4: gone"}},
	} {
		text, details := commands.RefusalText(&c.err)
		if text != c.text || !slices.Equal(details, c.details) {
			t.Errorf("%s:\n got %q\n     %q\nwant %q\n     %q", c.err.Code, text, details, c.text, c.details)
		}
	}
}

// TestOutcomeText: a confirmed repair and restore, worded for the reply and the thread.
func TestOutcomeText(t *testing.T) {
	repair := &pipeline.Outcome{Kind: pipeline.KindRepair, Pipeline: "sms-replies", Plan: "P-3", Files: []string{"offsets/4", "offsets/.4.crc"},
		Quarantine: "/backups/sms-replies/20261130T104105Z/quarantine", Backup: "/backups/sms-replies/20261130T104105Z"}
	if got, want := commands.OutcomeText(repair), "Quarantined 2 file(s) of sms-replies into /backups/sms-replies/20261130T104105Z/quarantine (plan P-3): "+
		"offsets/4, offsets/.4.crc. Backup /backups/sms-replies/20261130T104105Z was verified before the move."; got != want {
		t.Errorf("repair:\n got %q\nwant %q", got, want)
	}
	restore := &pipeline.Outcome{Kind: pipeline.KindRestore, Pipeline: "sms-replies", Plan: "P-4", Files: []string{"offsets/4"},
		From: "/backups/sms-replies/20261130T104105Z/quarantine"}
	if got, want := commands.OutcomeText(restore), "Restored 1 file(s) of sms-replies from /backups/sms-replies/20261130T104105Z/quarantine (plan P-4), "+
		"each verified against the quarantine's manifest: offsets/4."; got != want {
		t.Errorf("restore:\n got %q\nwant %q", got, want)
	}
}

// TestRemediationReplies: a refusal reaches the person as a sentence with its evidence below,
// and the audit and the incident's thread word it the same; a forced confirmation names what
// it overrode; a dry run while the query writes says a confirmation would be refused and why.
func TestRemediationReplies(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 40, 5, 0, time.UTC)
	sign := []pipeline.AliveSign{{Kind: pipeline.SignWritten, Path: "offsets/.5.tmp", At: at, Ago: 3 * time.Second}}
	h, _, audit := authzHandler(named{global: []string{"U0ADMIN"}})
	notes := &noteRecorder{}
	h.RegisterRemediation(&aliveQuery{sign: sign, expires: at.Add(3 * time.Minute)}, notes)
	ask := func(text string) commands.Reply {
		return h.Handle(context.Background(), commands.Request{UserID: "U0ADMIN", ChannelID: "C0SMS", Text: text})
	}

	const refusal = "sms looks alive: a checkpoint repair now could break the running query; nothing was changed"
	r := ask("checkpoint repair sms --confirm P-3")
	if want := "Sorry: " + refusal + "."; r.Text != want {
		t.Errorf("refusal %q, want %q", r.Text, want)
	}
	if len(r.Sections) != 1 || len(r.Sections[0].Lines) != 4 ||
		!slices.Equal(r.Sections[0].Lines[:2], []string{"Seen within 2m0s (repair.quiet_for):", "offsets/.5.tmp was written 3s ago (10:40:05Z)"}) ||
		!strings.HasPrefix(r.Sections[0].Lines[2], "Stop the query first") {
		t.Errorf("refusal's evidence %+v", r.Sections)
	}
	if last := (*audit)[len(*audit)-1]; last.Outcome != "refused" || last.Detail != "plan P-3: "+refusal {
		t.Errorf("audited %+v", last)
	}
	if want := "Checkpoint repair of sms (plan P-3) by U0ADMIN refused: " + refusal; len(notes.got) != 1 || notes.got[0] != want {
		t.Errorf("thread notes %q, want %q", notes.got, want)
	}

	r = ask("checkpoint repair sms --confirm P-3 --force stopped by hand")
	if want := "Quarantined 1 file(s) of sms into /b/quarantine (plan P-3): offsets/4. Backup /b was verified before the move. " +
		"Forced by U0ADMIN (stopped by hand) over: offsets/.5.tmp was written 3s ago (10:40:05Z)."; r.Text != want {
		t.Errorf("forced %q, want %q", r.Text, want)
	}
	if last := (*audit)[len(*audit)-1]; last.Outcome != "done" ||
		last.Detail != "plan P-3: offsets/4; overrode: offsets/.5.tmp was written 3s ago (10:40:05Z) [--force: stopped by hand]" {
		t.Errorf("audited %+v", last)
	}

	r = ask("checkpoint repair sms")
	var refused []string
	for _, s := range r.Sections {
		if s.Title == "A confirmation now would be refused" {
			refused = s.Lines
		}
	}
	if len(refused) != 3 || refused[0] != "offsets/.5.tmp was written 3s ago (10:40:05Z)" || !strings.HasPrefix(refused[2], "Then wait until nothing is written for 2m0s") {
		t.Errorf("dry run's warnings %q", refused)
	}
}

// aliveQuery is a Remediation over a query that writes: a confirmation is refused unless
// forced, a dry run says so.
type aliveQuery struct {
	sign    []pipeline.AliveSign
	expires time.Time
}

func (q *aliveQuery) Backup(context.Context, string, string) (*remediate.BackupResult, error) {
	return nil, errStub
}
func (q *aliveQuery) Backups(context.Context, string) ([]remediate.BackupInfo, error) {
	return nil, errStub
}
func (q *aliveQuery) Propose(_ context.Context, _ commands.Kind, p, _, _ string) (*commands.Proposal, error) {
	return &commands.Proposal{ID: "P-3", Pipeline: p, Files: 1, Digest: "bd601cdd2766", Expires: q.expires,
		Repair: &remediate.Plan{Location: "/cp", Files: []remediate.PlanFile{{Path: "offsets/4", Reason: "offsets/4 is empty"}}},
		Alive:  q.sign, QuietFor: 2 * time.Minute}, nil
}
func (q *aliveQuery) Confirm(_ context.Context, c commands.Confirmation) (*commands.Outcome, error) {
	if c.Force == "" {
		return nil, &pipeline.RefusalError{Code: pipeline.RefusedAlive, Pipeline: c.Pipeline, Kind: c.Kind, Plan: c.Plan, Alive: q.sign, Limit: 2 * time.Minute}
	}
	return &commands.Outcome{Kind: c.Kind, Pipeline: c.Pipeline, Plan: c.Plan, Files: []string{"offsets/4"}, Quarantine: "/b/quarantine", Backup: "/b",
		Forced: q.sign}, nil
}

// noteRecorder records the thread notes.
type noteRecorder struct{ got []string }

func (n *noteRecorder) Note(_ context.Context, _, _, _, detail, _ string) (bool, error) {
	n.got = append(n.got, detail)
	return true, nil
}
