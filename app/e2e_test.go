package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/app"
	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/internal/logbuf"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// End-to-end tests: the whole program (app.New, Run) in-process against a real redis-server
// and the Slack fake, on listeners each test opens itself.

const (
	botToken     = "xoxb-e2e-bot-token-7f3a"
	appToken     = "xapp-e2e-app-token-9c1d"
	webhookToken = "whk-e2e-secret-5b2e"
)

// instance is one running streamwatch.
type instance struct {
	t      *testing.T
	url    string
	opsURL string // /metrics, /healthz, /readyz: url, or the metrics listener's
	slack  *slackfake.Server
	logs   *logbuf.Buffer
	cancel context.CancelFunc
	done   chan error
	env    map[string]string
	prefix string // redis.key_prefix
}

type setup struct {
	redisURL    string
	prefix      string
	coalesce    string
	slack       *slackfake.Server
	extra       string // appended YAML
	slackExtra  string // more keys of the slack section, each line indented by two spaces
	alertsExtra string // more keys of the alerts section, each line indented by two spaces
	redisExtra  string // more keys of the redis section, each line indented by two spaces
	metrics     bool   // serve /metrics, /healthz and /readyz on a listener of their own (http.metrics_listen)
	env         map[string]string
	noWait      bool               // return without waiting until /readyz says ready
	options     func(*app.Options) // changes the app's options (timeouts) before New
	configFile  string             // when set, the configuration is written there and loaded as serve loads it
}

