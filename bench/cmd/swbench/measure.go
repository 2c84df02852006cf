package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

const (
	hotAlerts = 10  // distinct alerts the ingest duplicates repeat
	dupShare  = 0.5 // half of the ingest alerts are duplicates
	warmup    = 50  // unmeasured requests before each ingest run
)

var batches = []int{1, 20}

// results collects every run's figures.
type results struct {
	reps int
	// ingest[target][batch] holds one measured load result per run; target is "streamwatch"
	// or "alertmanager".
	ingest    map[string]map[int][]load.Result
	idleRSS   []float64 // MiB, streamwatch after ready
	peakRSS   []float64 // MiB, VmHWM after the ingest runs
	persisted []string  // per run: how the Redis check went
	amCheck   []string  // per run: how Alertmanager's alert count compared
	storms    []stormResult
	distinct  []distinctResult
	memory    []memResult
	// cpu[target][batch][component]: CPU milliseconds per 1,000 alerts, one per run.
	cpu map[string]map[int]map[string][]float64

	goBench        map[string][]map[string]float64 // benchmark → per -count run: unit → value
	goBenchOrder   []string
	goBenchSkipped string
}

func (r *results) addIngest(target string, batch int, res load.Result) {
	if r.ingest == nil {
		r.ingest = map[string]map[int][]load.Result{}
	}
	if r.ingest[target] == nil {
		r.ingest[target] = map[int][]load.Result{}
	}
	r.ingest[target][batch] = append(r.ingest[target][batch], res)
}

func (r *results) addCPU(target string, batch int, component string, used time.Duration, alerts int) {
	if alerts == 0 {
		return
	}
	if r.cpu == nil {
		r.cpu = map[string]map[int]map[string][]float64{}
	}
	if r.cpu[target] == nil {
		r.cpu[target] = map[int]map[string][]float64{}
	}
	if r.cpu[target][batch] == nil {
		r.cpu[target][batch] = map[string][]float64{}
	}
	r.cpu[target][batch][component] = append(r.cpu[target][batch][component],
		float64(used)/float64(time.Millisecond)*1000/float64(alerts))
}

// cpuUse is the CPU time used so far by the server under load, redis-server and this process
// (Slack's fake).
type cpuUse struct{ server, redis, fake time.Duration }

func (e *env) cpuNow(server int) cpuUse {
	s, _ := cpuTime(server)
	r, _ := cpuTime(e.redis.pid())
	return cpuUse{server: s, redis: r, fake: selfCPU()}
}

// allAlerts counts the alerts of a whole swload run, warm-up included, as its CPU time does.
func allAlerts(r swloadReport) int { return r.HotSent.Alerts + r.Warmup.Alerts + r.Measured.Alerts }

func (e *env) ingestArgs(url, format string, token bool, batch, rep int) loadArgs {
	requests := e.opts.requests1
	if batch > 1 {
		requests = e.opts.requests20
	}
	return loadArgs{url: url, format: format, token: token, batch: batch, dup: dupShare, hot: hotAlerts,
		requests: requests, duration: e.opts.ingestLimit, workers: e.opts.workers, warmup: warmup,
		run: fmt.Sprintf("r%d-b%d", rep, batch)}
}

