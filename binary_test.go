package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// builtBinary builds streamwatch once per test run, with the release flags.
func builtBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "streamwatch-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "streamwatch")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=test", "-o", binPath, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is streamwatch running as its own process.
type proc struct {
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	done chan error
}

func startBinary(t *testing.T, su setup, env ...string) *proc {
	t.Helper()
	port, _ := testredis.FreePort()
	cfg := fmt.Sprintf("http: {listen: \"127.0.0.1:%d\"}\nslack: {default_channel: C0DEFAULT, thread_coalesce: 300ms}\nredis: {key_prefix: %s}\npipelines:\n  - {name: sms-replies, channel: C0PIPE}\n", port, su.prefix)
	path := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(path, []byte(cfg), 0o600)
	p := &proc{url: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(builtBinary(t), "serve", "--config", path)
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "SLACK_BOT_TOKEN=" + botToken, "SLACK_APP_TOKEN=" + appToken,
		"REDIS_URL=" + su.redisURL, "STREAMWATCH_WEBHOOK_TOKEN=" + webhookToken, "SLACK_API_URL=" + su.slack.APIURL()}, env...)
	p.cmd.Stderr = p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r, err := http.Get(p.url + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("binary not ready:\n%s", p.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *proc) post(t *testing.T, body string) int {
	req, _ := http.NewRequest("POST", p.url+"/webhooks/generic", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+webhookToken)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	return r.StatusCode
}

// TestBinaryGracefulShutdown: SIGTERM → the process drains and exits 0 within 10 s, and what
// it accepted is in Slack.
func TestBinaryGracefulShutdown(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	p := startBinary(t, setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s})
	if code := p.post(t, generic("client replied sms", "term")); code != 200 {
		t.Fatalf("webhook %d", code)
	}
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, p.logs)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10 s after SIGTERM\n%s", p.logs)
	}
	t.Logf("exited %v after SIGTERM", time.Since(began))
	if !strings.Contains(p.logs.String(), `"msg":"stopped"`) {
		t.Fatalf("no clean stop in the logs:\n%s", p.logs)
	}
}

// TestBinaryReplicaKilledMidDelivery: a replica holding undelivered outbox entries is killed
// with SIGKILL; another replica claims them and delivers each exactly once.
func TestBinaryReplicaKilledMidDelivery(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s}
	s.FailNext("chat.postMessage", 100000, slackfake.Fault{Status: 500})
	a := startBinary(t, su, "STREAMWATCH_OUTBOX_CLAIM_AFTER=1s")
	for i := 1; i <= 5; i++ {
		if code := a.post(t, generic(fmt.Sprintf("ReplyPipeline%d", i), fmt.Sprint("kill-", i))); code != 200 {
			t.Fatalf("webhook %d", code)
		}
	}
	// A has taken the entries and is retrying them against a failing Slack.
	waitFor(t, s, "A's failing attempts", func(s *slackfake.Server) bool { return len(s.CallsTo("chat.postMessage")) >= 5 })
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-a.done
	s.ClearFaults("chat.postMessage")
	startBinary(t, su, "STREAMWATCH_OUTBOX_CLAIM_AFTER=1s")
	waitFor(t, s, "five roots from the survivor", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 5 })
	seen := map[string]int{}
	for _, m := range roots(s, "C0DEFAULT") {
		seen[strings.Fields(m.Text)[1]]++
	}
	for i := 1; i <= 5; i++ {
		if n := seen[fmt.Sprintf("INC-%d:", i)]; n != 1 {
			t.Fatalf("INC-%d posted %d times: %v", i, n, seen)
		}
	}
}

// TestBinaryTwoReplicasOneIncident: two streamwatch processes against one Redis and one Slack
// fake; 1,000 concurrent duplicates split between them make one incident and one root message.
func TestBinaryTwoReplicasOneIncident(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s}
	a, b := startBinary(t, su), startBinary(t, su)
	const n = 1000
	codes := make(chan int, n)
	concurrently(n, 16, func(i int) {
		p := a
		if i%2 == 1 {
			p = b
		}
		req, _ := http.NewRequest("POST", p.url+"/webhooks/generic", strings.NewReader(generic("client replied sms", "two-processes")))
		req.Header.Set("Authorization", "Bearer "+webhookToken)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			codes <- 0
			return
		}
		r.Body.Close()
		codes <- r.StatusCode
	})
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Fatalf("an alert was answered %d", c)
		}
	}
	waitFor(t, s, "one root counting 1000", func(s *slackfake.Server) bool {
		r := roots(s, "C0DEFAULT")
		return len(r) == 1 && strings.Contains(r[0].Text, "1000 occurrences")
	})
	if r := roots(s, "C0DEFAULT"); echoes(s, "C0DEFAULT", r[0].TS) != 0 {
		t.Fatalf("duplicates posted thread replies: %q", threadTexts(s, "C0DEFAULT", r[0].TS))
	}
	if r := roots(s, "C0DEFAULT"); len(r) != 1 {
		t.Fatalf("%d root messages, want 1", len(r))
	}
}