func newSlack(t *testing.T, opts slackfake.Options) *slackfake.Server {
	t.Helper()
	opts.BotToken, opts.AppToken = botToken, appToken
	opts.RedeliverUnacked = true // as Slack does after 3 s without an ack
	s := slackfake.New(opts)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// listen opens a loopback listener on a port the kernel picks; the app serves it and closes it.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// start builds the app as `streamwatch serve` does (the configuration parsed, the secrets read
// from the environment) and runs it until the test ends.
func start(t *testing.T, su setup) *instance {
	t.Helper()
	if su.redisURL == "" {
		su.redisURL = testredis.URL(t)
	}
	if su.prefix == "" {
		su.prefix = testredis.Prefix()
	}
	if su.coalesce == "" {
		su.coalesce = "300ms"
	}
	if su.slack == nil {
		su.slack = newSlack(t, slackfake.Options{})
	}
	httpExtra := ""
	if su.metrics {
		httpExtra = "  metrics_listen: \"127.0.0.1:0\"\n"
	}
	yaml := fmt.Appendf(nil, `http:
  listen: "127.0.0.1:0"
  max_body_bytes: 65536
%sslack:
  default_channel: C0DEFAULT
  thread_coalesce: %s
%sredis:
  key_prefix: %s
%salerts:
%s  routes:
    - match_re: {alertname: "^(client replied sms|ReplyPipeline.*)$"}
      pipeline: sms-replies
pipelines:
  - name: sms-replies
    channel: C0PIPE
%s`, httpExtra, su.coalesce, su.slackExtra, su.prefix, su.redisExtra, su.alertsExtra, su.extra)
	var cfg *config.Config
	var err error
	if su.configFile != "" {
		if err := os.WriteFile(su.configFile, yaml, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err = config.Load(su.configFile)
	} else {
		cfg, err = config.Parse(yaml)
	}
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"SLACK_BOT_TOKEN": botToken, "SLACK_APP_TOKEN": appToken, "REDIS_URL": su.redisURL,
		"STREAMWATCH_WEBHOOK_TOKEN": webhookToken, "SLACK_API_URL": su.slack.APIURL(),
	}
	for k, v := range su.env {
		env[k] = v
	}
	getenv := func(k string) string { return env[k] }
	sec, err := config.LoadSecrets(getenv, cfg.SecretNeeds())
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t, slack: su.slack, logs: &logbuf.Buffer{}, done: make(chan error, 1), env: env, prefix: su.prefix}
	opt := app.Options{Config: cfg, Secrets: sec, Getenv: getenv, Version: "e2e", Listener: listen(t),
		Log: slog.New(slog.NewJSONHandler(in.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	in.url = "http://" + opt.Listener.Addr().String()
	in.opsURL = in.url
	if su.metrics {
		opt.MetricsListener = listen(t)
		in.opsURL = "http://" + opt.MetricsListener.Addr().String()
	}
	if su.options != nil {
		su.options(&opt)
	}
	a, err := app.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	in.cancel = cancel
	go func() { in.done <- a.Run(ctx) }()
	t.Cleanup(in.stop)
	if !su.noWait {
		in.waitReady()
	}
	return in
}

// stop ends Run and waits for it, which waits for everything the app started.
func (in *instance) stop() {
	in.cancel()
	select {
	case err := <-in.done:
		if err != nil {
			in.t.Errorf("Run returned %v", err)
		}
		in.done <- nil
	case <-time.After(15 * time.Second):
		in.t.Errorf("streamwatch did not stop within 15s")
	}
}

// readyz is /readyz's status and body.
func (in *instance) readyz() (int, string) {
	resp, err := http.Get(in.opsURL + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitReady waits until /readyz answers 200.
func (in *instance) waitReady() {
	in.t.Helper()
	var last string
	err := wait.Until(context.Background(), 15*time.Second, "/readyz answering 200", func() bool {
		select {
		case err := <-in.done:
			in.t.Fatalf("streamwatch exited before ready: %v\n%s", err, in.logs)
		default:
		}
		code, body := in.readyz()
		last = fmt.Sprint(code, " ", body)
		return code == 200
	})
	if err != nil {
		in.t.Fatalf("streamwatch not ready: %v (last: %s)\nlogs:\n%s\nslack calls: %+v", err, last, in.logs, in.slack.Calls())
	}
}

func (in *instance) post(path, body string) (int, string) {
	in.t.Helper()
	req, _ := http.NewRequest("POST", in.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+webhookToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// ok posts and fails the test unless the webhook answered 200.
func (in *instance) ok(path, body string) string {
	in.t.Helper()
	code, b := in.post(path, body)
	if code != 200 {
		in.t.Fatalf("POST %s answered %d: %s", path, code, b)
	}
	return b
}

func generic(title, key string) string {
	b, _ := json.Marshal(map[string]any{"source": "test", "title": title, "severity": "Severity 3",
		"status": "firing", "labels": map[string]string{"alertname": title}, "dedup_key": key})
	return string(b)
}

// concurrently calls f(0) … f(n-1), at most limit at a time, and returns when all have.
func concurrently(n, limit int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, limit)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// waitFor waits up to 20 s for cond to hold over what the Slack fake saw (it is checked on
// every change); waitForLong waits longer.
func waitFor(t *testing.T, s *slackfake.Server, what string, cond func(*slackfake.Server) bool) {
	t.Helper()
	waitForLong(t, s, 20*time.Second, what, cond)
}

func waitForLong(t *testing.T, s *slackfake.Server, d time.Duration, what string, cond func(*slackfake.Server) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := s.WaitFor(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func roots(s *slackfake.Server, channel string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range s.Messages(channel) {
		if m.ThreadTS == "" {
			out = append(out, m)
		}
	}
	return out
}

// replies are the thread replies under a root (Thread includes the root itself).
func replies(s *slackfake.Server, ch, ts string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range s.Thread(ch, ts) {
		if m.ThreadTS != "" && m.TS != ts {
			out = append(out, m)
		}
	}
	return out
}

// echoes counts a thread's replies besides the automatic diagnosis: identical duplicates must
// post none (they only change the root's count).
func echoes(s *slackfake.Server, ch, ts string) int {
	n := 0
	for _, r := range replies(s, ch, ts) {
		if !strings.HasPrefix(r.Text, "Automatic diagnosis") {
			n++
		}
	}
	return n
}

func mustOK(t *testing.T, code int, body string) {
	t.Helper()
	if code != 200 {
		t.Fatalf("webhook answered %d: %s", code, body)
	}
}

func TestE2EDuplicatesThreadIntoOneIncident(t *testing.T) {
	in := start(t, setup{})
	am, err := os.ReadFile("testdata/alertmanager-sms.json")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		code, body := in.post("/webhooks/alertmanager", string(am))
		mustOK(t, code, body)
		if i == 0 && !strings.Contains(body, `"incident":"INC-1"`) || !strings.Contains(body, `"result":"opened"`) && i == 0 {
			t.Fatalf("first answer does not name the opened incident: %s", body)
		}
	}
	in.ok("/webhooks/generic", generic("disk almost full", "disk-1"))
	s := in.slack
	waitFor(t, s, "two roots, the first counting the duplicates", func(s *slackfake.Server) bool {
		pipe := roots(s, "C0PIPE")
		return len(pipe) == 1 && len(roots(s, "C0DEFAULT")) == 1 && strings.Contains(mustMessage(s, "C0PIPE", pipe[0].TS).Text, "3 occurrences")
	})
	root := roots(s, "C0PIPE")[0]
	if n := echoes(s, "C0PIPE", root.TS); n != 0 {
		t.Fatalf("identical re-sends posted %d thread replies: %q", n, threadTexts(s, "C0PIPE", root.TS))
	}
	if !strings.Contains(root.Text, "INC-1") || !strings.Contains(root.Text, "client replied sms") {
		t.Fatalf("root text %q", root.Text)
	}
	if !strings.Contains(string(root.Blocks), `"action_id":"incident_ack"`) {
		t.Fatalf("root has no Acknowledge button: %s", root.Blocks)
	}
	for _, m := range append(s.Messages("C0PIPE"), s.Messages("C0DEFAULT")...) {
		if len(m.Mentions) > 0 {
			t.Fatalf("message mentions %v: %q", m.Mentions, m.Text)
		}
	}
	resp, err := http.Get(in.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`streamwatch_alerts_received_total{outcome="opened",source="alertmanager"} 1`,
		`streamwatch_alerts_received_total{outcome="duplicate",source="alertmanager"} 2`,
		`streamwatch_alerts_received_total{outcome="opened",source="generic"} 1`,
		`streamwatch_incidents_opened_total 2`,
		`streamwatch_duplicates_threaded_total 2`,
		`streamwatch_slack_api_calls_total{method="chat.postMessage",status="200"}`,
		`streamwatch_outbox_delivery_seconds_count`,
		`streamwatch_outbox_depth`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func grepLines(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

func mustMessage(s *slackfake.Server, ch, ts string) slackfake.Message {
	m, _ := s.Message(ch, ts)
	return m
}

func TestE2EStormIsCoalesced(t *testing.T) {
	in := start(t, setup{coalesce: "1s"})
	in.ok("/webhooks/generic", generic("client replied sms", "storm"))
	waitFor(t, in.slack, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	begin := time.Now()
	errs := make(chan string, 2000)
	concurrently(2000, 8, func(int) {
		req, _ := http.NewRequest("POST", in.url+"/webhooks/generic", strings.NewReader(generic("client replied sms", "storm")))
		req.Header.Set("Authorization", "Bearer "+webhookToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			errs <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			errs <- fmt.Sprint(resp.StatusCode, string(b))
		}
	})
	close(errs)
	for e := range errs {
		t.Fatalf("storm alert refused: %s\nserver log lines about http:\n%s", e, grepLines(in.logs.String(), "http", "panic"))
	}
	// Identical duplicates change the root's count and nothing else.
	waitFor(t, in.slack, "the root to show 2001 occurrences", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 1 && strings.Contains(r[0].Text, "2001 occurrences")
	})
	elapsed := time.Since(begin)
	calls := len(in.slack.CallsTo("chat.postMessage")) + len(in.slack.CallsTo("chat.update"))
	// One root, the automatic diagnosis (a reply and a root update), then at most one root
	// update per 1 s window.
	limit := 3 + int(elapsed/time.Second) + 2
	if calls > limit {
		t.Fatalf("%d Slack calls for 2,001 alerts over %v, want at most %d", calls, elapsed, limit)
	}
	if n := len(roots(in.slack, "C0PIPE")); n != 1 {
		t.Fatalf("%d root messages, want 1", n)
	}
	root := roots(in.slack, "C0PIPE")[0]
	if n := echoes(in.slack, "C0PIPE", root.TS); n != 0 {
		t.Fatalf("2000 identical duplicates posted %d thread replies: %q", n, threadTexts(in.slack, "C0PIPE", root.TS))
	}
	t.Logf("2,001 alerts in %v → %d Slack calls", elapsed, calls)
}

func TestE2EMergeThreadsLaterDuplicatesIntoTarget(t *testing.T) {
	in := start(t, setup{})
	in.ok("/webhooks/generic", generic("client replied sms", "first"))
	in.ok("/webhooks/generic", generic("ReplyPipelineLag", "second"))
	s := in.slack
	waitFor(t, s, "two roots", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 2 })
	if p := askIn(t, s, "U0ALICE", "C0PIPE", "incident merge INC-2 INC-1"); !strings.Contains(p.Text, "INC-2 merged into INC-1") {
		t.Fatalf("the merge reply: %q", p.Text)
	}
	in.ok("/webhooks/generic", generic("ReplyPipelineLag", "second"))
	var first, second slackfake.Message
	for _, r := range roots(s, "C0PIPE") {
		if strings.Contains(r.Text, " INC-1: ") {
			first = r
		} else {
			second = r
		}
	}
	// INC-2's alert is INC-1's now: its duplicate counts on INC-1's root (1 + 1 merged + 1).
	waitFor(t, s, "the duplicate of INC-2 counted on INC-1", func(s *slackfake.Server) bool {
		merged := false
		for _, m := range replies(s, "C0PIPE", first.TS) {
			merged = merged || strings.Contains(m.Text, "INC-2 was merged into this incident")
		}
		return merged && strings.Contains(mustMessage(s, "C0PIPE", first.TS).Text, "3 occurrences")
	})
	waitFor(t, s, "the pointer in INC-2's thread", func(s *slackfake.Server) bool {
		for _, m := range replies(s, "C0PIPE", second.TS) {
			if strings.Contains(m.Text, "Merged into INC-1") {
				return true
			}
		}
		return false
	})
	if m, _ := s.Message("C0PIPE", second.TS); !strings.Contains(m.Text, "merged into INC-1") {
		t.Fatalf("INC-2's root not updated: %q", m.Text)
	}
}

func TestE2ERedisOutageAnswers503ThenRecovers(t *testing.T) {
	srv, err := testredis.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	in := start(t, setup{redisURL: srv.URL})
	in.ok("/webhooks/generic", generic("client replied sms", "outage"))
	srv.Stop()
	req, _ := http.NewRequest("POST", in.url+"/webhooks/generic", strings.NewReader(generic("client replied sms", "outage-2")))
	req.Header.Set("Authorization", "Bearer "+webhookToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("with Redis down: %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if r, _ := http.Get(in.url + "/readyz"); r.StatusCode != 503 {
		t.Fatalf("/readyz with Redis down: %d", r.StatusCode)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// Redis restarted empty (no persistence): the next alert opens an incident again.
	var code int
	var body string
	if err := wait.Until(context.Background(), 10*time.Second, "a webhook accepted after Redis came back", func() bool {
		code, body = in.post("/webhooks/generic", generic("client replied sms", "outage-2"))
		return code == 200
	}); err != nil {
		t.Fatalf("%v: still %d %s", err, code, body)
	}
	if !strings.Contains(body, `"result":"opened"`) {
		t.Fatalf("after recovery: %s", body)
	}
	waitFor(t, in.slack, "the incident after recovery", func(s *slackfake.Server) bool {
		for _, r := range roots(s, "C0PIPE") {
			if strings.Contains(r.Text, "INC-1") {
				return true
			}
		}
		return false
	})
}

func TestE2ESlack429DeliversLaterInOrder(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	s.FailNext("chat.postMessage", 3, slackfake.Fault{Status: 429, RetryAfter: 1})
	in := start(t, setup{slack: s})
	for i := 1; i <= 3; i++ {
		in.ok("/webhooks/generic", generic(fmt.Sprintf("ReplyPipeline%d", i), fmt.Sprint("k", i)))
	}
	in.ok("/webhooks/generic", generic("ReplyPipeline1", "k1"))
	waitFor(t, s, "three roots and the duplicate", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 3 && strings.Contains(r[0].Text, "2 occurrences")
	})
	r := roots(s, "C0PIPE")
	for i, m := range r {
		if !strings.Contains(m.Text, fmt.Sprintf("INC-%d", i+1)) {
			t.Fatalf("root %d is %q: out of order", i, m.Text)
		}
	}
	if s.RateLimited() < 1 {
		t.Fatal("the fake answered no 429: the test proves nothing")
	}
}

func TestE2ERedeliveredEnvelopeAnsweredOnce(t *testing.T) {
	in := start(t, setup{})
	in.ok("/webhooks/generic", generic("client replied sms", "x"))
	s := in.slack
	ctx := context.Background()
	env, err := s.SendSlashCommand(ctx, slackfake.SlashCommand{ChannelID: "C0PIPE", UserID: "U1", Text: "incident list"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WaitAck(ctx, env.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Redeliver(ctx, env.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "both deliveries acked", func(s *slackfake.Server) bool {
		n := 0
		for _, a := range s.Acks() {
			if a.EnvelopeID == env.ID {
				n++
			}
		}
		return n == 2
	})
	answered := func(id string) func(*slackfake.Server) bool {
		return func(s *slackfake.Server) bool {
			for _, p := range s.ResponsePosts() {
				if p.EnvelopeID == id {
					return true
				}
			}
			return false
		}
	}
	waitFor(t, s, "the reply", answered(env.ID))
	// The dedup decision for the redelivery was taken before this later command was read
	// from the socket; a wrongly handled redelivery would be answered by the time it is.
	env2, _ := s.SendSlashCommand(ctx, slackfake.SlashCommand{ChannelID: "C0PIPE", UserID: "U1", Text: "incident list"})
	waitFor(t, s, "the later reply", answered(env2.ID))
	n := 0
	for _, p := range s.ResponsePosts() {
		if p.EnvelopeID == env.ID {
			n++
			if !strings.Contains(p.Text, "1 open incident") {
				t.Fatalf("reply %q", p.Text)
			}
		}
	}
	if n != 1 {
		t.Fatalf("redelivered envelope answered %d times, want 1\nposts: %+v\nephemerals: %+v\nlogs: %s", n, s.ResponsePosts(), s.Ephemerals(), in.logs)
	}
}

func TestE2EButtonsAcknowledgeAndResolve(t *testing.T) {
	in := start(t, setup{})
	in.ok("/webhooks/generic", generic("client replied sms", "btn"))
	s := in.slack
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	root := roots(s, "C0PIPE")[0]
	ctx := context.Background()
	if _, err := s.SendBlockAction(ctx, slackfake.BlockAction{UserID: "U0BOB", ChannelID: "C0PIPE", MessageTS: root.TS, ActionID: "incident_ack"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the root to say acknowledged", func(s *slackfake.Server) bool {
		m, _ := s.Message("C0PIPE", root.TS)
		return strings.Contains(m.Text, "acknowledged by") && !strings.Contains(string(m.Blocks), "incident_ack")
	})
	if _, err := s.SendBlockAction(ctx, slackfake.BlockAction{UserID: "U0BOB", ChannelID: "C0PIPE", MessageTS: root.TS, ActionID: "incident_resolve"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the root to say resolved", func(s *slackfake.Server) bool {
		m, _ := s.Message("C0PIPE", root.TS)
		return strings.Contains(m.Text, "resolved by") && !strings.Contains(string(m.Blocks), "incident_resolve")
	})
	// In the thread, a mention without an id means the thread's incident.
	if _, err := s.SendAppMention(ctx, slackfake.Mention{ChannelID: "C0PIPE", UserID: "U0BOB", Text: "<@U0BOT> incident show", ThreadTS: root.TS}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the show reply in the thread", func(s *slackfake.Server) bool {
		for _, m := range s.Thread("C0PIPE", root.TS) {
			if strings.Contains(m.Text, "INC-1: client replied sms") && strings.Contains(string(m.Blocks), "resolved by") {
				return true
			}
		}
		return false
	})
}

func TestE2EWebhookRefusals(t *testing.T) {
	in := start(t, setup{})
	cases := []struct {
		name, path, auth, body string
		want                   int
		reason                 string
	}{
		{"no token", "/webhooks/generic", "", generic("x", "y"), 401, "bearer token"},
		{"wrong token", "/webhooks/generic", "Bearer nope", generic("x", "y"), 401, "bearer token"},
		{"invalid json", "/webhooks/alertmanager", "Bearer " + webhookToken, `{"alerts": [`, 400, "JSON"},
		{"missing title", "/webhooks/generic", "Bearer " + webhookToken, `{"status":"firing"}`, 400, "title"},
		{"too large", "/webhooks/generic", "Bearer " + webhookToken, `{"title":"` + strings.Repeat("a", 70000) + `"}`, 413, "max_body_bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", in.url+c.path, strings.NewReader(c.body))
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.want || !strings.Contains(string(b), c.reason) {
				t.Fatalf("got %d %s, want %d mentioning %q", resp.StatusCode, b, c.want, c.reason)
			}
		})
	}
	signed := func(body string, at time.Time) (int, string) {
		req, _ := http.NewRequest("POST", in.url+"/webhooks/generic", strings.NewReader(body))
		req.Header.Set(bot.SignatureHeader, bot.Sign(webhookToken, []byte(body), at))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := signed(generic("signed alert", "sig"), time.Now()); code != 200 {
		t.Fatalf("signed webhook: %d %s", code, body)
	}
	if code, body := signed(generic("signed alert", "sig"), time.Now().Add(-10*time.Minute)); code != 401 || !strings.Contains(body, "replay") {
		t.Fatalf("replayed signed webhook: %d %s", code, body)
	}
	for _, secret := range []string{botToken, appToken, webhookToken} {
		if strings.Contains(in.logs.String(), secret) {
			t.Fatalf("a secret appears in the logs")
		}
	}
}
