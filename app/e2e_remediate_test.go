package app_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// TestE2EBackupRepairWatch: backup verified; the repair dry run offers a button; a click by
// someone outside slack.remediators is refused and audited; a remediator's click moves exactly
// the corrupt fragment into the backup's quarantine/; the watch reports recovery once the job
// commits again.
func TestE2EBackupRepairWatch(t *testing.T) {
	kc := seedKafka(t, false)
	base := t.TempDir()
	dir := filepath.Join(base, "checkpoints", "sms-replies")
	backups := filepath.Join(base, "backups")
	spec := seedSpec(time.Now().Add(-40 * time.Minute))
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(base, "driver.log")
	os.WriteFile(logPath, nil, 0o644)
	quiet := time.Now().Add(-30 * time.Minute) // the driver died with the query
	os.Chtimes(logPath, quiet, quiet)
	prefix := testredis.Prefix()
	extra := strings.Replace(seedConfig(kc, dir, logPath), "    probe:\n", "      backup_location: "+backups+"\n    probe:\n", 1)
	in := start(t, setup{prefix: prefix, slackExtra: "  remediators: [U0ONCALL]\n", extra: extra})
	s := in.slack
	in.ok("/webhooks/alertmanager", mustRead(t, "testdata/alertmanager-sms.json"))
	waitFor(t, s, "the incident", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	root := roots(s, "C0PIPE")[0]

	// A confirmation names the plan it confirms.
	if r := askAs(t, s, "U0ONCALL", "checkpoint repair sms-replies --confirm"); !strings.Contains(r.Text, "--confirm needs the plan id the dry run showed") {
		t.Fatalf("confirm without a plan: %q", r.Text)
	}
	r := ask(t, s, "checkpoint repair sms-replies")
	plan := planID(t, r.Text)
	if !strings.Contains(r.Text, "Dry run "+plan+": 1 file(s)") || !strings.Contains(string(r.Blocks), "offsets/4") ||
		!strings.Contains(string(r.Blocks), "digest") {
		t.Fatalf("dry run: %q %s", r.Text, r.Blocks)
	}
	// U1 is not a remediator: refused before any other rule.
	r = ask(t, s, "checkpoint repair sms-replies --confirm "+plan)
	if !strings.Contains(r.Text, "only the people listed in slack.remediators") {
		t.Fatalf("typed confirm by a non-remediator: %q", r.Text)
	}
	r = askAs(t, s, "U0ONCALL", "checkpoint repair sms-replies --confirm "+plan)
	if !strings.Contains(r.Text, "no verified backup of sms-replies") {
		t.Fatalf("repair without a backup: %q", r.Text)
	}
	// A backup is for the pipeline's remediators once any is named.
	if r = ask(t, s, "checkpoint backup sms-replies"); !strings.Contains(r.Text, "may back up checkpoints") {
		t.Fatalf("backup by a non-remediator: %q", r.Text)
	}
	r = askAs(t, s, "U0ONCALL", "checkpoint backup sms-replies")
	if !strings.Contains(r.Text, "verified against its manifest") {
		t.Fatalf("backup: %q", r.Text)
	}
	r = ask(t, s, "checkpoint repair sms-replies")
	if !strings.Contains(r.Text, "Dry run P-2: 1 file(s)") || !strings.Contains(string(r.Blocks), "offsets/4") {
		t.Fatalf("dry run: %q %s", r.Text, r.Blocks)
	}
	if _, err := os.Stat(filepath.Join(dir, "offsets", "4")); err != nil {
		t.Fatalf("the dry run moved offsets/4: %v", err)
	}
	// The button, clicked by someone else, then by a remediator. The fake resolves the button
	// from the ephemeral reply it recorded.
	click := func(user string) slackfake.ResponsePost {
		t.Helper()
		before := len(s.ResponsePosts())
		_, err := s.SendBlockAction(context.Background(), slackfake.BlockAction{UserID: user, ChannelID: "C0PIPE",
			MessageTS: ephemeralTS(t, s, "Dry run"), ActionID: "cmd_repair_confirm"})
		if err != nil {
			t.Fatal(err)
		}
		var got slackfake.ResponsePost
		waitFor(t, s, "the click's answer", func(s *slackfake.Server) bool {
			p := s.ResponsePosts()
			if len(p) > before {
				got = p[len(p)-1]
				return true
			}
			return false
		})
		return got
	}
	if p := click("U0EVE"); !strings.Contains(p.Text, "only the people listed in slack.remediators") {
		t.Fatalf("unauthorized click: %q", p.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, "offsets", "4")); err != nil {
		t.Fatalf("an unauthorized click moved files: %v", err)
	}
	p := click("U0ONCALL")
	if !strings.Contains(p.Text, "Quarantined 1 file(s) of sms-replies") {
		t.Fatalf("authorized click: %q", p.Text)
	}
	if _, err := os.Stat(filepath.Join(dir, "offsets", "4")); !os.IsNotExist(err) {
		t.Fatalf("offsets/4 still in the checkpoint: %v", err)
	}
	moved, _ := filepath.Glob(filepath.Join(backups, "sms-replies", "*", "quarantine", "offsets", "4"))
	if len(moved) != 1 {
		t.Fatalf("offsets/4 not in the backup's quarantine: %v", moved)
	}
	if _, err := os.Stat(filepath.Join(dir, "offsets", "3")); err != nil {
		t.Fatalf("committed history touched: %v", err)
	}
	rdb, _ := testredis.Client(t)
	log, _ := state.New(rdb, prefix).AuditLog(t.Context(), 20)
	var audit []string
	for _, e := range log {
		audit = append(audit, e.Actor+" "+e.Action+" "+e.Outcome)
	}
	for _, want := range []string{"U0ONCALL checkpoint repair refused", "U1 confirm checkpoint repairs refused", "U0EVE confirm checkpoint repairs refused", "U0ONCALL checkpoint repair done", "U1 back up checkpoints refused", "U0ONCALL checkpoint backup done"} {
		if !strings.Contains(strings.Join(audit, "\n"), want) {
			t.Fatalf("audit lacks %q: %q", want, audit)
		}
	}

	// Watch, then the job commits batch 4 again.
	r = ask(t, s, "watch sms-replies for 10m")
	if !strings.Contains(r.Text, "Watching sms-replies for 10m0s") || !strings.Contains(r.Text, "INC-1's thread") {
		t.Fatalf("watch: %q", r.Text)
	}
	spec.Files = nil
	spec.LatestBatch, spec.LatestCommit = 5, 5
	spec.Start = time.Now().Add(-5 * time.Minute)
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the recovery in the incident's thread", func(s *slackfake.Server) bool {
		for _, m := range replies(s, "C0PIPE", root.TS) {
			if strings.Contains(m.Text, "Recovery: sms-replies is progressing again") && strings.Contains(m.Text, "batch 3 → 5") {
				return true
			}
		}
		return false
	})
	var thread []string
	for _, m := range replies(s, "C0PIPE", root.TS) {
		thread = append(thread, m.Text)
	}
	joined := strings.ToLower(strings.Join(thread, "\n")) // the fake's user names are lower-case ids
	for _, want := range []string{"refused a checkpoint repair of sms-replies by u0eve", "quarantined 1 file(s)", "backed up sms-replies"} {
		if !strings.Contains(joined, want) {
			t.Errorf("thread lacks %q:\n%s", want, joined)
		}
	}
}

// planID finds the plan id in a dry run's text: "Dry run P-3: …".
func planID(t *testing.T, text string) string {
	t.Helper()
	m := regexp.MustCompile(`Dry run (P-[0-9]+):`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no plan id in %q", text)
	}
	return m[1]
}

// ephemeralTS finds the ts of the newest ephemeral reply whose text contains s.
func ephemeralTS(t *testing.T, s *slackfake.Server, text string) string {
	t.Helper()
	eph := s.Ephemerals()
	for i := len(eph) - 1; i >= 0; i-- {
		if strings.Contains(eph[i].Text, text) {
			return eph[i].TS
		}
	}
	t.Fatalf("no ephemeral reply with %q", text)
	return ""
}
