package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// TestE2ERepairGuards: a confirmation carries out exactly the plan it names: refused, moving
// nothing, when a planned file changed; refused while the query writes, unless a remediator
// forces it with a reason (audited); a restore puts back exactly what was quarantined;
// per-pipeline remediators repair their pipeline and not another; one remediation at a time
// per pipeline.
func TestE2ERepairGuards(t *testing.T) {
	base := t.TempDir()
	old := time.Now().Add(-40 * time.Minute)
	spec := seedSpec(old)
	sms, orders := filepath.Join(base, "cp", "sms-replies"), filepath.Join(base, "cp", "orders")
	for _, dir := range []string{sms, orders} {
		if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
			t.Fatal(err)
		}
	}
	backups := filepath.Join(base, "backups")
	logPath := filepath.Join(base, "driver.log")
	os.WriteFile(logPath, []byte("24/11/30 10:00:00 INFO SparkContext: Running Spark version 3.5.1\n"), 0o644)
	quiet := func(p string) {
		t.Helper()
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	quiet(logPath)
	offsets4 := filepath.Join(sms, "offsets", "4")
	planned := mustStat(t, offsets4).ModTime()

	prefix := testredis.Prefix()
	extra := fmt.Sprintf(`    remediators: [U0SMS]
    checkpoint: {location: %q, backup_location: %q}
    probe: {schedule: ""}
    logs: {paths: [%q]}
  - name: orders
    channel: C0ORDERS
    remediators: [U0ORD]
    checkpoint: {location: %q, backup_location: %q}
    probe: {schedule: ""}
repair:
  confirm_within: 3m
  quiet_for: 2m
`, sms, backups, logPath, orders, backups)
	in := start(t, setup{prefix: prefix, slackExtra: "  remediators: [U0ADMIN]\n", extra: extra})
	s := in.slack
	in.ok("/webhooks/generic", alertFor("client replied sms", "sms-1", "sms-replies"))
	waitFor(t, s, "the incident", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	root := roots(s, "C0PIPE")[0]
	rdb, _ := testredis.Client(t)
	store := state.New(rdb, prefix)

	// Backups: each pipeline's remediators, and no other.
	if r := askAs(t, s, "U0SMS", "checkpoint backup orders"); !strings.Contains(r.Text, "pipelines[orders].remediators may back up checkpoints") {
		t.Fatalf("U0SMS backing up orders: %q", r.Text)
	}
	if r := askAs(t, s, "U0SMS", "checkpoint backup sms-replies"); !strings.Contains(r.Text, "verified against its manifest") {
		t.Fatalf("U0SMS backing up sms-replies: %q", r.Text)
	}

	// The dry run is stored for repair.confirm_within, bound to the exact files.
	r := ask(t, s, "checkpoint repair sms-replies")
	p1 := planID(t, r.Text)
	if ttl := rdb.PTTL(t.Context(), "{"+prefix+"}:plan:"+p1).Val(); ttl <= 2*time.Minute || ttl > 3*time.Minute {
		t.Fatalf("plan %s expires in %v, want repair.confirm_within (3m)", p1, ttl)
	}
	if r := askAs(t, s, "U0ORD", "checkpoint repair sms-replies --confirm "+p1); !strings.Contains(r.Text, "pipelines[sms-replies].remediators may confirm checkpoint repairs") {
		t.Fatalf("U0ORD confirming sms-replies' repair: %q", r.Text)
	}

	// offsets/4 changes after the dry run (same modification time, other bytes): refused,
	// the difference shown, nothing moved; the plan is spent.
	os.WriteFile(offsets4, []byte("v1\n{\"bat"), 0o644)
	os.Chtimes(offsets4, planned, planned)
	r = askAs(t, s, "U0SMS", "checkpoint repair sms-replies --confirm "+p1)
	if !strings.Contains(r.Text, "the checkpoint of sms-replies changed since dry run "+p1) || !strings.Contains(r.Text, "nothing was moved") ||
		!strings.Contains(string(r.Blocks), "offsets/4: size 0 → 8 bytes") || !strings.Contains(string(r.Blocks), "SHA-256 e3b0c44298fc… →") {
		t.Fatalf("confirm of a changed plan: %q %s", r.Text, r.Blocks)
	}
	if b, err := os.ReadFile(offsets4); err != nil || string(b) != "v1\n{\"bat" {
		t.Fatalf("offsets/4 after the refused confirm: %q %v", b, err)
	}
	if moved, _ := filepath.Glob(filepath.Join(backups, "sms-replies", "*", "quarantine", "*", "*")); len(moved) != 0 {
		t.Fatalf("a refused confirm quarantined %v", moved)
	}
	if r := askAs(t, s, "U0SMS", "checkpoint repair sms-replies --confirm "+p1); !strings.Contains(r.Text, "plan "+p1+" is unknown, expired") {
		t.Fatalf("a spent plan confirmed again: %q", r.Text)
	}
	os.WriteFile(offsets4, nil, 0o644)
	os.Chtimes(offsets4, planned, planned)
	before := treeOf(t, sms)

	// The query writes: a temp file of batch 5 and the driver log. Refused with what it saw.
	r = ask(t, s, "checkpoint repair sms-replies")
	p2 := planID(t, r.Text)
	tmp := filepath.Join(sms, "offsets", ".5.9f1c2d3e-0a1b-4c5d-8e9f-001122334455.tmp")
	os.WriteFile(tmp, []byte("v1\n"), 0o644)
	f, _ := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("24/11/30 10:41:00 INFO MicroBatchExecution: Committed offsets for batch 5\n")
	f.Close()
	r = askAs(t, s, "U0SMS", "checkpoint repair sms-replies --confirm "+p2)
	for _, want := range []string{"sms-replies looks alive", "offsets/.5.9f1c2d3e-0a1b-4c5d-8e9f-001122334455.tmp was written", "the driver log " + logPath + " was written",
		"Stop the query first", "--force REASON"} {
		if !strings.Contains(r.Text+string(r.Blocks), want) {
			t.Errorf("refusal while alive lacks %q: %q %s", want, r.Text, r.Blocks)
		}
	}
	if _, err := os.Stat(offsets4); err != nil {
		t.Fatalf("a refused repair moved offsets/4: %v", err)
	}
	if r := askAs(t, s, "U0SMS", "checkpoint repair sms-replies --confirm "+p2+" --force"); !strings.Contains(r.Text, "--force needs a reason") {
		t.Fatalf("--force without a reason: %q", r.Text)
	}
	// Forced, with the reason: it goes through and the audit says why and over what.
	r = askAs(t, s, "U0SMS", "checkpoint repair sms-replies --confirm "+p2+" --force query stopped by hand at 10:40")
	if !strings.Contains(r.Text, "Quarantined 1 file(s) of sms-replies") || !strings.Contains(r.Text, "Forced by u0sms (query stopped by hand at 10:40)") {
		t.Fatalf("forced repair: %q", r.Text)
	}
	if _, err := os.Stat(offsets4); !os.IsNotExist(err) {
		t.Fatalf("offsets/4 after the forced repair: %v", err)
	}
	var forced string
	for _, e := range auditEntries(t, prefix) {
		if e.Action == "checkpoint repair" && e.Outcome == "done" {
			forced = e.Detail
		}
	}
	if !strings.Contains(forced, "plan "+p2) || !strings.Contains(forced, "[--force: query stopped by hand at 10:40]") ||
		!strings.Contains(forced, "overrode:") || !strings.Contains(forced, "driver log") {
		t.Fatalf("the forced repair's audit: %q", forced)
	}
	waitFor(t, s, "the forced repair in the thread", func(s *slackfake.Server) bool {
		for _, m := range replies(s, "C0PIPE", root.TS) {
			if strings.Contains(m.Text, "Forced by u0sms (query stopped by hand at 10:40)") {
				return true
			}
		}
		return false
	})

	// The query is stopped for good; the restore puts back exactly what was quarantined.
	os.Remove(tmp)
	quiet(logPath)
	r = ask(t, s, "checkpoint backups sms-replies")
	if !strings.Contains(r.Text, "1 backup of sms-replies") || !strings.Contains(string(r.Blocks), "verified") {
		t.Fatalf("backups: %q %s", r.Text, r.Blocks)
	}
	r = ask(t, s, "checkpoint restore sms-replies")
	p3 := planID(t, r.Text)
	if !strings.Contains(r.Text, "1 file(s) would go back") || !strings.Contains(string(r.Blocks), "offsets/4") ||
		!strings.Contains(string(r.Blocks), "verified against the quarantine record") {
		t.Fatalf("restore dry run: %q %s", r.Text, r.Blocks)
	}
	if r := ask(t, s, "checkpoint restore sms-replies --confirm "+p3); !strings.Contains(r.Text, "may confirm checkpoint restores") {
		t.Fatalf("restore by a non-remediator: %q", r.Text)
	}
	r = askAs(t, s, "U0SMS", "checkpoint restore sms-replies --confirm "+p3)
	if !strings.Contains(r.Text, "Restored 1 file(s) of sms-replies") {
		t.Fatalf("restore: %q", r.Text)
	}
	sameFiles(t, treeOf(t, sms), before)
	if left, _ := filepath.Glob(filepath.Join(backups, "sms-replies", "*", "quarantine", "*", "*")); len(left) != 0 {
		t.Fatalf("the quarantine still holds %v", left)
	}

	// orders: its remediator repairs it; one remediation at a time per pipeline.
	if ok, err := store.TryLock(t.Context(), "remediate:orders", "checkpoint backup by U0OTHER since 10:40:00Z (replica-b #1)", time.Minute); err != nil || !ok {
		t.Fatal("could not take the lock", err)
	}
	if r := askAs(t, s, "U0ORD", "checkpoint backup orders"); !strings.Contains(r.Text, "another remediation of orders is running (checkpoint backup by U0OTHER since 10:40:00Z)") {
		t.Fatalf("a second backup of orders: %q", r.Text)
	}
	store.Unlock(t.Context(), "remediate:orders", "checkpoint backup by U0OTHER since 10:40:00Z (replica-b #1)")
	if r := askAs(t, s, "U0ORD", "checkpoint backup orders"); !strings.Contains(r.Text, "verified against its manifest") {
		t.Fatalf("backup of orders: %q", r.Text)
	}
	r = ask(t, s, "checkpoint repair orders")
	p4 := planID(t, r.Text)
	if r := askAs(t, s, "U0SMS", "checkpoint repair orders --confirm "+p4); !strings.Contains(r.Text, "pipelines[orders].remediators may confirm") {
		t.Fatalf("U0SMS repairing orders: %q", r.Text)
	}
	if r := askAs(t, s, "U0ORD", "checkpoint repair sms-replies --confirm "+p4); !strings.Contains(r.Text, "may confirm checkpoint repairs") {
		t.Fatalf("U0ORD confirming orders' plan as sms-replies: %q", r.Text)
	}
	if r := askAs(t, s, "U0ORD", "checkpoint repair orders --confirm "+p4); !strings.Contains(r.Text, "Quarantined 1 file(s) of orders") {
		t.Fatalf("U0ORD repairing orders: %q", r.Text)
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// treeOf reads every file under dir, by slash path.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			t.Errorf("%s: %q (present %v), want %q", p, g, ok, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is new", p)
		}
	}
}
