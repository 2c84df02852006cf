package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/logbuf"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// builtBinary builds the release binary once per test run, with `make build`.
func builtBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "streamwatch-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "streamwatch")
		cmd := exec.Command("make", "-C", "..", "build", "BIN="+binPath, "VERSION=test")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("make build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// proc is streamwatch running as its own process.
type proc struct {
	cmd    *exec.Cmd
	url    string
	logs   *logbuf.Buffer
	exited chan struct{} // closed when the process has exited; err is then its Wait's
	err    error
}

// binaryRun is how a test runs the binary.
type binaryRun struct {
	redisURL, prefix string
	slack            *slackfake.Server
	extra            string // the pipeline's keys and more, appended to the configuration
	redisExtra       string // more keys of the redis section, after key_prefix: ", min_replicas_acked: 1"
	flags            []string
	env              []string
	// dir holds the configuration (and a copy of the binary when cred is set); "" a temporary
	// folder.
	dir  string
	cred *syscall.Credential // nil: as the tests' user
}

// startedAt finds the webhook address in the start-up line of a JSON log.
var startedAt = regexp.MustCompile(`"msg":"streamwatch starting"[^\n]*"http":"([^"]+)"`)

// startBinary runs the built binary, listening on a port it picks itself (http.listen
// 127.0.0.1:0) and says in its log, and waits until it is ready. The process gets SIGTERM
// (and SIGKILL 15 s later) when the test ends.
func startBinary(t *testing.T, r binaryRun) *proc {
	t.Helper()
	if r.dir == "" {
		r.dir = t.TempDir()
	}
	bin := builtBinary(t)
	if r.cred != nil {
		// Another uid must be able to run it: a copy in dir, which every user may search.
		bin = filepath.Join(r.dir, "streamwatch")
		if _, err := os.Stat(bin); err != nil {
			data, err := os.ReadFile(builtBinary(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if r.prefix == "" {
		r.prefix = testredis.Prefix()
	}
	cfg := fmt.Sprintf(`http: {listen: "127.0.0.1:0"}
slack: {default_channel: C0DEFAULT, thread_coalesce: 300ms}
redis: {key_prefix: %s%s}
pipelines:
  - name: sms-replies
    channel: C0PIPE
%s`, r.prefix, r.redisExtra, r.extra)
	f, err := os.CreateTemp(r.dir, "config-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(cfg); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &proc{logs: &logbuf.Buffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"serve", "--config", f.Name()}, r.flags...)...)
	p.cmd.Dir = r.dir
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "SLACK_BOT_TOKEN=" + botToken, "SLACK_APP_TOKEN=" + appToken,
		"REDIS_URL=" + r.redisURL, "STREAMWATCH_WEBHOOK_TOKEN=" + webhookToken, "SLACK_API_URL=" + r.slack.APIURL()}, r.env...)
	p.cmd.Stderr = p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(15 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	exited := func() bool {
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	}
	ready := func() bool {
		if exited() {
			return true
		}
		if p.url == "" {
			m := startedAt.FindStringSubmatch(p.logs.String())
			if m == nil {
				return false
			}
			p.url = "http://" + m[1]
		}
		resp, err := http.Get(p.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	if err := wait.Until(context.Background(), 20*time.Second, "the binary saying where it listens and /readyz answering 200", ready); err != nil {
		t.Fatalf("%v\n%s", err, p.logs)
	}
	if exited() {
		t.Fatalf("streamwatch exited before it was ready: %v\n%s", p.err, p.logs)
	}
	return p
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
	p := startBinary(t, binaryRun{redisURL: testredis.URL(t), slack: s})
	if code := p.post(t, generic("client replied sms", "term")); code != 200 {
		t.Fatalf("webhook %d", code)
	}
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		if err := p.err; err != nil {
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
	run := binaryRun{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s}
	s.FailNext("chat.postMessage", 100000, slackfake.Fault{Status: 500})
	a := startBinary(t, withEnv(run, "STREAMWATCH_OUTBOX_CLAIM_AFTER=1s"))
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
	<-a.exited
	s.ClearFaults("chat.postMessage")
	startBinary(t, withEnv(run, "STREAMWATCH_OUTBOX_CLAIM_AFTER=1s"))
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
	run := binaryRun{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s}
	a, b := startBinary(t, run), startBinary(t, run)
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

// withEnv is r with more environment variables.
func withEnv(r binaryRun, env ...string) binaryRun {
	r.env = append(slices.Clip(r.env), env...)
	return r
}

// TestReleaseBinaryLeavesOutTheFakes: the binary `make build` writes links none of the demo's
// stand-ins (miniredis and the gopher-lua it runs scripts with, kfake, the Slack fake), and
// says so to `go version -m`; its demo command says it is not there.
func TestReleaseBinaryLeavesOutTheFakes(t *testing.T) {
	bin := builtBinary(t)
	out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/IBM/sarama") {
		t.Fatalf("go version -m lists no dependency:\n%s", out)
	}
	deps, err := exec.Command("go", "list", "-deps", "-tags", "nodemo", "github.com/streamwatch/streamwatch").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, deps)
	}
	for _, fake := range []string{"kfake", "miniredis", "gopher-lua", "slackfake", "internal/demo", "kafkatest", "sparktest", "storagetest"} {
		if strings.Contains(string(out), fake) {
			t.Errorf("go version -m %s lists %s", bin, fake)
		}
		if strings.Contains(string(deps), fake) {
			t.Errorf("the release build imports %s", fake)
		}
	}
	cmd := exec.Command(bin, "demo")
	msg, err := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(msg), "this build has no demo") {
		t.Fatalf("demo in the release binary: %v\n%s", err, msg)
	}
}
