package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
)

// spread is min, median and max of a figure's runs.
type spread struct {
	min, median, max float64
	n                int
}

func spreadOf(values []float64) spread {
	if len(values) == 0 {
		return spread{min: math.NaN(), median: math.NaN(), max: math.NaN()}
	}
	v := slices.Clone(values)
	slices.Sort(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return spread{min: v[0], median: med, max: v[len(v)-1], n: len(v)}
}

// figure is one row of the results.
type figure struct {
	section string
	name    string
	unit    string
	values  []float64
	target  string
	met     func(median float64) bool // nil without a target
}

func (f figure) spread() spread { return spreadOf(f.values) }

func (f figure) verdict() string {
	if f.met == nil || len(f.values) == 0 {
		return f.target
	}
	if f.met(f.spread().median) {
		return f.target + ": met"
	}
	return f.target + ": **not met**"
}

// format writes a value for its unit: three significant digits for times, thousands separators
// for rates.
func format(v float64, unit string) string {
	if math.IsNaN(v) {
		return "–"
	}
	switch unit {
	case "alerts/s":
		return thousands(int64(math.Round(v)))
	case "ms", "s":
		return sig3(v)
	case "MiB":
		return fmt.Sprintf("%.1f", v)
	case "×":
		if v >= 100 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.2f", v)
	}
	if v == math.Trunc(v) {
		return thousands(int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func sig3(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return thousands(int64(math.Round(v)))
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// cell is "median (min–max)", with the unit when it is a measure (not a count).
func cell(f figure) string {
	s := f.spread()
	if s.n == 0 {
		return "–"
	}
	u := ""
	switch f.unit {
	case "alerts/s", "ms", "s", "MiB":
		u = " " + f.unit
	}
	if s.min == s.max {
		return fmt.Sprintf("%s%s", format(s.median, f.unit), u)
	}
	return fmt.Sprintf("%s%s (%s–%s)", format(s.median, f.unit), u, format(s.min, f.unit), format(s.max, f.unit))
}

// ingestFigures: throughput and latency by target and batch, and the paired ratios.
func ingestFigures(res *results) []figure {
	var out []figure
	pick := func(rs []load.Result, f func(load.Result) float64) []float64 {
		var v []float64
		for _, r := range rs {
			v = append(v, f(r))
		}
		return v
	}
	for _, target := range []string{"streamwatch", "alertmanager"} {
		for _, b := range batches {
			rs := res.ingest[target][b]
			if len(rs) == 0 {
				continue
			}
			sec := fmt.Sprintf("Alert ingest, %s, batches of %d", target, b)
			out = append(out,
				figure{section: sec, name: "alerts/s", unit: "alerts/s", values: pick(rs, func(r load.Result) float64 { return r.AlertsPerS })},
				figure{section: sec, name: "p50 latency per request", unit: "ms", values: pick(rs, func(r load.Result) float64 { return r.P50ms })},
				figure{section: sec, name: "p99 latency per request", unit: "ms", values: pick(rs, func(r load.Result) float64 { return r.P99ms })},
			)
			for _, c := range []string{"streamwatch process", "redis-server", "Slack's fake", "Alertmanager process"} {
				if v := res.cpu[target][b][c]; len(v) > 0 {
					out = append(out, figure{section: sec, name: "CPU per 1,000 alerts: " + c, unit: "ms", values: v})
				}
			}
		}
	}
	for _, b := range batches {
		sw, am := res.ingest["streamwatch"][b], res.ingest["alertmanager"][b]
		if len(sw) == 0 || len(am) == 0 {
			continue
		}
		var ratios []float64
		for i := range min(len(sw), len(am)) {
			ratios = append(ratios, sw[i].AlertsPerS/am[i].AlertsPerS)
		}
		out = append(out, figure{section: fmt.Sprintf("Alert ingest, batches of %d", b), name: "streamwatch ÷ Alertmanager alerts/s (same run)",
			unit: "×", values: ratios, target: "≥ 1", met: func(m float64) bool { return m >= 1 }})
	}
	return out
}

func stormFigures(res *results) []figure {
	var calls, limited, rate, last []float64
	for _, s := range res.storms {
		calls = append(calls, float64(s.calls()))
		limited = append(limited, float64(s.rateLimited))
		rate = append(rate, s.sent.AlertsPerS)
		last = append(last, s.lastCall.Seconds())
	}
	sec := "Storm"
	return []figure{
		{section: sec, name: "Slack calls (chat.postMessage + chat.update)", unit: "", values: calls, target: "≤ 30",
			met: func(m float64) bool { return m <= 30 }},
		{section: sec, name: "HTTP 429 answers (fake: 1 message/s per channel)", unit: "", values: limited, target: "0",
			met: func(m float64) bool { return m == 0 }},
		{section: sec, name: "duplicates accepted per second", unit: "alerts/s", values: rate},
		{section: sec, name: "first alert → last Slack call", unit: "s", values: last},
	}
}

// goFigure is one metric of one Go benchmark across its runs.
func goFigure(res *results, bench, metric string, scale float64) []float64 {
	var v []float64
	for _, run := range res.goBench[bench] {
		if x, ok := run[metric]; ok {
			v = append(v, x*scale)
		}
	}
	return v
}

func pairedRatio(num, den []float64) []float64 {
	var v []float64
	for i := range min(len(num), len(den)) {
		if den[i] > 0 {
			v = append(v, num[i]/den[i])
		}
	}
	return v
}

func lagFigures(res *results) []figure {
	var out []figure
	for _, p := range []int{1000, 10000} {
		sec := fmt.Sprintf("Consumer lag, %s partitions (kfake, 3 brokers)", thousands(int64(p)))
		name := func(impl string) string { return fmt.Sprintf("BenchmarkLag/partitions=%d/%s", p, impl) }
		sw := goFigure(res, name("streamwatch"), "ns/op", 1e-6)
		kadm := goFigure(res, name("kadm"), "ns/op", 1e-6)
		naive := goFigure(res, name("sarama-naive"), "ns/op", 1e-6)
		if len(sw) == 0 {
			continue
		}
		out = append(out,
			figure{section: sec, name: "streamwatch: time to the report", unit: "ms", values: sw},
			figure{section: sec, name: "streamwatch: Kafka requests per report", unit: "requests", values: goFigure(res, name("streamwatch"), "requests/op", 1)},
			figure{section: sec, name: "kadm.Lag: time", unit: "ms", values: kadm},
			figure{section: sec, name: "kadm.Lag: Kafka requests", unit: "requests", values: goFigure(res, name("kadm"), "requests/op", 1)},
			figure{section: sec, name: "naive sarama loop: time", unit: "ms", values: naive},
			figure{section: sec, name: "naive sarama loop: Kafka requests", unit: "requests", values: goFigure(res, name("sarama-naive"), "requests/op", 1)},
			figure{section: sec, name: "kadm time ÷ streamwatch time", unit: "×", values: pairedRatio(kadm, sw)},
			figure{section: sec, name: "naive sarama time ÷ streamwatch time", unit: "×", values: pairedRatio(naive, sw)},
		)
	}
	return out
}

func checkpointFigures(res *results) []figure {
	var out []figure
	for _, n := range []int{1000, 10000} {
		sec := fmt.Sprintf("Checkpoint diagnosis, %s batches (local disk)", thousands(int64(n)))
		name := fmt.Sprintf("BenchmarkCheckpoint/batches=%d", n)
		t := goFigure(res, name, "ns/op", 1e-6)
		if len(t) == 0 {
			continue
		}
		out = append(out,
			figure{section: sec, name: "diagnosis time", unit: "ms", values: t},
			figure{section: sec, name: "files read", unit: "files", values: goFigure(res, name, "files-read/op", 1)},
			figure{section: sec, name: "directories listed", unit: "listings", values: goFigure(res, name, "listings/op", 1)},
		)
	}
	return out
}

func memoryFigures(res *results) []figure {
	return []figure{
		{section: "Memory of the streamwatch process", name: "resident set idle (VmRSS, 2 s after ready)", unit: "MiB", values: res.idleRSS},
		{section: "Memory of the streamwatch process", name: "peak resident set under the ingest load (VmHWM)", unit: "MiB", values: res.peakRSS},
	}
}

// find returns the figure of a section and name (zero when absent).
func find(figs []figure, section, name string) figure {
	for _, f := range figs {
		if f.section == section && f.name == name {
			return f
		}
	}
	return figure{}
}

// render writes RESULTS.md.
func (e *env) render(m machine, res *results, took time.Duration) string {
	ingest, storm, lag, ckpt, mem := ingestFigures(res), stormFigures(res), lagFigures(res), checkpointFigures(res), memoryFigures(res)
	all := slices.Concat(ingest, storm, lag, ckpt, mem)
	date := e.started.UTC().Format("2006-01-02")
	virt := ""
	if m.virtual {
		virt = ", virtual machine"
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# streamwatch benchmarks\n\n")
	w("Written by `make bench` (scripts/bench → bench/cmd/swbench) on %s UTC; the whole run took %s.\n\n",
		e.started.UTC().Format("2006-01-02 15:04"), took.Round(time.Second))
	w("| machine | |\n|---|---|\n")
	w("| CPU | %s, %d cores (%d logical CPUs)%s |\n", m.cpu, m.cores, m.logical, virt)
	w("| memory | %s |\n| OS | %s |\n| Go | %s |\n| redis-server | %s (loopback, no RDB/AOF, as the tests run it) |\n",
		m.memory, m.os, m.goVersion, orUnknown(m.redis))
	w("| streamwatch | %s, built with the release flags (`CGO_ENABLED=0 -trimpath -ldflags '-s -w'`) |\n", e.version)
	w("| load average (1/5/15 min) | %s before, %s after |\n\n", m.loadBefore, m.loadAfter)
	w("**This machine is shared and was busy with other work while it measured** (see the load average): the\n")
	w("figures are noisy. Every figure is the median of %d runs with the minimum and maximum beside it;\n", res.reps)
	w("compare medians, and expect another run to land anywhere in the range or beyond it.\n\n")

	w("## Summary\n\n<!-- bench:readme:begin -->\n")
	w("Measured %s on %s, %d cores, %s (shared, noisy machine); median of %d runs (min–max):\n\n",
		date, m.cpu, m.cores, m.memory, res.reps)
	w("| measurement | streamwatch | comparison | target |\n|---|---|---|---|\n")
	for _, bt := range batches {
		sw := fmt.Sprintf("Alert ingest, streamwatch, batches of %d", bt)
		am := fmt.Sprintf("Alert ingest, alertmanager, batches of %d", bt)
		ratio := find(ingest, fmt.Sprintf("Alert ingest, batches of %d", bt), "streamwatch ÷ Alertmanager alerts/s (same run)")
		comp := "Alertmanager not measured (see Skipped)"
		if len(ratio.values) > 0 {
			comp = fmt.Sprintf("Alertmanager `POST /api/v2/alerts`: %s; ratio %s", cell(find(ingest, am, "alerts/s")), cell(ratio))
		}
		w("| Alert ingest, %d alert%s per request, half duplicates, into Redis | %s; p50 %s, p99 %s | %s | %s |\n",
			bt, plural(bt), cell(find(ingest, sw, "alerts/s")), cell(find(ingest, sw, "p50 latency per request")),
			cell(find(ingest, sw, "p99 latency per request")), comp, ratio.verdict()+orDash(ratio.target))
	}
	if len(res.storms) > 0 {
		s := res.storms[0]
		w("| Storm: %s duplicates of one alert in %s s (stands for 60 s; thread_coalesce %v for 10s) | %s Slack calls, %s × HTTP 429 | Slack fake: 1 message/s per channel | ≤ 30 calls, no 429: %s |\n",
			thousands(int64(e.opts.stormAlerts)), sig3(e.opts.stormWindow.Seconds()), s.coalesce,
			cell(storm[0]), cell(storm[1]), metWord(storm[0].met(storm[0].spread().median) && storm[1].met(storm[1].spread().median)))
	}
	for _, p := range []string{"1,000", "10,000"} {
		sec := fmt.Sprintf("Consumer lag, %s partitions (kfake, 3 brokers)", p)
		sw := find(lag, sec, "streamwatch: time to the report")
		if len(sw.values) == 0 {
			continue
		}
		w("| Lag report, %s partitions | %s, %s Kafka requests | kadm.Lag %s (%s× streamwatch's time); naive sarama loop %s, %s requests (%s×) | |\n", p,
			cell(sw), cell(find(lag, sec, "streamwatch: Kafka requests per report")),
			cell(find(lag, sec, "kadm.Lag: time")), format(find(lag, sec, "kadm time ÷ streamwatch time").spread().median, "×"),
			cell(find(lag, sec, "naive sarama loop: time")), cell(find(lag, sec, "naive sarama loop: Kafka requests")),
			format(find(lag, sec, "naive sarama time ÷ streamwatch time").spread().median, "×"))
	}
	for _, n := range []string{"1,000", "10,000"} {
		sec := fmt.Sprintf("Checkpoint diagnosis, %s batches (local disk)", n)
		t := find(ckpt, sec, "diagnosis time")
		if len(t.values) == 0 {
			continue
		}
		w("| Checkpoint diagnosis, %s batches | %s, %s files read | | |\n", n, cell(t), cell(find(ckpt, sec, "files read")))
	}
	w("| Memory (resident set) | %s idle, %s peak under ingest | | |\n", cell(mem[0]), cell(mem[1]))
	w("<!-- bench:readme:end -->\n\n")

	w("## Every figure (min / median / max over the runs)\n\n")
	w("| section | figure | min | median | max | runs | target |\n|---|---|---:|---:|---:|---:|---|\n")
	for _, f := range all {
		s := f.spread()
		if s.n == 0 {
			continue
		}
		w("| %s | %s | %s | %s | %s | %d | %s |\n", f.section, withUnit(f.name, f.unit),
			format(s.min, f.unit), format(s.median, f.unit), format(s.max, f.unit), s.n, f.verdict())
	}
	w("\n")
	e.renderMethod(&b, res)
	e.renderSkipped(&b, res)
	e.renderRuns(&b, res)
	return b.String()
}

func withUnit(name, unit string) string {
	switch unit {
	case "ms", "s", "MiB":
		return name + " (" + unit + ")"
	}
	return name
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return ""
}

func metWord(ok bool) string {
	if ok {
		return "met"
	}
	return "**not met**"
}

func (e *env) renderMethod(b *strings.Builder, res *results) {
	o := e.opts
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## How each figure is measured\n\n")
	w("- **Alert ingest.** Each run starts a fresh `streamwatch serve` (the release binary, its own process,\n")
	w("  `--log-level %s`, its log to a file) against one redis-server and Slack's fake\n", o.logLevel)
	w("  (`bot/slackfake`, on the same cores), with a fresh key prefix. The fake paces chat.postMessage\n")
	w("  as Slack does, 1 per second per channel (burst 3, then HTTP 429 with Retry-After): every new\n")
	w("  incident queues a root message in the Redis outbox, and streamwatch posts them at that pace, as\n")
	w("  it would to Slack. The calls and 429 answers of each run are listed under \"Runs\".\n")
	w("  The load generator (`bench/cmd/swload`, a separate process, loopback only) first sends %d hot\n", hotAlerts)
	w("  alerts once, then %d unmeasured requests, then requests of 1 alert (at most %s) and then of\n",
		warmup, thousands(int64(o.requests1)))
	w("  20 alerts (at most %s), each for at most %v, from %d concurrent senders, closed loop.\n",
		thousands(int64(o.requests20)), o.ingestLimit, o.workers)
	w("  Every other alert repeats one of the hot alerts (a duplicate of an open incident); the others are\n")
	w("  new alerts, each opening an incident (and a Slack message). streamwatch answers 200 only after\n")
	w("  Redis has recorded every alert of the request; after each run the Redis check compares the\n")
	w("  incidents and occurrence counts in Redis with what the answers claimed. alerts/s is alerts\n")
	w("  answered 200 over the time from the first request to the last answer; latency is per request.\n")
	w("  CPU per 1,000 alerts is each process's CPU time (/proc/<pid>/stat; Slack's fake: this process's\n")
	w("  rusage) over the whole load run, warm-up included, divided by its alerts.\n")
	w("- **Alertmanager.** Prometheus Alertmanager %s (`go install`, cached), its own process, fresh\n", o.amVersion)
	w("  `--storage.path`, `--cluster.listen-address=` (no gossip), a route to a receiver with no\n")
	w("  integrations, gets the same alerts with the same load on `POST /api/v2/alerts`. It keeps alerts\n")
	w("  in memory only; streamwatch writes each to Redis before answering. The two alternate which goes\n")
	w("  first in each run; the ratio pairs the two figures of the same run.\n")
	w("- **Storm.** Scaled in time by %s: %s duplicates of one alert (1 per request, evenly paced by\n",
		fmt.Sprintf("%.3g", time.Minute.Seconds()/o.stormWindow.Seconds()), thousands(int64(o.stormAlerts)))
	w("  the load generator) over %s s instead of 60 s, with `slack.thread_coalesce` scaled from 10s to the\n", sig3(o.stormWindow.Seconds()))
	w("  value in the table, so the storm spans the same number of coalescing windows. Slack's fake allows\n")
	w("  1 chat.postMessage per second per channel (`slackfake.Options{ChannelRateLimit: 1}`, burst 3);\n")
	w("  the scaled storm posts 6 times as often as a real one, so it is the harder case for the limit.\n")
	w("  Calls are counted until the root message shows every occurrence and the thread replies account\n")
	w("  for every duplicate, plus two more windows.\n")
	w("- **Lag and checkpoint** are the Go benchmarks of package bench, run once per run in a process\n")
	w("  of their own (`bench.test -test.bench . -test.count 1 -test.benchtime %s`): their %d rounds\n", o.benchtime, o.reps)
	w("  spread over the whole measurement, and the two sides of a ratio are measured back to back.\n")
	w("- **Lag** (bench/lag_test.go, `go test -run '^$' -bench Lag ./bench`): an in-process kfake\n")
	w("  cluster of 3 brokers, one topic, 2 records per partition, the group committed at 1 everywhere.\n")
	w("  Time per report with a warm client; Kafka requests are counted at the brokers (every request of\n")
	w("  every API). streamwatch is `kafka.Monitor.PipelineLag` (what `lag PIPELINE` runs) with 60 stored\n")
	w("  samples, including the exact age of the 5 most-lagging partitions (at most one Fetch per\n")
	w("  leader, so 7 or 8 requests depending on where they lie); kadm is franz-go's\n")
	w("  `kadm.Lag`; the naive loop is sarama's `ListConsumerGroupOffsets` then `client.GetOffset` per partition.\n")
	w("- **Checkpoint** (bench/checkpoint_test.go, `go test -run '^$' -bench Checkpoint ./bench`):\n")
	w("  `spark.Diagnose` on a healthy checkpoint written by `sparktest` on local disk (offsets/ and\n")
	w("  commits/ with .crc sidecars, a 24-partition Kafka source, 200 state partitions keeping 3\n")
	w("  versions; the page cache is warm). Files read, directories listed are counted at the store.\n")
	w("- **Memory.** `/proc/<pid>/status` of the streamwatch process: VmRSS 2 s after /readyz first\n")
	w("  answered 200, and VmHWM (the peak resident set since start) after both ingest runs.\n\n")
}

func (e *env) renderSkipped(b *strings.Builder, res *results) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Skipped\n\n")
	skipped := false
	if e.alertmanagerErr != nil {
		w("- Alertmanager comparison skipped: %s\n", e.alertmanagerErr)
		skipped = true
	}
	if res.goBenchSkipped != "" {
		w("- Lag and checkpoint benchmarks: %s\n", res.goBenchSkipped)
		skipped = true
	}
	if !skipped {
		w("Nothing was skipped.\n")
	}
	w("\n")
}

func (e *env) renderRuns(b *strings.Builder, res *results) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Runs\n\n")
	w("| run | target | batch | requests | stopped by | alerts/s | p50 ms | p99 ms | max ms |\n|---:|---|---:|---:|---|---:|---:|---:|---:|\n")
	for _, target := range []string{"streamwatch", "alertmanager"} {
		for _, bt := range batches {
			for i, r := range res.ingest[target][bt] {
				w("| %d | %s | %d | %s | %s | %s | %s | %s | %s |\n", i+1, target, bt, thousands(int64(r.Requests)), r.StoppedBy,
					format(r.AlertsPerS, "alerts/s"), sig3(r.P50ms), sig3(r.P99ms), sig3(r.MaxMs))
			}
		}
	}
	w("\n")
	for i, c := range res.persisted {
		w("- run %d, streamwatch Redis check: %s\n", i+1, c)
	}
	for i, c := range res.amCheck {
		w("- run %d, Alertmanager: %s\n", i+1, c)
	}
	for i, s := range res.storms {
		state := "every occurrence shown"
		if !s.complete {
			state = fmt.Sprintf("**incomplete**: root shows %d, thread %d", s.rootCount, s.reported)
		}
		w("- run %d, storm: %d duplicates in %.1f s (%s/s), coalesce %v: %d chat.postMessage + %d chat.update (+%d other calls), %d × 429, %s, last call %.1f s after the first alert\n",
			i+1, s.sent.OK, s.sent.Seconds, format(s.sent.AlertsPerS, "alerts/s"), s.coalesce, s.postMessages, s.updates,
			s.otherCalls, s.rateLimited, state, s.lastCall.Seconds())
	}
	if len(res.goBenchOrder) > 0 {
		w("\nGo benchmarks, every run (ns/op and the custom metrics):\n\n```\n")
		for _, name := range res.goBenchOrder {
			for _, run := range res.goBench[name] {
				var units []string
				for u := range run {
					units = append(units, u)
				}
				slices.Sort(units)
				var parts []string
				for _, u := range units {
					parts = append(parts, fmt.Sprintf("%g %s", run[u], u))
				}
				w("%s  %s\n", name, strings.Join(parts, "  "))
			}
		}
		w("```\n")
	}
}
