package app_test

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// unprivileged is the uid the seed-world binary runs as: nobody when the tests run as root
// (root writes wherever the mount is writable), else the tests' own.
func unprivileged() (uid int, credential *syscall.Credential) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), nil
	}
	return 65534, &syscall.Credential{Uid: 65534, Gid: 65534}
}

// TestE2ESeedWorldFreshStart is the seed incident as a new install first sees it: the
// checkpoint folder (and offsets/, commits/) is root's with mode 0555, streamwatch runs as an
// unprivileged uid, no probe has run, the driver log says nothing, the documented group is idle
// while another group consumes, and the newest offsets file is empty. `diagnose` names all
// three causes, the unwritable location with the owner, mode and uid it judged; with job_user
// set to a uid that may write there (uid 0), the location is not named.
func TestE2ESeedWorldFreshStart(t *testing.T) {
	kc := seedKafka(t, true)
	base := storagetest.SharedTempDir(t)
	dir := filepath.Join(base, "checkpoints", "sms-replies")
	spec := seedSpec(time.Now().Add(-40 * time.Minute))
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(base, "driver.log")
	os.WriteFile(logPath, []byte(time.Now().UTC().Add(-41*time.Minute).Format("2006-01-02 15:04:05")+
		",000 INFO org.apache.spark.SparkContext: Running Spark version 3.5.1\n"), 0o644)
	for _, d := range []string{dir, filepath.Join(dir, "offsets"), filepath.Join(dir, "commits")} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, d := range []string{dir, filepath.Join(dir, "offsets"), filepath.Join(dir, "commits")} {
			os.Chmod(d, 0o755)
		}
	})
	owner := strconv.Itoa(os.Geteuid())
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	uid, cred := unprivileged()
	pipeline := func(jobUser string) string {
		return fmt.Sprintf(`    kafka: {cluster: main, topics: [%s], group: sms-replies-prod}
    checkpoint:
      location: %s
%s    probe: {schedule: "@every 1h"}
    logs: {paths: [%q]}
kafka:
  clusters:
    main: {brokers: [%q], version: "3.6.0", timeout: 3s}
diagnose: {timeout: 10s}
`, seedTopic, dir, jobUser, logPath, kc.ListenAddrs()[0])
	}

	t.Run("streamwatch's own uid", func(t *testing.T) {
		s := newSlack(t, slackfake.Options{})
		startBinary(t, binaryRun{redisURL: testredis.URL(t), slack: s, dir: base, cred: cred, extra: pipeline("")})
		r := ask(t, s, "diagnose sms-replies")
		body := r.Text + "\n" + string(r.Blocks)
		for _, cause := range []string{"CHECKPOINT_NOT_WRITABLE (confirmed)", "CONSUMER_GROUP_MISMATCH", "CHECKPOINT_CORRUPT"} {
			if !strings.Contains(r.Text, cause) {
				t.Errorf("verdict lacks %s: %q", cause, r.Text)
			}
		}
		for _, want := range []string{
			fmt.Sprintf("uid %d groups [", uid), "(streamwatch's own) may not create files in " + dir,
			"owner " + owner + ":", "mode dr-xr-xr-x (0555)", "sms-replies-v2", "offsets/4 is corrupt",
			// the wrong-group finding, worded by commands.MismatchEvidence
			"documented group sms-replies-prod is ", " while sms-replies-v2 consumes " + seedTopic + ": 1 member, lag ",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the reply lacks %q:\n%s", want, body)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 4 {
			t.Errorf("diagnose changed the checkpoint: %d entries", len(entries))
		}
	})
	t.Run("job_user that may write", func(t *testing.T) {
		s := newSlack(t, slackfake.Options{})
		startBinary(t, binaryRun{redisURL: testredis.URL(t), slack: s, dir: base, cred: cred, extra: pipeline("      job_user: {uid: 0, gids: [0]}\n")})
		r := ask(t, s, "diagnose sms-replies")
		body := r.Text + "\n" + string(r.Blocks)
		if strings.Contains(r.Text, "CHECKPOINT_NOT_WRITABLE") || !strings.Contains(r.Text, "CONSUMER_GROUP_MISMATCH") || !strings.Contains(r.Text, "CHECKPOINT_CORRUPT") {
			t.Errorf("verdict %q", r.Text)
		}
		if !strings.Contains(body, "uid 0 groups [0] (job_user) may create files") {
			t.Errorf("the reply does not say whose access it judged:\n%s", body)
		}
	})
}

// TestE2EHealthyWorld: the documented group is live and keeps up, the checkpoint commits
// every 2 s at the offsets the group reads, and the deployed job sets no kafka.group.id. The
// verdict is "healthy", with the missing group id listed as a risk, not a cause.
func TestE2EHealthyWorld(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	kc := seedKafka(t, false)
	stop, err := kc.Consume("sms-replies-prod", seedTopic)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	base := t.TempDir()
	dir := filepath.Join(base, "cp")
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: time.Now().Add(-10 * time.Minute), LatestBatch: 1, LatestCommit: 1,
		Topics: []sparktest.Topic{{Name: seedTopic, Partitions: 3, RecordsPerBatch: 20}}}); err != nil {
		t.Fatal(err)
	}
	// The job: replies keep arriving; every 2 s the query commits a batch up to what arrived.
	var wg sync.WaitGroup
	var mu sync.Mutex
	ends, batch := int64(40), int64(2)
	commit := func() error {
		mu.Lock()
		defer mu.Unlock()
		if err := kc.Produce(ctx, seedTopic, []int{1, 1, 1}, time.Time{}); err != nil {
			return err
		}
		ends++
		err := sparktest.AppendBatch(dir, batch, map[string]map[int32]int64{seedTopic: {0: ends, 1: ends, 2: ends}}, time.Now())
		batch++
		return err
	}
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = commit() // a failed tick is the next tick's to repair
			}
		}
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	deployed := filepath.Join(base, "sms-replies.conf")
	os.WriteFile(deployed, []byte("spark.app.name=sms-replies\nspark.kafka.subscribe="+seedTopic+"\nspark.kafka.bootstrap.servers="+
		kc.ListenAddrs()[0]+"\noption.checkpointLocation=file://"+dir+"\n"), 0o644)
	in := start(t, setup{extra: fmt.Sprintf(`    kafka: {cluster: main, topics: [%s], group: sms-replies-prod}
    checkpoint: {location: %s}
    probe: {schedule: "@every 1h"}
    deployed_config: %s
kafka:
  clusters:
    main: {brokers: [%q], version: "3.6.0", timeout: 3s}
diagnose: {timeout: 10s}
`, seedTopic, dir, deployed, kc.ListenAddrs()[0])})
	wait.For(t, 20*time.Second, "the documented group becoming Stable", func() bool {
		st, _ := kc.GroupState(ctx, "sms-replies-prod")
		return st == "Stable"
	})
	r := ask(t, in.slack, "diagnose sms-replies")
	body := string(r.Blocks)
	if r.Text != "sms-replies: healthy, 1 risk" {
		t.Fatalf("verdict %q\n%s", r.Text, body)
	}
	for _, want := range []string{"is healthy: no live symptom", "Risks", "no kafka.group.id or groupIdPrefix", "newest progress: checkpoint commit of batch"} {
		if !strings.Contains(body, want) {
			t.Errorf("the reply lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "CONSUMER_GROUP_MISMATCH") {
		t.Errorf("the missing group id is named as a cause:\n%s", body)
	}
}
