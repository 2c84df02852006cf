package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/testclock"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// TestWatchReportsOnce: a watch reports exactly once, when the checkpoint commits a new batch
// or the group's commits advance, or when its time runs out; into the incident's thread when
// it has one, else into the channel.
func TestWatchReportsOnce(t *testing.T) {
	ctx := context.Background()
	topic := sparktest.Topic{Name: "client.replies.sms", Partitions: 2, RecordsPerBatch: 5}
	checkpointAt := func(t *testing.T, dir string, batch int64) {
		t.Helper()
		if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: time.Now().Add(-time.Hour), LatestBatch: batch, LatestCommit: batch,
			Topics: []sparktest.Topic{topic}}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name     string
		incident bool
		change   func(t *testing.T, dir string, b *brokers, c *testclock.Clock)
		want     string
	}{
		{"a new checkpoint commit", false, func(t *testing.T, dir string, _ *brokers, _ *testclock.Clock) { checkpointAt(t, dir, 4) },
			"recovered sms-replies after 30m0s: {batch=3 committed=200 lag=40} → {batch=4 committed=200 lag=40}"},
		{"the group commits again", true, func(t *testing.T, _ string, b *brokers, _ *testclock.Clock) {
			b.set(map[int32]int64{0: 130, 1: 130}, map[int32]int64{0: 125, 1: 120})
		}, "recovered sms-replies after 30m0s: {batch=3 committed=200 lag=40} → {batch=3 committed=245 lag=15}"},
		{"time runs out", true, func(t *testing.T, _ string, _ *brokers, c *testclock.Clock) { c.Add(31 * time.Minute) },
			"no_progress sms-replies after 30m0s: {batch=3 committed=200 lag=40} → {batch=3 committed=200 lag=40}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, clk := newStore(t)
			dir := filepath.Join(t.TempDir(), "cp")
			checkpointAt(t, dir, 3)
			b := &brokers{logEnd: map[int32]int64{0: 120, 1: 120}, commit: map[int32]int64{0: 100, 1: 100}}
			cfg := parseConfig(t, fmt.Sprintf("    kafka: {cluster: main, topics: [%s], group: sms-replies-prod}\n    checkpoint: {location: %s}\n", topic.Name, dir),
				"kafka:\n  clusters:\n    main: {brokers: [\"127.0.0.1:9092\"]}\n")
			w := &pipeline.Watcher{Config: cfg, Store: st, Checkpoints: &pipeline.Checkpoints{Config: cfg}, Kafka: b, Now: clk.Now, Words: watchWords}
			incident := ""
			if c.incident {
				out, err := st.RecordAlert(ctx, state.AlertRecord{Key: "k", Fingerprint: "fp", Title: "client replied sms", Severity: 3,
					Pipeline: "sms-replies", Channel: "C0PIPE", Source: "test"})
				if err != nil {
					t.Fatal(err)
				}
				incident = out.Incident
			}
			base, err := w.StartWatch(ctx, "sms-replies", incident, "C0PIPE", "alice", 30*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if want := "{batch=3 committed=200 lag=40}"; progressFields(base) != want {
				t.Fatalf("baseline %s, want %s", progressFields(base), want)
			}
			outbox(t, st) // the incident's root
			if err := w.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if got := outbox(t, st); len(got) != 0 {
				t.Fatalf("reported before anything changed: %q", got)
			}
			c.change(t, dir, b, clk)
			for range 2 {
				if err := w.Tick(ctx); err != nil {
					t.Fatal(err)
				}
			}
			got := outbox(t, st)
			want := "notice C0PIPE: " + c.want
			if c.incident {
				want = "event " + incident + " remediation: " + c.want
			}
			if len(got) != 1 || got[0] != want {
				t.Fatalf("reports %q, want once %q", got, want)
			}
			if ws, _ := st.Watches(ctx); len(ws) != 0 {
				t.Fatalf("the watch is still on: %+v", ws)
			}
		})
	}
}

// TestWatchUnknownPipeline: a watch on a pipeline the configuration does not name is refused.
func TestWatchUnknownPipeline(t *testing.T) {
	st, clk := newStore(t)
	cfg := parseConfig(t, "", "")
	w := &pipeline.Watcher{Config: cfg, Store: st, Checkpoints: &pipeline.Checkpoints{Config: cfg}, Now: clk.Now}
	if _, err := w.StartWatch(context.Background(), "nope", "", "C0PIPE", "alice", time.Minute); err == nil || !strings.Contains(err.Error(), "unknown pipeline") {
		t.Fatalf("err = %v", err)
	}
}

