package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
	"github.com/streamwatch/streamwatch/bot/slackfake"
)

const (
	botToken     = "xoxb-bench-bot-token"
	appToken     = "xapp-bench-app-token"
	alertChannel = "C0ALERTS"
)

// newSlack starts Slack's fake; rateLimit is chat.postMessage calls per second per channel
// (0: none).
func newSlack(rateLimit float64) (*slackfake.Server, error) {
	s := slackfake.New(slackfake.Options{BotToken: botToken, AppToken: appToken, ChannelRateLimit: rateLimit,
		RedeliverUnacked: true})
	if err := s.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// streamwatch is the release binary running as its own process.
type streamwatch struct {
	*process
	url    string
	prefix string
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startStreamwatch runs `streamwatch serve` against the Redis server and Slack's fake, with a
// fresh key prefix, and waits until /readyz answers 200 (Redis answers, the socket is up).
// alerts, when not empty, are more keys of the alerts section, each line indented by two spaces;
// redisKeys are more keys of the redis section ("min_replicas_acked: 1").
func (e *env) startStreamwatch(ctx context.Context, slack *slackfake.Server, coalesce time.Duration, tag, alerts string, redisKeys ...string) (*streamwatch, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	prefix := "bench" + randomHex(4)
	cfg := fmt.Sprintf(`http:
  listen: "127.0.0.1:%d"
slack:
  default_channel: %s
  thread_coalesce: %s
redis:
  key_prefix: %s
%salerts:
%s  group_by: [alertname, pipeline]
pipelines:
  - name: bench
    channel: C0BENCH
`, port, alertChannel, coalesce, prefix, indented(redisKeys), alerts)
	path := filepath.Join(e.tmp, tag+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	p, err := startProcess("streamwatch", filepath.Join(e.tmp, tag+".log"), []string{
		"PATH=" + os.Getenv("PATH"), "SLACK_BOT_TOKEN=" + botToken, "SLACK_APP_TOKEN=" + appToken,
		"REDIS_URL=" + e.redis.url, "STREAMWATCH_WEBHOOK_TOKEN=" + e.webhookToken, "SLACK_API_URL=" + slack.APIURL(),
	}, e.streamwatchBin, "serve", "--config", path, "--log-level", e.opts.logLevel)
	if err != nil {
		return nil, err
	}
	sw := &streamwatch{process: p, url: fmt.Sprintf("http://127.0.0.1:%d", port), prefix: prefix}
	if err := waitHTTP(ctx, p, sw.url+"/readyz", 30*time.Second); err != nil {
		sw.stop(5 * time.Second)
		return nil, err
	}
	return sw, nil
}

// indented is lines, each indented by two spaces and ended.
func indented(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// alertmanager is Prometheus Alertmanager running as its own process, without gossip.
type alertmanager struct {
	*process
	url string
}

const alertmanagerConfig = `route:
  receiver: blackhole
  group_by: [alertname]
receivers:
  - name: blackhole
`

func (e *env) startAlertmanager(ctx context.Context, tag string) (*alertmanager, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.tmp, tag)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfg, []byte(alertmanagerConfig), 0o600); err != nil {
		return nil, err
	}
	p, err := startProcess("alertmanager", filepath.Join(e.tmp, tag+".log"), []string{"PATH=" + os.Getenv("PATH")},
		e.alertmanagerBin, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--cluster.listen-address=")
	if err != nil {
		return nil, err
	}
	am := &alertmanager{process: p, url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	if err := waitHTTP(ctx, p, am.url+"/-/ready", 30*time.Second); err != nil {
		am.stop(5 * time.Second)
		return nil, err
	}
	return am, nil
}

// activeAlerts counts the alerts Alertmanager holds.
func (am *alertmanager) activeAlerts(ctx context.Context) (int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, am.url+"/api/v2/alerts", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var alerts []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&alerts); err != nil {
		return 0, fmt.Errorf("GET /api/v2/alerts: %w", err)
	}
	return len(alerts), nil
}

// ensureAlertmanager returns the cached Alertmanager binary, installing it with `go install`
// the first time. An error says why it cannot be had; the comparison is then skipped.
func ensureAlertmanager(ctx context.Context, cacheDir, version string, logf func(string, ...any)) (string, error) {
	dir := filepath.Join(cacheDir, "alertmanager-"+version)
	bin := filepath.Join(dir, "alertmanager")
	if _, err := os.Stat(bin); err == nil {
		return bin, checkRuns(ctx, bin)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	gobin, err := os.MkdirTemp(dir, "install")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(gobin)
	logf("installing Alertmanager %s into %s (about a minute, once)", version, dir)
	ictx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ictx, "go", "install", "github.com/prometheus/alertmanager/cmd/alertmanager@"+version)
	cmd.Dir = gobin // outside any module
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return "", fmt.Errorf("go install github.com/prometheus/alertmanager/cmd/alertmanager@%s failed (%v): %s",
			version, err, strings.TrimSpace(lines[len(lines)-1]))
	}
	if err := os.Rename(filepath.Join(gobin, "alertmanager"), bin); err != nil {
		return "", err
	}
	return bin, checkRuns(ctx, bin)
}

func checkRuns(ctx context.Context, bin string) error {
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --version: %v: %s", bin, err, bytes.TrimSpace(out))
	}
	return nil
}

// swloadReport is what swload prints (bench/cmd/swload).
type swloadReport struct {
	HotSent  load.Result `json:"hotSent"`
	Warmup   load.Result `json:"warmup"`
	Measured load.Result `json:"measured"`
}

// loadArgs are swload's flags for one run.
type loadArgs struct {
	url, format string
	token       bool // send the webhook token
	batch       int
	dup         float64
	hot         int
	requests    int
	duration    time.Duration
	workers     int
	rate        float64
	warmup      int
	run         string
}

func (e *env) swload(ctx context.Context, a loadArgs) (swloadReport, error) {
	args := []string{"-url", a.url, "-format", a.format, "-batch", fmt.Sprint(a.batch), "-dup", fmt.Sprint(a.dup),
		"-hot", fmt.Sprint(a.hot), "-requests", fmt.Sprint(a.requests), "-duration", a.duration.String(),
		"-workers", fmt.Sprint(a.workers), "-rate", fmt.Sprint(a.rate), "-warmup", fmt.Sprint(a.warmup), "-run", a.run}
	environ := []string{"PATH=" + os.Getenv("PATH")}
	if a.token {
		environ = append(environ, "STREAMWATCH_WEBHOOK_TOKEN="+e.webhookToken)
	} else {
		args = append(args, "-token-env", "")
	}
	cmd := exec.CommandContext(ctx, e.swloadBin, args...)
	cmd.Env = environ
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return swloadReport{}, fmt.Errorf("swload %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var r swloadReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return swloadReport{}, fmt.Errorf("swload output: %w", err)
	}
	return r, nil
}