// failed describes a load run in which something was not answered 2xx.
func failed(r load.Result) error {
	if r.OK == r.Requests && r.Requests > 0 {
		return nil
	}
	return fmt.Errorf("%d of %d requests answered 2xx (statuses %v, %d transport errors); first: %s",
		r.OK, r.Requests, r.Status, r.Errors, r.FirstFail)
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// ingestStreamwatch: a fresh process, its idle resident set, batches of 1 then 20 alerts, its
// peak resident set, and a check that Redis holds every alert the answers claimed.
func (e *env) ingestStreamwatch(ctx context.Context, rep int, res *results) error {
	// Slack's own pace: a bench against a Slack that takes hundreds of messages a second in one
	// channel would measure a deliverer no real Slack lets run.
	slack, err := newSlack(1)
	if err != nil {
		return err
	}
	defer slack.Close()
	sw, err := e.startStreamwatch(ctx, slack, 10*time.Second, fmt.Sprintf("ingest-%d", rep), "")
	if err != nil {
		return err
	}
	defer sw.stop(15 * time.Second)
	time.Sleep(2 * time.Second) // let start-up settle before calling it idle
	rss, _, err := memory(sw.pid())
	if err != nil {
		return err
	}
	res.idleRSS = append(res.idleRSS, mib(rss))
	var opened, dups, flooded, alerts int
	for _, batch := range batches {
		if e.opts.generator == "wrk" {
			n, err := e.ingestWrk(ctx, sw, batch, rep, "", res)
			if err != nil {
				return err
			}
			alerts += n
			continue
		}
		before := e.cpuNow(sw.pid())
		r, err := e.swload(ctx, e.ingestArgs(sw.url+"/webhooks/alertmanager", "webhook", true, batch, rep))
		if err != nil {
			return err
		}
		after := e.cpuNow(sw.pid())
		res.addCPU("streamwatch", batch, "streamwatch process", after.server-before.server, allAlerts(r))
		res.addCPU("streamwatch", batch, "redis-server", after.redis-before.redis, allAlerts(r))
		res.addCPU("streamwatch", batch, "Slack's fake", after.fake-before.fake, allAlerts(r))
		res.addCPU("streamwatch", batch, loadGenerator, loadCPU(r), allAlerts(r))
		if err := failed(r.Measured); err != nil {
			return fmt.Errorf("streamwatch ingest, batch %d: %w\n%s", batch, err, sw.logTail(10))
		}
		for _, step := range []load.Result{r.HotSent, r.Warmup, r.Measured} {
			opened, dups, flooded, alerts = opened+step.Opened, dups+step.Duplicates, flooded+step.Flooded, alerts+step.Alerts
		}
		res.addIngest("streamwatch", batch, r.Measured)
		e.logf("run %d: streamwatch ingest, batch %2d: %6.0f alerts/s, p50 %.1f ms, p99 %.1f ms (%d requests, stopped by %s)",
			rep, batch, r.Measured.AlertsPerS, r.Measured.P50ms, r.Measured.P99ms, r.Measured.Requests, r.Measured.StoppedBy)
	}
	_, hwm, err := memory(sw.pid())
	if err != nil {
		return err
	}
	res.peakRSS = append(res.peakRSS, mib(hwm))
	check := ""
	if e.opts.generator == "wrk" {
		check = e.checkCounted(ctx, sw, alerts)
	} else {
		check = e.checkPersisted(ctx, sw.prefix, opened, dups, flooded, alerts)
	}
	check += fmt.Sprintf("; Slack's fake took %s chat.postMessage calls meanwhile and answered %s with HTTP 429",
		human.Digits(int64(len(slack.CallsTo("chat.postMessage")))), human.Digits(int64(slack.RateLimited())))
	res.persisted = append(res.persisted, check)
	e.logf("run %d: streamwatch idle RSS %.1f MiB, peak %.1f MiB; Redis: %s", rep, mib(rss), mib(hwm), check)
	return nil
}

// checkPersisted compares what the answers claimed with Redis. Nothing resolves during ingest,
// so the open incidents count every alert answered 200; those of their own key (not flood
// incidents, keys.go) are the ones the answers say opened; the hot incidents (INC-1 … INC-10,
// opened first, one by one) count every duplicate.
func (e *env) checkPersisted(ctx context.Context, prefix string, opened, dups, flooded, alerts int) string {
	if opened+dups+flooded != alerts {
		return fmt.Sprintf("MISMATCH: answers name %d results for %d alerts", opened+dups+flooded, alerts)
	}
	st := state.New(e.redis.client, prefix)
	open, err := st.ListOpen(ctx, "")
	if err != nil {
		return "could not read Redis: " + err.Error()
	}
	var counted, hot int64
	own, floods := 0, 0
	for _, inc := range open {
		counted += inc.Count
		if strings.HasPrefix(inc.Key, "flood:") {
			floods++
		} else {
			own++
		}
		var n int
		if _, err := fmt.Sscanf(inc.ID, "INC-%d", &n); err == nil && n <= hotAlerts {
			hot += inc.Count
		}
	}
	if own != opened || counted != int64(alerts) || hot != int64(hotAlerts+dups) {
		return fmt.Sprintf("MISMATCH: %d incidents of their own in Redis for %d opened; they count %d occurrences for %d alerts, the hot ones %d for %d",
			own, opened, counted, alerts, hot, hotAlerts+dups)
	}
	return fmt.Sprintf("ok (%s alerts: %s incidents opened, %s duplicates, %s new alerts joined %d flood incident%s, all counted)",
		human.Digits(int64(alerts)), human.Digits(int64(opened)), human.Digits(int64(dups)), human.Digits(int64(flooded)), floods, human.Plural(floods))
}

// loadGenerator names the load generator's CPU figure.
const loadGenerator = "load generator"

// loadCPU is the CPU time swload spent on a whole run.
func loadCPU(r swloadReport) time.Duration {
	return time.Duration((r.HotSent.CPUms + r.Warmup.CPUms + r.Measured.CPUms) * float64(time.Millisecond))
}

// newAlerts is how many alerts of a run of n alerts were new (not duplicates) in swload's mix.
func newAlerts(n int) int { return n - int(float64(n)*dupShare) }

// amDoubled names the Alertmanager runs with twice the connections.
const amDoubled = "alertmanager, 2× connections"

// ingestAlertmanager sends the same alerts to Alertmanager's POST /api/v2/alerts; then, to a
// fresh Alertmanager, the same load from twice as many connections: if the load generator
// held the rate back, more connections would raise it.
func (e *env) ingestAlertmanager(ctx context.Context, rep int, res *results) error {
	if e.alertmanagerErr != nil {
		return nil
	}
	for _, target := range []string{"alertmanager", amDoubled} {
		if err := e.ingestAlertmanagerOnce(ctx, rep, res, target); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) ingestAlertmanagerOnce(ctx context.Context, rep int, res *results, target string) error {
	tag := fmt.Sprintf("alertmanager-%d", rep)
	if target == amDoubled {
		tag += "-2x"
	}
	am, err := e.startAlertmanager(ctx, tag)
	if err != nil {
		return err
	}
	defer am.stop(15 * time.Second)
	want := hotAlerts
	for _, batch := range batches {
		if e.opts.generator == "wrk" {
			conns := e.opts.workers
			if target == amDoubled {
				conns *= 2
			}
			before, _ := cpuTime(am.pid())
			r, err := e.wrkRun(ctx, wrkArgs{url: am.url + "/api/v2/alerts", format: load.API, batch: batch, conns: conns,
				duration: e.opts.ingestLimit, run: fmt.Sprintf("r%d-b%d-%s", rep, batch, tag)})
			if err != nil {
				return err
			}
			after, _ := cpuTime(am.pid())
			res.addCPU(target, batch, "Alertmanager process", after-before, r.hot+r.Alerts)
			res.addCPU(target, batch, loadGenerator, time.Duration(r.CPUms*float64(time.Millisecond)), r.hot+r.Alerts)
			if err := failed(r.Result); err != nil {
				return fmt.Errorf("%s ingest, batch %d: %w\n%s", target, batch, err, am.logTail(10))
			}
			res.addIngest(target, batch, r.Result)
			e.logf("run %d: %s ingest, batch %2d: %6.0f alerts/s, p50 %.1f ms, p99 %.1f ms (wrk, %d requests from %d connections)",
				rep, target, batch, r.AlertsPerS, r.P50ms, r.P99ms, r.Requests, conns)
			continue
		}
		args := e.ingestArgs(am.url+"/api/v2/alerts", "api", false, batch, rep)
		if target == amDoubled {
			args.workers *= 2
			args.run += "-2x"
		}
		before, _ := cpuTime(am.pid())
		r, err := e.swload(ctx, args)
		if err != nil {
			return err
		}
		after, _ := cpuTime(am.pid())
		res.addCPU(target, batch, "Alertmanager process", after-before, allAlerts(r))
		res.addCPU(target, batch, loadGenerator, loadCPU(r), allAlerts(r))
		if err := failed(r.Measured); err != nil {
			return fmt.Errorf("%s ingest, batch %d: %w\n%s", target, batch, err, am.logTail(10))
		}
		want += newAlerts(r.Warmup.Alerts) + newAlerts(r.Measured.Alerts)
		res.addIngest(target, batch, r.Measured)
		e.logf("run %d: %s ingest, batch %2d: %6.0f alerts/s, p50 %.1f ms, p99 %.1f ms (%d requests from %d connections, stopped by %s)",
			rep, target, batch, r.Measured.AlertsPerS, r.Measured.P50ms, r.Measured.P99ms, r.Measured.Requests, args.workers, r.Measured.StoppedBy)
	}
	if e.opts.generator == "wrk" {
		return nil // the rotating bodies repeat: Alertmanager holds the distinct ones, uncounted here
	}
	if target != "alertmanager" {
		return nil
	}
	n, err := am.activeAlerts(ctx)
	check := fmt.Sprintf("holds %d alerts, %d sent distinct", n, want)
	if err != nil {
		check = "could not count: " + err.Error()
	}
	res.amCheck = append(res.amCheck, check)
	e.logf("run %d: alertmanager %s", rep, check)
	return nil
}

// stormCoalesce scales the default thread_coalesce (10s for a 60 s storm) to a storm of window.
func stormCoalesce(window time.Duration) time.Duration {
	return time.Duration(float64(10*time.Second) * window.Seconds() / 60).Round(time.Millisecond)
}

// stormResult is one storm.
type stormResult struct {
	coalesce     time.Duration
	sent         load.Result
	postMessages int
	updates      int
	otherCalls   int // other Web API calls after start-up
	rateLimited  int // HTTP 429 answers of the fake
	rootCount    int // occurrences the root message ends with
	reported     int // duplicates the thread replies account for
	complete     bool
	lastCall     time.Duration // from the first alert to the last Slack call
}

func (s stormResult) calls() int { return s.postMessages + s.updates }

var (
	rootCountRE  = regexp.MustCompile(`(\d+) occurrences?\)`)
	moreRE       = regexp.MustCompile(`^(\d+) more occurrences?`)
	startupCalls = map[string]bool{"auth.test": true, "apps.connections.open": true}
)

// stormState reads the incident's root and thread from the fake.
func stormState(s *slackfake.Server) (rootCount, reported int) {
	for _, m := range s.Messages(alertChannel) {
		if m.ThreadTS == "" || m.ThreadTS == m.TS {
			if sm := rootCountRE.FindStringSubmatch(m.Text); sm != nil {
				rootCount, _ = strconv.Atoi(sm[1])
			}
			continue
		}
		if sm := moreRE.FindStringSubmatch(m.Text); sm != nil {
			n, _ := strconv.Atoi(sm[1])
			reported += n
		}
	}
	return rootCount, reported
}

// storm: -storm-alerts duplicates of one alert spread over -storm-window (standing for 60 s,
// thread_coalesce scaled alike) against Slack's fake limiting each channel to 1 message/s. It
// counts the Slack calls until the root shows every occurrence and the thread every duplicate.
func (e *env) storm(ctx context.Context, rep int, res *results) error {
	slack, err := newSlack(1)
	if err != nil {
		return err
	}
	defer slack.Close()
	coalesce := stormCoalesce(e.opts.stormWindow)
	sw, err := e.startStreamwatch(ctx, slack, coalesce, fmt.Sprintf("storm-%d", rep), "")
	if err != nil {
		return err
	}
	defer sw.stop(15 * time.Second)
	began := time.Now()
	r, err := e.swload(ctx, loadArgs{url: sw.url + "/webhooks/alertmanager", format: "webhook", token: true,
		batch: 1, dup: 1, hot: 1, requests: e.opts.stormAlerts, duration: 3*e.opts.stormWindow + 30*time.Second,
		workers: 32, rate: float64(e.opts.stormAlerts) / e.opts.stormWindow.Seconds(), warmup: 0, run: fmt.Sprintf("storm%d", rep)})
	if err != nil {
		return err
	}
	if err := failed(r.Measured); err != nil {
		return fmt.Errorf("storm: %w\n%s", err, sw.logTail(10))
	}
	want := e.opts.stormAlerts
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second+4*coalesce)
	werr := slack.WaitFor(wctx, func(s *slackfake.Server) bool {
		root, reported := stormState(s)
		return root == want+1 && reported == want
	})
	cancel()
	// Anything still coming (a late window) is counted too.
	time.Sleep(2*coalesce + 500*time.Millisecond)
	s := stormResult{coalesce: coalesce, sent: r.Measured, complete: werr == nil, rateLimited: slack.RateLimited()}
	s.rootCount, s.reported = stormState(slack)
	for _, c := range slack.Calls() {
		switch {
		case c.Method == "chat.postMessage":
			s.postMessages++
		case c.Method == "chat.update":
			s.updates++
		case !startupCalls[c.Method]:
			s.otherCalls++
		}
		if startupCalls[c.Method] {
			continue
		}
		if d := c.At.Sub(began); d > s.lastCall {
			s.lastCall = d
		}
	}
	res.storms = append(res.storms, s)
	e.logf("run %d: storm of %d duplicates over %.1f s (coalesce %v): %d Slack calls (%d postMessage, %d update, %d other), %d × 429, root shows %d, thread %d, last call after %.1f s",
		rep, r.Measured.OK, r.Measured.Seconds, coalesce, s.calls(), s.postMessages, s.updates, s.otherCalls, s.rateLimited,
		s.rootCount, s.reported, s.lastCall.Seconds())
	return nil
}

// ingestWrk runs one wrk ingest of streamwatch process sw and records its figures under target
// ("" for "streamwatch"); it returns the alerts answered 2xx, hot ones included.
func (e *env) ingestWrk(ctx context.Context, sw *streamwatch, batch, rep int, target string, res *results) (int, error) {
	if target == "" {
		target = "streamwatch"
	}
	before := e.cpuNow(sw.pid())
	r, err := e.wrkRun(ctx, wrkArgs{url: sw.url + "/webhooks/alertmanager", format: load.Webhook, token: true, batch: batch,
		conns: e.opts.workers, duration: e.opts.ingestLimit, run: fmt.Sprintf("r%d-b%d-%s", rep, batch, sw.prefix)})
	if err != nil {
		return 0, err
	}
	after := e.cpuNow(sw.pid())
	n := r.hot + r.Alerts
	res.addCPU(target, batch, "streamwatch process", after.server-before.server, n)
	res.addCPU(target, batch, "redis-server", after.redis-before.redis, n)
	res.addCPU(target, batch, "Slack's fake", after.fake-before.fake, n)
	res.addCPU(target, batch, loadGenerator, time.Duration(r.CPUms*float64(time.Millisecond)), n)
	if err := failed(r.Result); err != nil {
		return 0, fmt.Errorf("%s ingest, batch %d: %w\n%s", target, batch, err, sw.logTail(10))
	}
	res.addIngest(target, batch, r.Result)
	e.logf("run %d: %s ingest, batch %2d: %6.0f alerts/s, p50 %.1f ms, p99 %.1f ms (wrk, %d requests from %d connections)",
		rep, target, batch, r.AlertsPerS, r.P50ms, r.P99ms, r.Requests, e.opts.workers)
	return n, nil
}

// checkCounted compares what wrk got 2xx for with what Redis and /metrics count: with rotating
// bodies the answers are not parsed, so every alert answered 2xx must be an occurrence of an
// open incident (nothing resolves during ingest) and counted once in
// streamwatch_alerts_received_total.
func (e *env) checkCounted(ctx context.Context, sw *streamwatch, alerts int) string {
	st := state.New(e.redis.client, sw.prefix)
	var open []*state.Incident
	var counted, received int64
	// The requests wrk left in flight at its stop are still being answered: read until Redis
	// and /metrics agree twice in a row (or 5 s passed).
	agreed := 0
	for i := 0; i < 50 && agreed < 2; i++ {
		var err error
		if open, err = st.ListOpen(ctx, ""); err != nil {
			return "could not read Redis: " + err.Error()
		}
		last := counted
		counted = 0
		for _, inc := range open {
			counted += inc.Count
		}
		if received, err = receivedTotal(sw.url + "/metrics"); err != nil {
			return "could not read /metrics: " + err.Error()
		}
		if received == counted && counted == last {
			agreed++
		} else {
			agreed = 0
			time.Sleep(100 * time.Millisecond)
		}
	}
	// wrk stops at its time limit without counting the requests still in flight (at most one a
	// connection in each run): streamwatch recorded those too.
	inFlight := int64(e.opts.workers * (1 + 20))
	if counted < int64(alerts) || counted > int64(alerts)+inFlight || received != counted {
		return fmt.Sprintf("MISMATCH: %d alerts answered 2xx (%d more may have been in flight at wrk's stop); Redis counts %d occurrences, /metrics %d received",
			alerts, inFlight, counted, received)
	}
	return fmt.Sprintf("ok (%s alerts answered 2xx, all in Redis: %s occurrences in %d open incidents, %d of them in requests in flight at wrk's stop; %s in streamwatch_alerts_received_total)",
		human.Digits(int64(alerts)), human.Digits(counted), len(open), counted-int64(alerts), human.Digits(received))
}
