package app_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
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
	mu   sync.Mutex
	last time.Time
	stop func() // stops the query and waits for it
}

func (q *batches) lastCommit() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.last
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
				q.mu.Lock()
				q.last = time.Now()
				q.mu.Unlock()
			}
		}
	}()
	q.stop = sync.OnceFunc(func() { close(stop); <-done })
	w.t.Cleanup(q.stop)
	return q
}
