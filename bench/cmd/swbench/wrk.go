package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
)

// wrk drives the ingest comparison: a C load generator (Debian's wrk) spends far less CPU per
// request than swload on this 2-core machine, so both servers are driven harder (what the
// issue's measurements used). Each run rotates through 1,000 prepared bodies of the mix (half
// duplicates of the hot alerts, half new alerts): after the first pass the new alerts come back
// as re-sends, as Alertmanager's repeat_interval sends them during a storm.

// wrkBodies is how many bodies a wrk run rotates through.
const wrkBodies = 1000

// wrkScript reads the bodies (one JSON body a line, the file its argument names) and the token
// (from the environment, never the command line) and POSTs them in turn, each thread from its
// own place in the list.
const wrkScript = `local bodies, n, i = {}, 0, 0
local headers = {["Content-Type"] = "application/json"}
init = function(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  n = #bodies
  local token = os.getenv("STREAMWATCH_WEBHOOK_TOKEN")
  if token and token ~= "" then headers["Authorization"] = "Bearer " .. token end
  i = math.random(n)
end
request = function()
  i = i % n + 1
  return wrk.format("POST", nil, headers, bodies[i])
end
`

// wrkArgs are one wrk run.
type wrkArgs struct {
	url      string
	format   load.Format
	token    bool
	batch    int
	conns    int
	duration time.Duration
	run      string
}

// wrkResult is what a wrk run measured, with the hot alerts sent before it.
type wrkResult struct {
	load.Result
	hot int // hot alerts sent (and answered 2xx) before the run
}

// wrkRun sends the hot alerts once (so that the duplicates find their incidents open), then runs
// wrk for the duration.
func (e *env) wrkRun(ctx context.Context, a wrkArgs) (wrkResult, error) {
	var out wrkResult
	mix := load.Mix{Run: a.run, Batch: a.batch, Dup: dupShare, Hot: hotAlerts, StartsAt: time.Now()}
	token := ""
	if a.token {
		token = e.webhookToken
	}
	var hot [][]byte
	for _, h := range mix.HotAlerts() {
		b, err := load.Body(a.format, []load.Alert{h})
		if err != nil {
			return out, err
		}
		hot = append(hot, b)
	}
	r, err := load.Run(ctx, load.Plan{URL: a.url, Token: token, Bodies: hot, AlertsPerRequest: 1, Requests: len(hot),
		Duration: 30 * time.Second, Workers: 1})
	if err != nil {
		return out, err
	}
	if r.OK != len(hot) {
		return out, fmt.Errorf("opening the hot alerts: %d of %d answered 2xx: %s", r.OK, len(hot), r.FirstFail)
	}
	out.hot = r.OK
	bodies, err := load.Bodies(a.format, mix.Requests(wrkBodies))
	if err != nil {
		return out, err
	}
	dir, err := os.MkdirTemp(e.tmp, "wrk")
	if err != nil {
		return out, err
	}
	bodyFile, scriptFile := filepath.Join(dir, "bodies.jsonl"), filepath.Join(dir, "post.lua")
	if err := os.WriteFile(bodyFile, append(bytes.Join(bodies, []byte("\n")), '\n'), 0o600); err != nil {
		return out, err
	}
	if err := os.WriteFile(scriptFile, []byte(wrkScript), 0o600); err != nil {
		return out, err
	}
	args := []string{"-t", "2", "-c", strconv.Itoa(a.conns), "-d", fmt.Sprintf("%ds", int(a.duration.Seconds())),
		"--latency", "--timeout", "30s", "-s", scriptFile, a.url, "--", bodyFile}
	cmd := exec.CommandContext(ctx, "wrk", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if token != "" {
		cmd.Env = append(cmd.Env, "STREAMWATCH_WEBHOOK_TOKEN="+token)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return out, fmt.Errorf("wrk %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	res, err := parseWrk(stdout.String())
	if err != nil {
		return out, fmt.Errorf("wrk output: %w\n%s", err, stdout.String())
	}
	if st := cmd.ProcessState; st != nil {
		res.CPUms = float64(st.UserTime()+st.SystemTime()) / float64(time.Millisecond)
	}
	res.Alerts = res.OK * a.batch
	if res.Seconds > 0 {
		res.AlertsPerS = float64(res.Alerts) / res.Seconds
	}
	res.StoppedBy = "time"
	out.Result = res
	return out, nil
}

var (
	wrkTotal   = regexp.MustCompile(`(\d+) requests in ([\d.]+)(us|ms|s|m)`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkErrors  = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkPercent = regexp.MustCompile(`^\s*(50|99)%\s+([\d.]+)(us|ms|s|m)\s*$`)
)

// parseWrk reads wrk's report (with --latency).
func parseWrk(s string) (load.Result, error) {
	var r load.Result
	m := wrkTotal.FindStringSubmatch(s)
	if m == nil {
		return r, fmt.Errorf("no request count")
	}
	r.Requests, _ = strconv.Atoi(m[1])
	r.Seconds = seconds(m[2], m[3])
	r.OK = r.Requests
	if m := wrkNon2xx.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		r.OK -= n
		r.Status = map[int]int{0: n}
		r.FirstFail = fmt.Sprintf("%d answers were not 2xx", n)
	}
	if m := wrkErrors.FindStringSubmatch(s); m != nil {
		for _, v := range m[1:] {
			n, _ := strconv.Atoi(v)
			r.Errors += n
		}
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if m := wrkPercent.FindStringSubmatch(sc.Text()); m != nil {
			ms := seconds(m[2], m[3]) * 1000
			if m[1] == "50" {
				r.P50ms = ms
			} else {
				r.P99ms = ms
			}
		}
	}
	return r, nil
}

func seconds(v, unit string) float64 {
	f, _ := strconv.ParseFloat(v, 64)
	switch unit {
	case "us":
		return f / 1e6
	case "ms":
		return f / 1e3
	case "m":
		return f * 60
	}
	return f
}

// receivedTotal sums streamwatch_alerts_received_total over the outcomes that recorded the
// alert (all but rejected and unavailable), from a /metrics URL.
func receivedTotal(url string) (int64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var total float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "streamwatch_alerts_received_total{") ||
			strings.Contains(l, `outcome="rejected"`) || strings.Contains(l, `outcome="unavailable"`) {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", l, err)
		}
		total += v
	}
	return int64(total), sc.Err()
}
