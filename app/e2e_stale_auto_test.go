package app_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// TestE2EStaleAfterAuto: with checkpoint.stale_after: auto, a query with 2-second batches that
// stops is a root once it is stale after 20s (a fixed 10m would wait ten minutes; the time it
// takes is in make bench's time-to-detect table: 23s); a query
// with a 15-minute trigger whose records have waited 11 minutes since its last batch is none
// (a fixed 10m would page).
func TestE2EStaleAfterAuto(t *testing.T) {
	t.Run("2s batches", func(t *testing.T) {
		w := newSparkWorld(t)
		w.staleAfter = "auto"
		w.produce(5)
		w.commit(0, time.Time{})
		q := w.runBatches(2 * time.Second)
		in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
		s := in.slack
		// Learning needs a few batches; then the query stops with records waiting.
		rdb, _ := testredis.Client(t)
		st := state.New(rdb, in.prefix)
		defer func() {
			if t.Failed() {
				t.Log(grepLines(in.logs.String(), "commit", "WARN", "ERROR"))
			}
		}()
		wait.For(t, 30*time.Second, "a learned interval", func() bool {
			h, err := st.CommitHistory(context.Background(), "sms-replies")
			return err == nil && len(h) >= 5
		})
		q.stop()
		w.produce(5)
		waitForLong(t, s, 60*time.Second, "the stale root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
		// Not before the learned threshold; how soon after it is make bench's time-to-detect
		// table (no wall-clock upper bound in a test).
		since := time.Since(q.lastCommit())
		if since < 20*time.Second {
			t.Fatalf("the root came %v after the last commit, before the learned threshold (20s)", since)
		}
		root := roots(s, "C0PIPE")[0]
		waitFor(t, s, "the root to say the learned interval", func(s *slackfake.Server) bool {
			return strings.Contains(string(mustMessage(s, "C0PIPE", root.TS).Blocks), "stale after 20s (auto: 5 × the learned batch interval 2s")
		})
	})
	t.Run("15-minute trigger", func(t *testing.T) {
		w := newSparkWorld(t)
		w.staleAfter = "auto"
		lastCommit := time.Now().Add(-11 * time.Minute)
		if err := w.kc.Produce(context.Background(), detectTopic, []int{5, 5}, lastCommit.Add(-16*time.Minute)); err != nil {
			t.Fatal(err)
		}
		w.commit(0, lastCommit) // its last batch read them
		if err := w.kc.Produce(context.Background(), detectTopic, []int{3, 3}, lastCommit.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		prefix := testredis.Prefix()
		rdb, _ := testredis.Client(t)
		st := state.New(rdb, prefix)
		for b := range int64(4) { // the history a day of rounds left: batches 15 minutes apart
			if err := st.NoteCommit(context.Background(), "sms-replies", state.Commit{Batch: b - 3, At: lastCommit.Add(time.Duration(b-3) * 15 * time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
		in := start(t, setup{prefix: prefix, extra: w.config("")})
		afterRounds(t, in, 4*time.Second)
		if n := len(roots(in.slack, "C0PIPE")); n != 0 {
			t.Fatalf("%d roots between a 15-minute trigger's batches", n)
		}
	})
}

// batches is a running query committing a batch every interval (sparkWorld.runBatches).
type batches struct {
	mu    sync.Mutex
	last  time.Time
	batch int64  // the last batch committed
	stop  func() // stops the query and waits for it
}

func (q *batches) lastCommit() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.last
}

func (q *batches) lastBatch() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.batch
}

// runBatches starts the query: every interval it produces a batch's records and commits the
// next batch, reading them. It stops with stop, or when the test ends.
func (w *sparkWorld) runBatches(interval time.Duration) *batches {
	q := &batches{}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for b := int64(1); ; b++ {
			select {
			case <-stop:
				return
			case <-tick.C:
				w.produce(detectPerBatch)
				w.commit(b, time.Time{})
				if w.afterBatch != nil {
					w.afterBatch(b)
				}
				q.mu.Lock()
				q.last, q.batch = time.Now(), b
				q.mu.Unlock()
			}
		}
	}()
	q.stop = sync.OnceFunc(func() { close(stop); <-done })
	w.t.Cleanup(q.stop)
	return q
}

// plan makes the query plan batch b+1 now (offsets/<b+1>, which reads the records produced
// since) without committing it; batch b stays committed at committedAt.
func (w *sparkWorld) plan(b int64, committedAt time.Time) {
	w.t.Helper()
	spec := sparktest.Spec{Start: committedAt.Add(-time.Duration(b+1) * time.Second), Interval: time.Second,
		CommitDelay: time.Second, LatestBatch: b + 1, LatestCommit: b,
		Topics:   []sparktest.Topic{{Name: detectTopic, Partitions: detectParts, RecordsPerBatch: detectPerBatch}},
		ModTimes: map[string]time.Time{fmt.Sprintf("commits/%d", b): committedAt, fmt.Sprintf("offsets/%d", b+1): time.Now()}}
	if err := sparktest.WriteCheckpoint(w.dir, spec); err != nil {
		w.t.Fatal(err)
	}
}

// TestE2EBatchSlow: a running query with 2s batches that each take 1s (stale_after: auto)
// plans a batch that never commits: one root naming the slow batch, how long it has run and
// its usual duration, not before the threshold (max(5 × 1s, 20s)); the batch commits: one
// recovery reply.
func TestE2EBatchSlow(t *testing.T) {
	w := newSparkWorld(t)
	w.staleAfter = "auto"
	w.produce(5)
	w.commit(0, time.Time{})
	q := w.runBatches(2 * time.Second)
	in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
	s := in.slack
	rdb, _ := testredis.Client(t)
	st := state.New(rdb, in.prefix)
	wait.For(t, 30*time.Second, "a learned batch duration", func() bool {
		h, err := st.CommitHistory(context.Background(), "sms-replies")
		if err != nil {
			return false
		}
		n := 0
		for _, c := range h {
			if c.Took > 0 {
				n++
			}
		}
		return n >= 4
	})
	if n := len(roots(s, "C0PIPE")); n != 0 {
		t.Fatalf("%d roots while the batches ran at their usual pace", n)
	}
	q.stop()
	b, committed := q.lastBatch(), q.lastCommit()
	w.produce(detectPerBatch)
	w.plan(b, committed)
	planned := time.Now()
	waitForLong(t, s, 60*time.Second, "the slow batch's root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	if d := time.Since(planned); d < 20*time.Second {
		t.Fatalf("the root came %v after the batch was planned, before its threshold (20s)", d)
	}
	root := roots(s, "C0PIPE")[0]
	want := fmt.Sprintf("batch %d running for ", b+1)
	waitFor(t, s, "the root to name the slow batch with its evidence", func(s *slackfake.Server) bool {
		m := string(mustMessage(s, "C0PIPE", root.TS).Blocks)
		return strings.Contains(m, fmt.Sprintf("sms-replies: batch %d has run ", b+1)) && strings.Contains(m, "its usual duration is 1s") &&
			strings.Contains(m, want) && strings.Contains(m, "(usual 1s; slow after 20s: 5 × the usual batch duration, at least 20s)")
	})
	w.commit(b+1, time.Time{})
	waitFor(t, s, "one recovery reply", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "Recovered")) == 1
	})
}
