package app_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// Detection end to end (issue 16): kfake holds the pipeline's topic, a generated checkpoint is
// the Spark query the test moves forward or stops, and streamwatch samples every second.

const (
	detectTopic    = "client.replies.sms"
	detectParts    = 2
	detectPerBatch = 5 // records each batch of the query reads per partition
)

// sparkWorld is a pipeline's world: the brokers and the query's checkpoint.
type sparkWorld struct {
	t   *testing.T
	kc  *kafkatest.Cluster
	dir string
	// staleAfter is checkpoint.stale_after ("" is 3s); stallAfter kafka.stall_after ("" is 1h).
	staleAfter, stallAfter string
	// afterBatch, when set, runs after each batch runBatches commits (before it is started).
	afterBatch func(b int64)
}

func newSparkWorld(t *testing.T) *sparkWorld { return newSparkWorldWith(t, nil) }

// newSparkWorldWith is a world whose topic has the given configs (retention.ms, …).
func newSparkWorldWith(t *testing.T, configs map[string]string) *sparkWorld {
	t.Helper()
	kc, err := kafkatest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	if err := kc.CreateTopicWith(context.Background(), detectTopic, detectParts, configs); err != nil {
		t.Fatal(err)
	}
	return &sparkWorld{t: t, kc: kc, dir: filepath.Join(t.TempDir(), "cp")}
}

// produce appends n records to every partition, stamped now.
func (w *sparkWorld) produce(n int) {
	w.t.Helper()
	counts := make([]int, detectParts)
	for i := range counts {
		counts[i] = n
	}
	if err := w.kc.Produce(context.Background(), detectTopic, counts, time.Time{}); err != nil {
		w.t.Fatal(err)
	}
}

// commit makes the query commit batch b now: it read up to offset (b+1)*detectPerBatch of
// every partition. committedAt backdates the commit when it is not zero.
func (w *sparkWorld) commit(b int64, committedAt time.Time) {
	w.t.Helper()
	if committedAt.IsZero() {
		committedAt = time.Now()
	}
	spec := sparktest.Spec{Start: committedAt.Add(-time.Duration(b+1) * time.Second), Interval: time.Second,
		CommitDelay: time.Second, LatestBatch: b, LatestCommit: b,
		Topics:   []sparktest.Topic{{Name: detectTopic, Partitions: detectParts, RecordsPerBatch: detectPerBatch}},
		ModTimes: map[string]time.Time{fmt.Sprintf("commits/%d", b): committedAt}}
	if err := sparktest.WriteCheckpoint(w.dir, spec); err != nil {
		w.t.Fatal(err)
	}
}

// config is the pipeline's settings (more lines of the pipeline in pipe) and the cluster's.
func (w *sparkWorld) config(pipe string) string {
	return fmt.Sprintf(`    kafka:
      cluster: main
      topics: [%s]
      group: sms-replies-prod
      stall_after: %s
%s    checkpoint:
      location: %s
      stale_after: %s
kafka:
  sample_interval: 1s
  clusters:
    main: {brokers: [%q], version: "3.6.0", timeout: 3s}
`, detectTopic, cmp.Or(w.stallAfter, "1h"), pipe, w.dir, cmp.Or(w.staleAfter, "3s"), w.kc.ListenAddrs()[0])
}

// scrape returns the value of the series of /metrics whose name and labels start with
// series (e.g. `streamwatch_pipeline_records_waiting{from="checkpoint",pipeline="sms-replies"}`),
// and whether it is there.
func scrape(t *testing.T, in *instance, series string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(in.opsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil
		}
	}
	return 0, false
}

func genericStatus(title, key, status string) string {
	b, _ := json.Marshal(map[string]any{"source": "test", "title": title, "severity": "Severity 3",
		"status": status, "labels": map[string]string{"alertname": title}, "dedup_key": key})
	return string(b)
}

func threadWith(s *slackfake.Server, ch, ts, prefix string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range replies(s, ch, ts) {
		if strings.HasPrefix(m.Text, prefix) {
			out = append(out, m)
		}
	}
	return out
}

