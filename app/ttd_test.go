package app_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// TestTimeToDetectTable is make bench's time-to-detect table, not a test: for each fault
// injected into an in-process world (kfake, a generated checkpoint, a driver log, the Slack
// fake, a real redis-server), the time from the fault to the incident's root in Slack, over 5
// runs, with the thresholds beside it. It runs when STREAMWATCH_TTD_OUT names the file to write.
func TestTimeToDetectTable(t *testing.T) {
	out := os.Getenv("STREAMWATCH_TTD_OUT")
	if out == "" {
		t.Skip("make bench runs it (STREAMWATCH_TTD_OUT)")
	}
	const runs = 5
	faults := []struct {
		name, thresholds string
		run              func(t *testing.T) time.Duration
	}{
		{"query hung on a quiet topic (its driver log stops)", "detect.heartbeat_after 2s; rounds every 1s, 2 to open", ttdHungQuery},
		{"query stopped on a busy topic (2s batches)", "checkpoint.stale_after auto (5 × 2s, at least 20s); rounds every 1s, 2 to open", ttdStoppedQuery},
		{"checkpoint made unwritable (mode 0555; streamwatch runs as an unprivileged uid)", "probe.schedule @every 1s, write: true; the first failure opens", ttdUnwritable},
		{"the documented group switched (the job commits to another group; 1s batches)", "kafka.stall_after 3s; rounds every 1s, 2 to open", ttdGroupSwitched},
		{"brokers down (connections dropped; the query's offset fetch hangs, its driver log stops)", "detect.heartbeat_after 2s; rounds every 1s, 2 to open", ttdBrokersDown},
		{"batch stalls (2s batches of 1s; stale_after auto)", "batch_slow: max(5 × 1s, 20s); rounds every 1s, 2 to open", ttdBatchStalls},
		{"the Watchdog stops", "alerts.heartbeats every 2s, grace 1s; checked every 1s", ttdWatchdog},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Time to detect\n\n")
	fmt.Fprintf(&b, "From the fault to the incident's root in Slack's fake, %d runs each (`go test -run TestTimeToDetectTable ./app/`, in-process, the thresholds shortened as shown).\n\n", runs)
	fmt.Fprintf(&b, "| fault | thresholds | min | median | max |\n|---|---|---:|---:|---:|\n")
	for _, f := range faults {
		var ds []time.Duration
		for i := range runs {
			t.Run(fmt.Sprintf("%s/%d", f.name, i), func(t *testing.T) { ds = append(ds, f.run(t)) })
		}
		slices.Sort(ds)
		if len(ds) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f s | %.1f s | %.1f s |\n", f.name, f.thresholds, ds[0].Seconds(), ds[len(ds)/2].Seconds(), ds[len(ds)-1].Seconds())
	}
	fmt.Fprintf(&b, "\nBrokers down is detected through the query's own heartbeat (Spark's trigger blocks on the offset fetch, so neither progress nor idle lines come): streamwatch's own rounds judge nothing of a pipeline whose cluster does not answer, so without `logs.paths` this fault is not detected by detection.\n")
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func firstRoot(t *testing.T, s *slackfake.Server, channel string) time.Time {
	t.Helper()
	waitForLong(t, s, 2*time.Minute, "the root", func(s *slackfake.Server) bool { return len(roots(s, channel)) > 0 })
	return time.Now()
}

func ttdHungQuery(t *testing.T) time.Duration {
	w := newSparkWorld(t)
	w.produce(5)
	w.commit(0, time.Time{})
	logs := startDriverLog(t, t.TempDir())
	pipe := fmt.Sprintf("    logs:\n      paths: [%q]\n    detect:\n      heartbeat_after: 2s\n", logs.path)
	in := start(t, setup{prefix: testredis.Prefix(), extra: w.config(pipe)})
	afterRounds(t, in, 2*time.Second)
	logs.set(false)
	fault := time.Now()
	return firstRoot(t, in.slack, "C0PIPE").Sub(fault)
}

func ttdStoppedQuery(t *testing.T) time.Duration {
	w := newSparkWorld(t)
	w.staleAfter = "auto"
	w.produce(5)
	w.commit(0, time.Time{})
	q := w.runBatches(2 * time.Second)
	in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
	afterRounds(t, in, 8*time.Second) // a few batches to learn from
	q.stop()
	w.produce(5)
	fault := q.lastCommit()
	return firstRoot(t, in.slack, "C0PIPE").Sub(fault)
}

func ttdWatchdog(t *testing.T) time.Duration {
	in := start(t, setup{prefix: testredis.Prefix(),
		alertsExtra: "  heartbeats:\n    - match: {alertname: Watchdog}\n      every: 2s\n      channel: C0DEFAULT\n"})
	var last time.Time
	for range 3 {
		last = time.Now()
		in.ok("/webhooks/generic", watchdog())
		began := time.Now()
		wait.For(t, 5*time.Second, "half a second between Watchdogs", func() bool { return time.Since(began) >= 500*time.Millisecond })
	}
	return firstRoot(t, in.slack, "C0DEFAULT").Sub(last)
}

func ttdUnwritable(t *testing.T) time.Duration {
	base := storagetest.SharedTempDir(t)
	dir := filepath.Join(base, "cp")
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: time.Now().Add(-5 * time.Minute), LatestBatch: 3, LatestCommit: 3,
		Topics: []sparktest.Topic{{Name: detectTopic, Partitions: detectParts, RecordsPerBatch: detectPerBatch}}}); err != nil {
		t.Fatal(err)
	}
	uid, cred := unprivileged()
	// The job's checkpoint, writable by streamwatch's uid until the fault.
	if err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(path, uid, uid)
	}); err != nil {
		t.Fatal(err)
	}
	s := newSlack(t, slackfake.Options{})
	prefix := testredis.Prefix()
	p := startBinary(t, binaryRun{redisURL: testredis.URL(t), prefix: prefix, slack: s, dir: base, cred: cred,
		extra: fmt.Sprintf("    checkpoint:\n      location: %s\n    probe: {schedule: \"@every 1s\", write: true}\n", dir)})
	rdb, _ := testredis.Client(t)
	st := state.New(rdb, prefix)
	var last state.ProbeStatus
	defer func() {
		if t.Failed() {
			t.Logf("last probe %+v\n%s", last, p.logs)
		}
	}()
	wait.For(t, 60*time.Second, "a probe that wrote (OK, or DEGRADED: slow on a busy machine)", func() bool {
		last, _ = st.LastProbe(t.Context(), "sms-replies")
		return last.Status == "OK" || last.Status == "DEGRADED"
	})
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	fault := time.Now()
	at := firstRoot(t, s, "C0PIPE")
	if r := roots(s, "C0PIPE")[0]; !strings.Contains(r.Text, "Checkpoint probe failed for sms-replies") {
		t.Fatalf("the root: %q", r.Text)
	}
	return at.Sub(fault)
}

