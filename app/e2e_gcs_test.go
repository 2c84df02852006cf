package app_test

import (
	"context"
	"fmt"
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
	{"abfss://", func(t *testing.T, dir string) (string, map[string]string, func()) {
		srv := storagetest.NewAzureServer(t, "spark")
		return srv.Location("checkpoints/sms-replies"), azureEnv(srv), func() { srv.Upload(t, dir, "checkpoints/sms-replies") }
	}},
}

// gcsEnv reaches the emulator as a deployment reaches one: STORAGE_EMULATOR_HOST.
func gcsEnv(srv *storagetest.GCSServer) map[string]string {
	return map[string]string{"STORAGE_EMULATOR_HOST": strings.TrimPrefix(srv.URL, "http://")}
}

// azureEnv reaches Azurite as a deployment reaches an account: AZURE_STORAGE_CONNECTION_STRING.
func azureEnv(srv *storagetest.AzureServer) map[string]string {
	return map[string]string{"AZURE_STORAGE_CONNECTION_STRING": srv.Options().Getenv("AZURE_STORAGE_CONNECTION_STRING")}
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

// seedStore is an object store holding the seed world's checkpoint.
type seedStore struct {
	name string
	// open uploads dir to checkpoints/sms-replies, makes the store refuse (403, in its own
	// words) every write under the probe's prefix and, where it can say so without writing,
	// tells streamwatch's identity it may only read. It returns the checkpoint's location, a
	// backup location, the environment and storage options that reach the store, and grant,
	// which lets the identity create and delete the objects backups and repairs need.
	open func(t *testing.T, dir string) (location, backups string, env map[string]string, opts storage.Options, grant func())
	// diagnosed is what the first diagnosis says of access; probed, what the probe's access
	// line says while the empty offsets/4 stops it before its write test; refused, what the
	// write probe's reply says once offsets/4 is quarantined; rediagnosed, what the diagnosis
	// says after that refused write.
	diagnosed   []string
	probed      string
	refused     []string
	rediagnosed []string
}

var seedStores = []seedStore{
	{
		name: "gs://",
		open: func(t *testing.T, dir string) (string, string, map[string]string, storage.Options, func()) {
			srv := storagetest.NewGCSServer(t, "spark")
			srv.Upload(t, dir, "checkpoints/sms-replies")
			// Read-only, as GCS refuses a missing storage.objects.create: testIamPermissions
			// lists only what is held, and an upload answers 403.
			srv.Grant("storage.objects.get", "storage.objects.list")
			srv.DenyPrefix("checkpoints/sms-replies/" + probe.DefaultDir + "/")
			grant := func() {
				srv.Grant("storage.objects.get", "storage.objects.list", "storage.objects.create", "storage.objects.delete")
			}
			return srv.Location("checkpoints/sms-replies"), srv.Location("backups"), gcsEnv(srv), srv.Options(), grant
		},
		diagnosed: []string{"CHECKPOINT_NOT_WRITABLE (confirmed)",
			"streamwatch's identity lacks storage.objects.create and storage.objects.delete in gs://spark (testIamPermissions)", "not for the job's"},
		probed: "✗ access of streamwatch's identity (judged without writing): lacks storage.objects.create",
		// testIamPermissions grants create, yet the real write is refused: the write wins.
		refused: []string{"✓ access of streamwatch's identity (judged without writing): may create and delete objects in gs://spark",
			"access denied (GCS HTTP 403"},
		rediagnosed: []string{"CHECKPOINT_NOT_WRITABLE (confirmed)", "testIamPermissions said streamwatch's identity may write, but a real write was refused"},
	},
	{
		// Judging ADLS ACLs needs the dfs endpoint (getAccessControl), which Azurite lacks, so
		// on abfss:// access is not judged without writing and the probe's write decides: the
		// proxy in front of Azurite refuses it with 403 AuthorizationPermissionMismatch, as
		// Azure refuses a write the identity's role or ACL does not allow.
		name: "abfss://",
		open: func(t *testing.T, dir string) (string, string, map[string]string, storage.Options, func()) {
			srv := storagetest.NewAzureServer(t, "spark")
			srv.Upload(t, dir, "checkpoints/sms-replies")
			srv.DenyPrefix("checkpoints/sms-replies/" + probe.DefaultDir + "/")
			return srv.Location("checkpoints/sms-replies"), srv.Location("backups"), azureEnv(srv), srv.Options(), func() {}
		},
		diagnosed: []string{"cannot be judged without writing"},
		probed:    "cannot be judged without writing",
		refused:   []string{"AuthorizationPermissionMismatch"},
		// The refused write alone, with no access judgment or driver log to corroborate it.
		rediagnosed: []string{"CHECKPOINT_NOT_WRITABLE (likely)", "the write probe and the driver logs tell"},
	},
}

// TestE2ESeedWorldObjectStores is the seed incident with its checkpoint in an object store
// (fake-gcs-server in process through STORAGE_EMULATOR_HOST; Azurite through
// AZURE_STORAGE_CONNECTION_STRING): `diagnose` names the group switch and the empty offsets/4,
// and the unwritable location where the store says so without writing (GCS's
// testIamPermissions); a remediator backs the checkpoint up to the store, the repair's dry run
// names offsets/4, the confirmation moves it into the backup's quarantine, the write probe now
// reaches its write and fails PERMISSION_DENIED, `diagnose` then names the unwritable location
// from that probe on every store, and the restore puts offsets/4 back.
func TestE2ESeedWorldObjectStores(t *testing.T) {
	for _, st := range seedStores {
		t.Run(st.name, func(t *testing.T) { testSeedWorld(t, st) })
	}
}

func testSeedWorld(t *testing.T, st seedStore) {
	kc := seedKafka(t, true)
	base := t.TempDir()
	dir := filepath.Join(base, "sms-replies")
	if err := sparktest.WriteCheckpoint(dir, seedSpec(time.Now().Add(-40*time.Minute))); err != nil {
		t.Fatal(err)
	}
	location, backups, env, opts, grant := st.open(t, dir)
	// Azure stamps each blob's Last-Modified at upload (Azurite cannot backdate it), so the
	// checkpoint looks written now: a short repair.quiet_for, waited out before the
	// confirmation, lets the liveness guard see the stopped query on every store.
	const quietFor = 2 * time.Second
	uploaded := time.Now()
	logPath := filepath.Join(base, "driver.log")
	os.WriteFile(logPath, nil, 0o644)
	quiet := time.Now().Add(-30 * time.Minute) // the driver died with the query
	os.Chtimes(logPath, quiet, quiet)

	extra := strings.Replace(seedConfig(kc, location, logPath), "    probe:\n", "      backup_location: "+backups+"\n    probe:\n      write: true\n", 1) +
		fmt.Sprintf("repair:\n  quiet_for: %s\n", quietFor)
	in := start(t, setup{prefix: testredis.Prefix(), slackExtra: "  remediators: [U0ONCALL]\n", extra: extra, env: env})
	s := in.slack

	r := ask(t, s, "diagnose sms-replies")
	body := r.Text + "\n" + string(r.Blocks)
	for _, cause := range []string{"CONSUMER_GROUP_MISMATCH", "CHECKPOINT_CORRUPT"} {
		if !strings.Contains(r.Text, cause) {
			t.Errorf("verdict lacks %s: %q", cause, r.Text)
		}
	}
	for _, want := range append([]string{"offsets/4 is corrupt", "sms-replies-v2"}, st.diagnosed...) {
		if !strings.Contains(body, want) {
			t.Errorf("the diagnosis lacks %q:\n%s", want, body)
		}
	}
	// The probe stops at the empty offsets/4 before its write test; the access line still says.
	r = ask(t, s, "probe sms-replies")
	if !strings.Contains(string(r.Blocks), st.probed) {
		t.Errorf("the probe's reply lacks %q:\n%s", st.probed, r.Blocks)
	}

	// Access granted: backup, repair dry run, confirm, restore, all on the store.
	grant()
	store, err := storage.Open(location, opts)
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
	wait.For(t, 10*time.Second, "the uploaded checkpoint to be quiet for repair.quiet_for", func() bool { return time.Since(uploaded) > quietFor })
	if r := askAs(t, s, "U0ONCALL", "checkpoint repair sms-replies --confirm "+plan); !strings.Contains(r.Text, "Quarantined 1 file(s) of sms-replies") {
		t.Fatalf("confirm: %q", r.Text)
	}
	if _, err := store.Stat(context.Background(), "offsets/4"); storage.Class(err) != storage.ClassNotFound {
		t.Fatalf("offsets/4 still in the checkpoint: %v", err)
	}
	// With offsets/4 gone the probe reaches its write test, which the store refuses (403).
	refusal := "permission denied writing " + location + "/" + probe.DefaultDir + "/probe-"
	r = ask(t, s, "probe sms-replies")
	for _, want := range append([]string{"FAILED PERMISSION_DENIED: " + refusal}, st.refused...) {
		if !strings.Contains(string(r.Blocks), want) {
			t.Errorf("the write probe's reply lacks %q:\n%s", want, r.Blocks)
		}
	}
	// The diagnosis names the unwritable location from that refused write.
	r = ask(t, s, "diagnose sms-replies")
	body = r.Text + "\n" + string(r.Blocks)
	for _, want := range append([]string{refusal}, st.rediagnosed...) {
		if !strings.Contains(body, want) {
			t.Errorf("the diagnosis after the write probe lacks %q:\n%s", want, body)
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