const (
	waitingCheckpoint = `streamwatch_pipeline_records_waiting{from="checkpoint",pipeline="sms-replies"}`
	commitAge         = `streamwatch_pipeline_checkpoint_commit_age_seconds{pipeline="sms-replies"}`
	staleActive       = `streamwatch_pipeline_symptom_active{pipeline="sms-replies",symptom="checkpoint_stale"}`
	observedAt        = `streamwatch_pipeline_observed_timestamp_seconds{pipeline="sms-replies"}`
)

// TestE2EDetectStallJoinRecover is the seed incident as streamwatch now sees it first: the
// query stops committing while replies keep arriving; streamwatch opens the pipeline's
// incident naming the stall, with its diagnosis in the thread; the downstream alert joins that
// thread; the query resumes (one recovery reply); the alert resolves and so does the incident.
// The metrics follow every step.
func TestE2EDetectStallJoinRecover(t *testing.T) {
	w := newSparkWorld(t)
	w.produce(10)
	w.commit(1, time.Time{}) // read up to offset 10: caught up
	in := start(t, setup{extra: w.config("")})
	s := in.slack

	wait.For(t, 20*time.Second, "a round observing the caught-up query", func() bool {
		v, ok := scrape(t, in, waitingCheckpoint)
		return ok && v == 0
	})
	if v, ok := scrape(t, in, staleActive); !ok || v != 0 {
		t.Fatalf("checkpoint_stale = %v (present %v) while caught up", v, ok)
	}

	// The query stops committing; replies keep arriving.
	w.produce(4)
	wait.For(t, 20*time.Second, "the metrics to show 8 records waiting beyond the checkpoint", func() bool {
		v, ok := scrape(t, in, waitingCheckpoint)
		return ok && v == 8
	})
	stopped := time.Now()
	waitFor(t, s, "the detection incident's root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	// How soon, in rounds, is pipeline.TestStepHysteresis's to hold (two rounds open): here the
	// rounds tick on the wall clock of a shared machine, so the delay is reported, not judged.
	t.Logf("the root came %v after the stop (stale_after 3s, rounds every 1s)", time.Since(stopped))
	root := roots(s, "C0PIPE")[0]
	if !strings.Contains(root.Text, "sms-replies: 8 records have waited") || !strings.Contains(root.Text, "with no checkpoint commit") {
		t.Fatalf("root does not name the stall with its numbers: %q", root.Text)
	}
	waitFor(t, s, "the root showing the waiting records and the last commit's age", func(s *slackfake.Server) bool {
		b := string(mustMessage(s, "C0PIPE", root.TS).Blocks)
		return strings.Contains(b, "Detected: checkpoint stale: 8 records wait beyond the checkpoint") &&
			strings.Contains(b, "last checkpoint commit")
	})
	if v, ok := scrape(t, in, staleActive); !ok || v != 1 {
		t.Errorf("checkpoint_stale = %v (present %v) during the stall", v, ok)
	}
	if v, ok := scrape(t, in, commitAge); !ok || v < 3 {
		t.Errorf("commit age = %v (present %v), want ≥ 3s", v, ok)
	}
	waitFor(t, s, "the automatic diagnosis in the thread", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "Automatic diagnosis")) == 1
	})
	// Its chart follows the diagnosis, once: the stall shaded, the peak in its alt text.
	defer func() {
		if t.Failed() {
			t.Log(grepLines(in.logs.String(), "chart", "ERROR", "WARN"))
		}
	}()
	waitFor(t, s, "the chart after the diagnosis", func(s *slackfake.Server) bool { return len(chartsIn(s, "C0PIPE", root.TS)) == 1 })
	first := chartsIn(s, "C0PIPE", root.TS)[0]
	if diag := threadWith(s, "C0PIPE", root.TS, "Automatic diagnosis")[0]; compareTS(first.TS, diag.TS) <= 0 {
		t.Errorf("the chart (%s) came before the diagnosis (%s)", first.TS, diag.TS)
	}
	checkChart(t, s, first, "sms-replies", "records waiting beyond the checkpoint peaked at 8", "the shaded stall began at")

	// While the stall goes on the root is edited with the numbers, the thread left alone.
	w.produce(1)
	waitFor(t, s, "the root edited to 10 waiting records", func(s *slackfake.Server) bool {
		m := mustMessage(s, "C0PIPE", root.TS)
		return m.Edits > 0 && strings.Contains(string(m.Blocks), "10 records wait beyond the checkpoint")
	})

	// The downstream alert joins the thread instead of opening a second incident.
	body := in.ok("/webhooks/generic", genericStatus("client replied sms", "downstream", "firing"))
	if !strings.Contains(body, `"result":"correlated"`) || !strings.Contains(body, `"incident":"INC-1"`) {
		t.Fatalf("the alert's answer: %s", body)
	}
	waitFor(t, s, "the join in the thread", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "Joined this incident")) == 1
	})
	joined := threadWith(s, "C0PIPE", root.TS, "Joined this incident")[0]
	if !strings.Contains(joined.Text, "client replied sms") || !strings.Contains(joined.Text, "same pipeline (sms-replies), open since") {
		t.Fatalf("join note: %q", joined.Text)
	}
	threadBefore := len(replies(s, "C0PIPE", root.TS))

	// The query resumes: batch 2 reads up to 15, the log end.
	w.commit(2, time.Time{})
	waitFor(t, s, "one recovery reply", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "Recovered")) == 1
	})
	rec := threadWith(s, "C0PIPE", root.TS, "Recovered")[0]
	if !strings.Contains(rec.Text, "progress resumed") || !strings.Contains(rec.Text, "Still firing: 1 alert (client replied sms)") {
		t.Fatalf("recovery note: %q", rec.Text)
	}
	// A second chart follows the recovery reply: the stall has its end now.
	waitFor(t, s, "the chart after the recovery", func(s *slackfake.Server) bool { return len(chartsIn(s, "C0PIPE", root.TS)) == 2 })
	second := chartsIn(s, "C0PIPE", root.TS)[1]
	if compareTS(second.TS, rec.TS) <= 0 {
		t.Errorf("the recovery's chart (%s) came before the recovery reply (%s)", second.TS, rec.TS)
	}
	checkChart(t, s, second, "sms-replies", "records waiting beyond the checkpoint peaked at 10", "and ended at", "INC-1 opened at", "recovered at")
	if v, ok := scrape(t, in, waitingCheckpoint); !ok || v != 0 {
		t.Errorf("records waiting after the resume = %v (present %v)", v, ok)
	}
	// More rounds pass: no second recovery, nothing else in the thread, no second root.
	waitObservedRounds(t, in, 3)
	if n := len(replies(s, "C0PIPE", root.TS)); n != threadBefore+2 {
		for _, m := range replies(s, "C0PIPE", root.TS) {
			t.Logf("reply: %q", m.Text)
		}
		t.Fatalf("%d thread replies after the recovery, want %d (the recovery and its chart)", n, threadBefore+2)
	}
	if n := len(roots(s, "C0PIPE")); n != 1 {
		t.Fatalf("%d roots, want 1", n)
	}

	// The alert resolves: nothing fires and streamwatch opened it, so the incident resolves.
	in.ok("/webhooks/generic", genericStatus("client replied sms", "downstream", "resolved"))
	waitFor(t, s, "the incident resolved", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "Resolved")) == 1
	})
	if r := ask(t, s, "incident show INC-1"); !strings.Contains(string(r.Blocks), "resolved") || strings.Contains(r.Text, "while 0 records") {
		t.Errorf("incident show after the resolution: %q %s", r.Text, r.Blocks)
	}
}

