package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
)

// driverLog writes a Spark driver log as a live quiet query does: its progress once, then an
// idle line every 200ms while beating; stop and resume stand for a hang and its end.
type driverLog struct {
	path    string
	mu      sync.Mutex
	beating bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

func startDriverLog(t *testing.T, dir string) *driverLog {
	l := &driverLog{path: filepath.Join(dir, "driver.log"), beating: true, stop: make(chan struct{})}
	l.line("INFO MicroBatchExecution: Streaming query made progress: {\"id\":\"8c5f3e0a-3c1e-4d2f-9a51-1f7e2b3c4d5e\",\"runId\":\"11111111-2222-3333-4444-555555555555\",\"timestamp\":\"" +
		time.Now().UTC().Format(time.RFC3339Nano) + "\",\"batchId\":3}")
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-tick.C:
				l.mu.Lock()
				on := l.beating
				l.mu.Unlock()
				if on {
					l.line("INFO MicroBatchExecution: Streaming query has been idle and waiting for new data more than 10000 ms.")
				}
			}
		}
	}()
	t.Cleanup(func() { close(l.stop); l.wg.Wait() })
	return l
}

func (l *driverLog) line(msg string) {
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%s %s\n", time.Now().Format("2006-01-02 15:04:05,000"), msg) // log4j2 ISO8601 layout
	f.Close()
}

func (l *driverLog) set(on bool) {
	l.mu.Lock()
	l.beating = on
	l.mu.Unlock()
}

// TestE2EQuerySilentFromTheHeartbeat: a quiet topic whose driver log has idle lines is no
// incident; when the lines stop, one root after heartbeat_after and the hysteresis, whatever
// the topic does; when they resume, one recovery reply.
func TestE2EQuerySilentFromTheHeartbeat(t *testing.T) {
	w := newSparkWorld(t)
	w.produce(5)
	w.commit(0, time.Time{}) // caught up: nothing waits
	logs := startDriverLog(t, t.TempDir())
	pipe := fmt.Sprintf("    logs:\n      paths: [%q]\n    detect:\n      heartbeat_after: 2s\n", logs.path)
	in := start(t, setup{prefix: testredis.Prefix(), extra: w.config(pipe)})
	s := in.slack
	afterRounds(t, in, 4*time.Second) // four rounds while the query beats
	if n := len(roots(s, "C0PIPE")); n != 0 {
		t.Fatalf("%d roots while the query's idle lines came", n)
	}
	logs.set(false)
	stopped := time.Now()
	waitFor(t, s, "the silent query's root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	root := roots(s, "C0PIPE")[0]
	if d := time.Since(stopped); d < 2*time.Second {
		t.Fatalf("the root came %v after the last line, before heartbeat_after", d)
	}
	if !strings.Contains(root.Text, "the query has said nothing in the driver log for") {
		t.Fatalf("the root: %q", root.Text)
	}
	logs.set(true)
	waitFor(t, s, "one recovery reply", func(s *slackfake.Server) bool {
		return len(threadWith(s, "C0PIPE", root.TS, "Recovered")) == 1
	})
}

// TestE2ELivenessNotWatchedSaysSo: without logs.paths, status says the query's liveness is not
// watched, and why.
func TestE2ELivenessNotWatchedSaysSo(t *testing.T) {
	w := newSparkWorld(t)
	w.produce(5)
	w.commit(0, time.Time{})
	in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
	s := in.slack
	waitFor(t, s, "status to say liveness is not watched", func(s *slackfake.Server) bool {
		r := askIn(t, s, "U0ALICE", "C0PIPE", "status")
		return strings.Contains(r.Text+string(r.Blocks), "sms-replies: liveness is not watched: no driver log is configured (logs.paths, logs.kubernetes)")
	})
}
