package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// ckptBackend is where a test's checkpoint lives: the local directory the test writes, or an
// object store the directory is uploaded to after every change, as the query would write it.
type ckptBackend struct {
	name string
	// open serves dir from the backend; it returns the checkpoint.location, the environment
	// streamwatch needs to reach it, and sync, which publishes dir's current files.
	open func(t *testing.T, dir string) (location string, env map[string]string, sync func())
}

var ckptBackends = []ckptBackend{
	{"local", func(t *testing.T, dir string) (string, map[string]string, func()) {
		return dir, nil, func() {}
	}},
	{"gs://", func(t *testing.T, dir string) (string, map[string]string, func()) {
		srv := storagetest.NewGCSServer(t, "spark")
		srv.Grant(access.GCSWrite...)
		return srv.Location("checkpoints/sms-replies"), gcsEnv(srv), func() { srv.Upload(t, dir, "checkpoints/sms-replies") }
	}},
}

// gcsEnv reaches the emulator as a deployment reaches one: STORAGE_EMULATOR_HOST.
func gcsEnv(srv *storagetest.GCSServer) map[string]string {
	return map[string]string{"STORAGE_EMULATOR_HOST": strings.TrimPrefix(srv.URL, "http://")}
}

// TestE2EDetectStaleCheckpointBackends: on every backend, a query that stops committing while
// replies arrive opens the pipeline's incident naming the stale checkpoint, with the waiting
// records counted from the checkpoint's own offsets.
func TestE2EDetectStaleCheckpointBackends(t *testing.T) {
	for _, b := range ckptBackends {
		t.Run(b.name, func(t *testing.T) {
			w := newSparkWorld(t)
			w.produce(10)
			w.commit(1, time.Time{}) // read up to offset 10: caught up
			location, env, sync := b.open(t, w.dir)
			sync()
			in := start(t, setup{extra: strings.Replace(w.config(""), "location: "+w.dir+"\n", "location: "+location+"\n", 1), env: env})
			wait.For(t, 20*time.Second, "a round observing the caught-up query", func() bool {
				v, ok := scrape(t, in, waitingCheckpoint)
				return ok && v == 0
			})
			w.produce(4)
			waitFor(t, in.slack, "the detection incident's root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
			root := roots(in.slack, "C0PIPE")[0]
			if !strings.Contains(root.Text, "sms-replies: 8 records have waited") || !strings.Contains(root.Text, "with no checkpoint commit") {
				t.Fatalf("root does not name the stall with its numbers: %q", root.Text)
			}
			waitFor(t, in.slack, "the root naming the stale checkpoint", func(s *slackfake.Server) bool {
				return strings.Contains(string(mustMessage(s, "C0PIPE", root.TS).Blocks), "Detected: checkpoint stale: 8 records wait beyond the checkpoint")
			})
			if v, ok := scrape(t, in, staleActive); !ok || v != 1 {
				t.Errorf("checkpoint_stale = %v (present %v) during the stall", v, ok)
			}
		})
	}
}

// TestE2EGCSSeedWorld is the seed incident with its checkpoint in GCS (fake-gcs-server in
// process, reached through STORAGE_EMULATOR_HOST, the bucket's testIamPermissions answered as
// GCS documents it): streamwatch's identity may read but not create objects, so `diagnose`
// names the unwritable location from testIamPermissions; once granted, a remediator backs the
// checkpoint up to gs://, the repair's dry run names the empty offsets/4, the confirmation
// moves it into the backup's quarantine, the write probe (a 403 on uploads under its prefix, as
// GCS answers a write it refuses) fails PERMISSION_DENIED, and the restore puts offsets/4 back.
func TestE2EGCSSeedWorld(t *testing.T) {
	kc := seedKafka(t, true)
	srv := storagetest.NewGCSServer(t, "spark")
	base := t.TempDir()
	dir := filepath.Join(base, "sms-replies")
	if err := sparktest.WriteCheckpoint(dir, seedSpec(time.Now().Add(-40*time.Minute))); err != nil {
		t.Fatal(err)
	}
	srv.Upload(t, dir, "checkpoints/sms-replies")
	location := srv.Location("checkpoints/sms-replies")
	logPath := filepath.Join(base, "driver.log")
	os.WriteFile(logPath, nil, 0o644)
	quiet := time.Now().Add(-30 * time.Minute) // the driver died with the query
	os.Chtimes(logPath, quiet, quiet)

	// Read-only, as GCS refuses a missing storage.objects.create: testIamPermissions lists only
	// what is held, and an upload answers 403.
	srv.Grant("storage.objects.get", "storage.objects.list")
	srv.DenyPrefix("checkpoints/sms-replies/" + probe.DefaultDir + "/")
	extra := strings.Replace(seedConfig(kc, location, logPath), "    probe:\n", "      backup_location: "+srv.Location("backups")+"\n    probe:\n      write: true\n", 1)
	in := start(t, setup{prefix: testredis.Prefix(), slackExtra: "  remediators: [U0ONCALL]\n", extra: extra, env: gcsEnv(srv)})
	s := in.slack

	r := ask(t, s, "diagnose sms-replies")
	body := r.Text + "\n" + string(r.Blocks)
	for _, cause := range []string{"CHECKPOINT_NOT_WRITABLE (confirmed)", "CONSUMER_GROUP_MISMATCH", "CHECKPOINT_CORRUPT"} {
		if !strings.Contains(r.Text, cause) {
			t.Errorf("verdict lacks %s: %q", cause, r.Text)
		}
	}
	for _, want := range []string{
		"streamwatch's identity lacks storage.objects.create and storage.objects.delete in gs://spark (testIamPermissions)",
		"not for the job's", "offsets/4 is corrupt", "sms-replies-v2",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the diagnosis lacks %q:\n%s", want, body)
		}
	}
	// The probe stops at the empty offsets/4 before its write test; the access line still says.
	r = ask(t, s, "probe sms-replies")
	if want := "✗ access of streamwatch's identity (judged without writing): lacks storage.objects.create"; !strings.Contains(string(r.Blocks), want) {
		t.Errorf("the probe's reply lacks %q:\n%s", want, r.Blocks)
	}

	// Access granted: backup, repair dry run, confirm, restore, all on gs://.
	srv.Grant("storage.objects.get", "storage.objects.list", "storage.objects.create", "storage.objects.delete")
	store, err := storage.Open(location, srv.Options())
	if err != nil {
		t.Fatal(err)
	}
	before, err := storage.ReadAll(context.Background(), store, "offsets/3", 0)
	if err != nil {
		t.Fatal(err)
	}
	if r := askAs(t, s, "U0ONCALL", "checkpoint backup sms-replies"); !strings.Contains(r.Text, "verified against its manifest") {
		t.Fatalf("backup: %q", r.Text)
	}
	r = ask(t, s, "checkpoint repair sms-replies")
	plan := planID(t, r.Text)
	if !strings.Contains(r.Text, "1 file(s)") || !strings.Contains(string(r.Blocks), "offsets/4") {
		t.Fatalf("dry run: %q %s", r.Text, r.Blocks)
	}
	if _, err := store.Stat(context.Background(), "offsets/4"); err != nil {
		t.Fatalf("the dry run moved offsets/4: %v", err)
	}
	if r := askAs(t, s, "U0ONCALL", "checkpoint repair sms-replies --confirm "+plan); !strings.Contains(r.Text, "Quarantined 1 file(s) of sms-replies") {
		t.Fatalf("confirm: %q", r.Text)
	}
	if _, err := store.Stat(context.Background(), "offsets/4"); storage.Class(err) != storage.ClassNotFound {
		t.Fatalf("offsets/4 still in the checkpoint: %v", err)
	}
	// With offsets/4 gone the probe reaches its write test, which GCS refuses (403) although
	// testIamPermissions grants create: the real write wins.
	r = ask(t, s, "probe sms-replies")
	for _, want := range []string{"✓ access of streamwatch's identity (judged without writing): may create and delete objects in gs://spark",
		"FAILED PERMISSION_DENIED: permission denied writing " + location + "/" + probe.DefaultDir + "/probe-", "access denied (GCS HTTP 403"} {
		if !strings.Contains(string(r.Blocks), want) {
			t.Errorf("the write probe's reply lacks %q:\n%s", want, r.Blocks)
		}
	}
	r = ask(t, s, "checkpoint restore sms-replies")
	restore := planID(t, r.Text)
	if !strings.Contains(r.Text, "1 file(s) would go back") || !strings.Contains(string(r.Blocks), "offsets/4") {
		t.Fatalf("restore dry run: %q %s", r.Text, r.Blocks)
	}
	if r := askAs(t, s, "U0ONCALL", "checkpoint restore sms-replies --confirm "+restore); !strings.Contains(r.Text, "Restored 1 file(s) of sms-replies") {
		t.Fatalf("restore: %q", r.Text)
	}
	if e, err := store.Stat(context.Background(), "offsets/4"); err != nil || e.Size != 0 {
		t.Fatalf("offsets/4 after the restore: %+v, %v", e, err)
	}
	if after, err := storage.ReadAll(context.Background(), store, "offsets/3", 0); err != nil || string(after) != string(before) {
		t.Fatalf("committed history touched: %v", err)
	}
}