// waitObservedRounds waits until detection has judged n more rounds (its observation time,
// in /metrics, moved n times).
func waitObservedRounds(t *testing.T, in *instance, n int) {
	t.Helper()
	last, _ := scrape(t, in, observedAt)
	seen := 0
	wait.For(t, time.Duration(n)*5*time.Second+10*time.Second, fmt.Sprintf("%d more detection rounds", n), func() bool {
		v, ok := scrape(t, in, observedAt)
		if ok && v > last {
			last, seen = v, seen+1
		}
		return seen >= n
	})
}

// TestE2EDetectQuietTopicOpensNothing: a caught-up query on a topic nobody writes to commits
// nothing new (its last commit is old), and that is no stall: nothing waits.
func TestE2EDetectQuietTopicOpensNothing(t *testing.T) {
	w := newSparkWorld(t)
	w.produce(10)
	w.commit(1, time.Now().Add(-time.Hour))
	if err := w.kc.Commit(context.Background(), "sms-replies-prod", detectTopic, map[int32]int64{0: 10, 1: 10}); err != nil {
		t.Fatal(err)
	}
	in := start(t, setup{extra: w.config("")})
	waitObservedRounds(t, in, 5)
	if v, ok := scrape(t, in, commitAge); !ok || v < 3600 {
		t.Fatalf("commit age = %v (present %v): the round did not see the old commit", v, ok)
	}
	for _, sym := range []string{"checkpoint_stale", "group_stalled", "lag"} {
		if v, ok := scrape(t, in, fmt.Sprintf(`streamwatch_pipeline_symptom_active{pipeline="sms-replies",symptom=%q}`, sym)); !ok || v != 0 {
			t.Errorf("%s = %v (present %v) on a quiet topic", sym, v, ok)
		}
	}
	if v, ok := scrape(t, in, `streamwatch_pipeline_records_waiting{from="group",pipeline="sms-replies"}`); !ok || v != 0 {
		t.Errorf("group's records waiting = %v (present %v)", v, ok)
	}
	for _, ch := range []string{"C0PIPE", "C0DEFAULT"} {
		if m := in.slack.Messages(ch); len(m) != 0 {
			t.Fatalf("%s got %d message(s) on a quiet topic: %q", ch, len(m), m[0].Text)
		}
	}
}