// TestWatchCountsOnlyWaitingTime: a watch's time counts only while records waited for the
// query. Nothing waiting when it runs out is no failed fix; records that began to wait late
// in the watch get its whole length; records that waited through it make it report the fix
// did not take.
func TestWatchCountsOnlyWaitingTime(t *testing.T) {
	ctx := context.Background()
	const topic = "client.replies.sms"
	cases := []struct {
		name   string
		before func(t *testing.T, kc *kafkatest.Cluster, start time.Time) // before the time runs out
		steps  []time.Duration                                            // clock moves, a tick after each
		want   []string                                                   // the report after each step ("" none)
	}{
		{"nothing waited: a quiet topic", func(*testing.T, *kafkatest.Cluster, time.Time) {}, []time.Duration{31 * time.Minute},
			[]string{"notice C0PIPE: nothing_waited sms-replies after 30m0s: {batch=1 waiting=0} → {batch=1 waiting=0}"}},
		{"records began to wait 5 minutes before the end: they get the watch's whole length",
			func(t *testing.T, kc *kafkatest.Cluster, start time.Time) {
				if err := kc.Produce(ctx, topic, []int{3, 3}, start.Add(26*time.Minute)); err != nil {
					t.Fatal(err)
				}
			}, []time.Duration{31 * time.Minute, 25 * time.Minute},
			[]string{"", "notice C0PIPE: no_progress sms-replies after 30m0s: {batch=1 waiting=0} → {batch=1 waiting=6}"}},
		{"records waited through the watch", func(t *testing.T, kc *kafkatest.Cluster, start time.Time) {
			if err := kc.Produce(ctx, topic, []int{3, 3}, start.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
		}, []time.Duration{31 * time.Minute},
			[]string{"notice C0PIPE: no_progress sms-replies after 30m0s: {batch=1 waiting=0} → {batch=1 waiting=6}"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, _ := newStore(t)
			kc, cs, _ := startKafka(t, topic, 2)
			start := time.Now()
			if err := kc.Produce(ctx, topic, []int{10, 10}, start.Add(-2*time.Hour)); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "cp")
			if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: start.Add(-2 * time.Hour), LatestBatch: 1, LatestCommit: 1,
				Topics: []sparktest.Topic{{Name: topic, Partitions: 2, RecordsPerBatch: 5}}}); err != nil {
				t.Fatal(err)
			}
			cfg := parseConfig(t, fmt.Sprintf("    kafka: {cluster: main, topics: [%s], group: sms-replies-prod}\n    checkpoint: {location: %s}\n", topic, dir),
				"kafka:\n  clusters:\n    main: {brokers: [\"127.0.0.1:9092\"]}\n")
			clk := testclock.New(start)
			w := &pipeline.Watcher{Config: cfg, Store: st, Checkpoints: &pipeline.Checkpoints{Config: cfg, Kafka: cs}, Kafka: cs, Now: clk.Now, Words: watchWords}
			if _, err := w.StartWatch(ctx, "sms-replies", "", "C0PIPE", "alice", 30*time.Minute); err != nil {
				t.Fatal(err)
			}
			c.before(t, kc, start)
			for i, d := range c.steps {
				clk.Add(d)
				if err := w.Tick(ctx); err != nil {
					t.Fatal(err)
				}
				got := outbox(t, st)
				if c.want[i] == "" && len(got) != 0 || c.want[i] != "" && (len(got) != 1 || got[0] != c.want[i]) {
					t.Fatalf("step %d: reports %q, want %q", i+1, got, c.want[i])
				}
			}
		})
	}
}

// watchWords words a watch's report as its end and fields, for tests to read (the app's words
// are commands.WatchReport's, tested there).
func watchWords(r pipeline.WatchReport) string {
	return fmt.Sprintf("%s %s after %s: %s → %s", r.End, r.Pipeline, r.For, progressFields(r.Base), progressFields(r.Now))
}

// progressFields lays out the signals a Progress has.
func progressFields(p pipeline.Progress) string {
	var f []string
	if p.HasBatch {
		f = append(f, fmt.Sprintf("batch=%d", p.Batch))
	}
	if p.HasWaiting {
		f = append(f, fmt.Sprintf("waiting=%d", p.Waiting))
	}
	if p.HasCommitted {
		f = append(f, fmt.Sprintf("committed=%d lag=%d", p.Committed, p.Lag))
	}
	return "{" + strings.Join(f, " ") + "}"
}