func ttdGroupSwitched(t *testing.T) time.Duration {
	w := newSparkWorld(t)
	w.stallAfter = "3s"
	var mu sync.Mutex
	group := "sms-replies-prod" // the documented group, until the job switches
	w.afterBatch = func(b int64) {
		mu.Lock()
		g := group
		mu.Unlock()
		end := (b + 1) * detectPerBatch
		if err := w.kc.Commit(context.Background(), g, detectTopic, map[int32]int64{0: end, 1: end}); err != nil {
			t.Error(err)
		}
	}
	w.produce(5)
	w.commit(0, time.Time{})
	w.afterBatch(0)
	w.runBatches(time.Second)
	in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
	afterRounds(t, in, 4*time.Second)
	if n := len(roots(in.slack, "C0PIPE")); n != 0 {
		t.Fatalf("%d roots while the documented group kept up", n)
	}
	mu.Lock()
	group = "sms-replies-v2"
	fault := time.Now()
	mu.Unlock()
	at := firstRoot(t, in.slack, "C0PIPE")
	if r := roots(in.slack, "C0PIPE")[0]; !strings.Contains(r.Text, "consumer group sms-replies-prod") {
		t.Fatalf("the root: %q", r.Text)
	}
	return at.Sub(fault)
}

func ttdBrokersDown(t *testing.T) time.Duration {
	w := newSparkWorld(t)
	w.produce(5)
	w.commit(0, time.Time{})
	logs := startDriverLog(t, t.TempDir())
	pipe := fmt.Sprintf("    logs:\n      paths: [%q]\n    detect:\n      heartbeat_after: 2s\n", logs.path)
	in := start(t, setup{prefix: testredis.Prefix(), extra: w.config(pipe)})
	afterRounds(t, in, 2*time.Second)
	w.kc.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		w.kc.KeepControl()
		return nil, errors.New("broker down"), true
	})
	logs.set(false) // the query's trigger hangs on the offset fetch: no progress, no idle line
	fault := time.Now()
	at := firstRoot(t, in.slack, "C0PIPE")
	if r := roots(in.slack, "C0PIPE")[0]; !strings.Contains(r.Text, "the query has said nothing in the driver log") {
		t.Fatalf("the root: %q", r.Text)
	}
	return at.Sub(fault)
}

func ttdBatchStalls(t *testing.T) time.Duration {
	w := newSparkWorld(t)
	w.staleAfter = "auto"
	w.produce(5)
	w.commit(0, time.Time{})
	q := w.runBatches(2 * time.Second)
	in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
	afterRounds(t, in, 10*time.Second) // a few batches to learn from
	q.stop()
	b, committed := q.lastBatch(), q.lastCommit()
	w.produce(detectPerBatch)
	w.plan(b, committed)
	fault := time.Now()
	at := firstRoot(t, in.slack, "C0PIPE")
	if r := roots(in.slack, "C0PIPE")[0]; !strings.Contains(r.Text, fmt.Sprintf("batch %d has run", b+1)) && !strings.Contains(r.Text, "with no checkpoint commit") {
		t.Fatalf("the root: %q", r.Text)
	}
	return at.Sub(fault)
}