// TestE2EDetectQuietTopicBurst: a topic quiet for ten times stale_after (the checkpoint and the
// group caught up, the newest commit that old), then a burst of records. The stall clock
// counts from the burst, not from the old commit: a query that commits the burst within
// stale_after/2 opens nothing, and a query that stopped opens one root about stale_after
// after the burst, saying how long the records have waited, not how long since the commit.
func TestE2EDetectQuietTopicBurst(t *testing.T) {
	const staleAfter = 10 * time.Second
	config := func(w *sparkWorld) string {
		return strings.Replace(w.config(""), "stale_after: 3s", "stale_after: "+staleAfter.String(), 1)
	}
	quiet := func(t *testing.T) *sparkWorld {
		w := newSparkWorld(t)
		w.produce(10)
		w.commit(1, time.Now().Add(-10*staleAfter)) // read up to offset 10 that long ago
		if err := w.kc.Commit(context.Background(), "sms-replies-prod", detectTopic, map[int32]int64{0: 10, 1: 10}); err != nil {
			t.Fatal(err)
		}
		return w
	}
	burst := func(w *sparkWorld) time.Time {
		at := time.Now()
		if err := w.kc.Produce(context.Background(), detectTopic, []int{3, 0}, at); err != nil {
			w.t.Fatal(err)
		}
		return at
	}

	t.Run("the query commits the burst", func(t *testing.T) {
		w := quiet(t)
		in := start(t, setup{extra: config(w)})
		waitObservedRounds(t, in, 2)
		burstAt := burst(w)
		wait.For(t, 20*time.Second, "a round seeing the burst wait beyond the checkpoint", func() bool {
			v, ok := scrape(t, in, waitingCheckpoint)
			return ok && v == 3
		})
		// The query commits the burst (batch 2 reads up to offset 15 on partition 0; the
		// generator writes every partition's offsets alike, and partition 1 holds 10).
		w.commit(2, time.Time{})
		t.Logf("the query committed the burst %v after it (stale_after %s)", time.Since(burstAt), staleAfter)
		wait.For(t, 20*time.Second, "a round seeing the burst committed", func() bool {
			v, ok := scrape(t, in, waitingCheckpoint)
			return ok && v == 0
		})
		waitObservedRounds(t, in, 3)
		for _, sym := range []string{"checkpoint_stale", "group_stalled", "lag"} {
			if v, ok := scrape(t, in, fmt.Sprintf(`streamwatch_pipeline_symptom_active{pipeline="sms-replies",symptom=%q}`, sym)); !ok || v != 0 {
				t.Errorf("%s = %v (present %v) after a burst committed in time", sym, v, ok)
			}
		}
		for _, ch := range []string{"C0PIPE", "C0DEFAULT"} {
			if m := in.slack.Messages(ch); len(m) != 0 {
				t.Fatalf("%s got %d message(s) for a burst committed in time: %q", ch, len(m), m[0].Text)
			}
		}
	})

	t.Run("the query stopped", func(t *testing.T) {
		w := quiet(t)
		in := start(t, setup{extra: config(w)})
		waitObservedRounds(t, in, 2)
		burstAt := burst(w)
		waitFor(t, in.slack, "the detection root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
		t.Logf("the root came %v after the burst (stale_after %s, rounds every 1s, two rounds to open)", time.Since(burstAt), staleAfter)
		root := roots(in.slack, "C0PIPE")[0]
		m := regexp.MustCompile(`sms-replies: 3 records have waited (\S+) with no checkpoint commit`).FindStringSubmatch(root.Text)
		if m == nil {
			t.Fatalf("the root does not say how long the records have waited: %q", root.Text)
		}
		waited, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		// Counted from the burst: at least stale_after, and nowhere near the quiet time
		// since the newest commit (ten times stale_after).
		if waited < staleAfter || waited > time.Since(burstAt)+time.Second {
			t.Errorf("the root says the records waited %s; the burst was %s ago (the commit %s ago)", waited, time.Since(burstAt), 10*staleAfter)
		}
	})
}

// TestE2EDetectCountsOnlyRecordsThatExist: records retention deleted before the query read
// them are not waiting; the metric counts from the partition's log start.
func TestE2EDetectCountsOnlyRecordsThatExist(t *testing.T) {
	w := newSparkWorld(t)
	ctx := context.Background()
	if err := w.kc.Produce(ctx, detectTopic, []int{40, 40}, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	w.commit(0, time.Time{}) // read up to offset 5 of each partition
	if err := w.kc.DeleteBefore(ctx, detectTopic, map[int32]int64{0: 30}); err != nil {
		t.Fatal(err)
	}
	in := start(t, setup{extra: strings.Replace(w.config(""), "stale_after: 3s", "stale_after: 1h", 1)})
	// p0: 30..40 still exist (5..30 are gone); p1: 5..40.
	wait.For(t, 20*time.Second, "45 records waiting beyond the checkpoint, not 70", func() bool {
		v, ok := scrape(t, in, waitingCheckpoint)
		return ok && v == 45
	})
}

// TestE2EDetectLagCountsFromTheLastCaughtUpRound: a backfill writes records stamped two hours
// ago into a caught-up quiet topic. They have not waited two hours: Spark's lag counts from
// the last round that saw the checkpoint caught up, so lag over detect.max_lag (15m) does not
// hold and nothing opens.
func TestE2EDetectLagCountsFromTheLastCaughtUpRound(t *testing.T) {
	w := newSparkWorld(t)
	ctx := context.Background()
	tenMinutesAgo := time.Now().Add(-10 * time.Minute)
	if err := w.kc.Produce(ctx, detectTopic, []int{10, 10}, tenMinutesAgo); err != nil {
		t.Fatal(err)
	}
	w.commit(1, tenMinutesAgo)
	in := start(t, setup{extra: strings.Replace(w.config(""), "stale_after: 3s", "stale_after: 1h", 1)})
	wait.For(t, 20*time.Second, "a round observing the caught-up query", func() bool {
		v, ok := scrape(t, in, waitingCheckpoint)
		return ok && v == 0
	})
	if err := w.kc.Produce(ctx, detectTopic, []int{3, 3}, time.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 20*time.Second, "the backfill waiting beyond the checkpoint", func() bool {
		v, ok := scrape(t, in, waitingCheckpoint)
		return ok && v == 6
	})
	waitObservedRounds(t, in, 3)
	oldest := `streamwatch_pipeline_oldest_waiting_seconds{pipeline="sms-replies"}`
	if v, ok := scrape(t, in, oldest); !ok || v >= 600 {
		t.Errorf("oldest waiting = %vs (present %v): counted from the records' two-hour-old stamps, not from the last caught-up round", v, ok)
	}
	if v, ok := scrape(t, in, `streamwatch_pipeline_symptom_active{pipeline="sms-replies",symptom="lag"}`); !ok || v != 0 {
		t.Errorf("lag = %v (present %v) for a backfill that arrived seconds ago", v, ok)
	}
	if m := in.slack.Messages("C0PIPE"); len(m) != 0 {
		t.Fatalf("a backfill opened %q", m[0].Text)
	}
}

// TestE2EDetectTwoReplicasOneIncident: two replicas sharing Redis and Slack judge each round
// once: one incident, one root, one diagnosis.
func TestE2EDetectTwoReplicasOneIncident(t *testing.T) {
	w := newSparkWorld(t)
	w.produce(10)
	w.commit(1, time.Now().Add(-time.Minute)) // stale since before the start, and records wait
	w.produce(5)
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s, extra: w.config("")}
	a, _ := start(t, su), start(t, su)
	waitFor(t, s, "the detection root, its diagnosis and its chart", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 1 && len(threadWith(s, "C0PIPE", r[0].TS, "Automatic diagnosis")) == 1 && len(chartsIn(s, "C0PIPE", r[0].TS)) == 1
	})
	waitObservedRounds(t, a, 4)
	r := roots(s, "C0PIPE")
	if len(r) != 1 {
		t.Fatalf("%d roots, want 1", len(r))
	}
	for _, m := range replies(s, "C0PIPE", r[0].TS) {
		if !strings.HasPrefix(m.Text, "Automatic diagnosis") && len(m.Files) == 0 {
			t.Errorf("unexpected thread reply while the stall persists: %q", m.Text)
		}
	}
	if n, c := len(replies(s, "C0PIPE", r[0].TS)), len(chartsIn(s, "C0PIPE", r[0].TS)); n != 2 || c != 1 {
		t.Fatalf("%d thread replies with %d charts, want the one diagnosis and one chart", n, c)
	}
	if n := len(s.CallsTo("files.completeUploadExternal")); n != 1 {
		t.Errorf("%d uploads completed by two replicas, want 1", n)
	}
}

// TestE2EPublishGroup: publish_group receives exactly the checkpoint's processed offsets, and
// follows the query; a group with a live member is left alone and `status` says why.
func TestE2EPublishGroup(t *testing.T) {
	ctx := context.Background()
	w := newSparkWorld(t)
	w.produce(20)
	w.commit(1, time.Time{}) // offsets 10, 10
	in := start(t, setup{extra: w.config("      publish_group: sms-replies-spark\n")})
	committed := func(group string) map[int32]int64 {
		m, err := w.kc.Committed(ctx, group, detectTopic)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	equal := func(got map[int32]int64, want int64) bool {
		return len(got) == detectParts && got[0] == want && got[1] == want
	}
	wait.For(t, 20*time.Second, "publish group at the checkpoint's offsets 10/10", func() bool { return equal(committed("sms-replies-spark"), 10) })
	w.commit(2, time.Time{}) // offsets 15, 15
	wait.For(t, 20*time.Second, "publish group following the checkpoint to 15/15", func() bool { return equal(committed("sms-replies-spark"), 15) })
	if got := committed("sms-replies-prod"); len(got) != 0 {
		t.Fatalf("the documented group got commits: %v", got)
	}
	if v, ok := scrape(t, in, `streamwatch_pipeline_records_waiting{from="checkpoint",pipeline="sms-replies"}`); !ok || v != 10 {
		t.Errorf("records waiting beyond the checkpoint = %v (present %v), want 10", v, ok)
	}

	// Someone consumes with the publish group: streamwatch stops committing to it.
	stop, err := w.kc.Consume("sms-replies-spark", detectTopic)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	wait.For(t, 20*time.Second, "the live member joined", func() bool {
		st, _ := w.kc.GroupState(ctx, "sms-replies-spark")
		return st == "Stable"
	})
	// The member reads to the end (20) and commits; streamwatch must not move it back to 15.
	wait.For(t, 20*time.Second, "the member's own commits at 20/20", func() bool { return equal(committed("sms-replies-spark"), 20) })
	var r slackfake.ResponsePost
	wait.For(t, 20*time.Second, "status naming the refusal", func() bool {
		r = ask(t, in.slack, "status")
		return strings.Contains(string(r.Blocks), "publish_group sms-replies-spark not committed")
	})
	if !regexp.MustCompile(`has 1 live member`).MatchString(string(r.Blocks)) {
		t.Errorf("status does not say the group has a live member: %s", r.Blocks)
	}
	waitObservedRounds(t, in, 2)
	if got := committed("sms-replies-spark"); !equal(got, 20) {
		t.Fatalf("publish group moved while a member consumes: %v", got)
	}
	if n := strings.Count(in.logs.String(), "publish_group: not committed"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once", n)
	}
}

// TestE2EDetectJoinsTheAlertsIncident: the downstream alert came first and opened the
// pipeline's incident; the stall streamwatch then finds is posted into it (no second root),
// and its recovery says that the alert still fires, so the incident stays open.
func TestE2EDetectJoinsTheAlertsIncident(t *testing.T) {
	w := newSparkWorld(t)
	w.produce(10)
	w.commit(1, time.Time{})
	in := start(t, setup{extra: w.config("")})
	s := in.slack
	body := in.ok("/webhooks/generic", genericStatus("client replied sms", "downstream", "firing"))
	if !strings.Contains(body, `"result":"opened"`) {
		t.Fatalf("the alert's answer: %s", body)
	}
	waitFor(t, s, "the alert's root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	root := roots(s, "C0PIPE")[0]

	w.produce(3) // the query has stopped
	waitFor(t, s, "detection's join in the alert's thread", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "Joined this incident: sms-replies: 6 records have waited")) == 1
	})
	waitFor(t, s, "the root showing the symptom", func(s *slackfake.Server) bool {
		return strings.Contains(string(mustMessage(s, "C0PIPE", root.TS).Blocks), "Detected: checkpoint stale: 6 records wait beyond the checkpoint")
	})
	if m := mustMessage(s, "C0PIPE", root.TS); !strings.Contains(m.Text, "client replied sms") {
		t.Errorf("the alert's root lost its title: %q", m.Text)
	}
	w.commit(2, time.Time{})
	waitFor(t, s, "the recovery note", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "Recovered")) == 1
	})
	if rec := threadWith(s, "C0PIPE", root.TS, "Recovered")[0]; !strings.Contains(rec.Text, "Still firing: 1 alert") {
		t.Fatalf("recovery note: %q", rec.Text)
	}
	if n := len(roots(s, "C0PIPE")); n != 1 {
		t.Fatalf("%d roots, want 1", n)
	}
	if r := ask(t, s, "incident show INC-1"); !strings.Contains(string(r.Blocks), "Status: open") {
		t.Errorf("the alert's incident closed with the symptom: %s", r.Blocks)
	}
}
