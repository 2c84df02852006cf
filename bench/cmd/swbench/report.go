package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
	"github.com/streamwatch/streamwatch/internal/human"
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
		return human.Digits(int64(math.Round(v)))
	case "ms", "s":
		return sig3(v)
	case "MiB":
		if math.Abs(v) < 10 {
			return fmt.Sprintf("%.2f", v)
		}
		return fmt.Sprintf("%.1f", v)
	case "bytes":
		return human.Digits(int64(math.Round(v)))
	case "×":
		if v >= 100 {
			return fmt.Sprintf("%.0f", v)
		}
		return fmt.Sprintf("%.2f", v)
	}
	if v == math.Trunc(v) {
		return human.Digits(int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func sig3(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return human.Digits(int64(math.Round(v)))
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// cell is "median (min–max)", with the unit when it is a measure (not a count).
func cell(f figure) string {
	s := f.spread()
	if s.n == 0 {
		return "–"
	}
	u := ""
	switch f.unit {
	case "alerts/s", "ms", "s", "MiB", "bytes":
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
	for _, target := range ingestTargets {
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
			for _, c := range []string{"streamwatch process", "redis-server", "Slack's fake", "Alertmanager process", loadGenerator} {
				if v := res.cpu[target][b][c]; len(v) > 0 {
					f := figure{section: sec, name: "CPU per 1,000 alerts: " + c, unit: "ms", values: v}
					if lim, ok := cpuTarget[c]; ok && target == "streamwatch" && b == 20 {
						f.target, f.met = fmt.Sprintf("≤ %g ms", lim), func(m float64) bool { return m <= lim }
					}
					out = append(out, f)
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
		want := ingestTarget[b]
		out = append(out, figure{section: fmt.Sprintf("Alert ingest, batches of %d", b), name: "streamwatch ÷ Alertmanager alerts/s (same run)",
			unit: "×", values: ratios, target: fmt.Sprintf("≥ %g", want), met: func(m float64) bool { return m >= want }})
		var p99 []float64
		for i := range min(len(sw), len(am)) {
			if am[i].P99ms > 0 {
				p99 = append(p99, sw[i].P99ms/am[i].P99ms)
			}
		}
		out = append(out, figure{section: fmt.Sprintf("Alert ingest, batches of %d", b), name: "streamwatch p99 ÷ Alertmanager p99 (same run)",
			unit: "×", values: p99, target: "≤ 0.25", met: func(m float64) bool { return m <= 0.25 }})
		if am2 := res.ingest[amDoubled][b]; len(am2) > 0 {
			var gain []float64
			for i := range min(len(am2), len(am)) {
				gain = append(gain, am2[i].AlertsPerS/am[i].AlertsPerS)
			}
			out = append(out, figure{section: fmt.Sprintf("Alert ingest, batches of %d", b), name: doublingName,
				unit: "×", values: gain, target: "≤ 1.10", met: func(m float64) bool { return m <= 1.10 }})
		}
	}
	return out
}

// ingestTarget is how many times Alertmanager's rate streamwatch's ingest is to reach, by
// alerts per request; cpuTarget the CPU per 1,000 alerts at 20 a request (ms).
var (
	ingestTarget = map[int]float64{1: 1.5, 20: 2}
	cpuTarget    = map[string]float64{"streamwatch process": 15, "redis-server": 10}
)

// ingestTargets are the ingest runs' targets, in the order the results list them.
var ingestTargets = []string{"streamwatch", "alertmanager", amDoubled}

// doublingName is the figure that shows the load generator is not what limits the rate.
const doublingName = "Alertmanager alerts/s from 2× connections ÷ alerts/s (same run)"

func distinctFigures(res *results) []figure {
	var roots, calls, limited, quiet, mem, over, rate []float64
	for _, d := range res.distinct {
		if !d.flood {
			continue
		}
		roots = append(roots, float64(d.roots))
		calls = append(calls, float64(d.postMessages+d.updates))
		limited = append(limited, float64(d.rateLimited))
		if d.quietSeen {
			quiet = append(quiet, d.quiet.Seconds())
		}
		mem = append(mem, float64(d.redis)/(1<<20))
		over = append(over, d.floodOver.Seconds())
		rate = append(rate, d.sent.AlertsPerS)
	}
	sec := "Distinct-alert storm, flood protection on"
	out := []figure{
		{section: sec, name: "root messages", unit: "", values: roots, target: "≤ 21 (the limit + the flood's)",
			met: func(m float64) bool { return m <= 21 }},
		{section: sec, name: "Slack calls (chat.postMessage + chat.update)", unit: "", values: calls},
		{section: sec, name: "HTTP 429 answers (fake: 1 message/s per channel)", unit: "", values: limited},
		{section: sec, name: "first alert → the channel is quiet (last Slack call)", unit: "s", values: quiet},
		{section: sec, name: "first alert → the flood ends (thread says so; quiet_for 5m)", unit: "s", values: over},
		{section: sec, name: "Redis memory of its keys", unit: "MiB", values: mem},
		{section: sec, name: "alerts accepted per second", unit: "alerts/s", values: rate},
	}
	for _, d := range res.distinct {
		if d.flood {
			continue
		}
		sec := "Distinct-alert storm, flood protection off"
		out = append(out,
			figure{section: sec, name: "root messages posted during the storm and two windows", unit: "", values: []float64{float64(d.roots)}},
			figure{section: sec, name: "roots still queued then (1 message/s: that many seconds more)", unit: "", values: []float64{float64(d.backlog)}},
			figure{section: sec, name: "Redis memory of its keys", unit: "MiB", values: []float64{float64(d.redis) / (1 << 20)}},
		)
	}
	return out
}

func redisMemoryFigures(res *results) []figure {
	var out []figure
	for _, m := range res.memory {
		v, unit, name := float64(m.bytes)/(1<<20), "MiB", m.name
		if m.per > 0 {
			v, unit, name = float64(m.bytes)/float64(m.per), "bytes", m.name+", "+m.unit
		}
		out = append(out, figure{section: "Redis memory (used_memory after − before)", name: name, unit: unit, values: []float64{v}})
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
		sec := fmt.Sprintf("Consumer lag, %s partitions (kfake, 3 brokers)", human.Digits(int64(p)))
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

// roundSection is the section of the sampling round at scale.
const roundSection = "Sampling round, 200 pipelines × 10 partitions (kfake, 3 brokers)"

func roundFigures(res *results) []figure {
	t := goFigure(res, "BenchmarkSamplingRound", "ns/op", 1e-6)
	if len(t) == 0 {
		return nil
	}
	return []figure{
		{section: roundSection, name: "time per round", unit: "ms", values: t},
		{section: roundSection, name: "Kafka requests per round", unit: "requests", values: goFigure(res, "BenchmarkSamplingRound", "requests/op", 1),
			target: "≤ 9: bounded by the brokers (a ListOffsets, a DescribeGroups and an OffsetFetch each)", met: func(m float64) bool { return m <= 9 }},
		{section: roundSection, name: "checkpoint progress reads of the 200 pipelines", unit: "ms", values: goFigure(res, "BenchmarkCheckpointProgress", "ns/op", 1e-6)},
		{section: roundSection, name: "storage calls per pipeline and round", unit: "calls", values: goFigure(res, "BenchmarkCheckpointProgress", "storage-calls/pipeline", 1)},
	}
}

func checkpointFigures(res *results) []figure {
	var out []figure
	for _, n := range []int{1000, 10000} {
		sec := fmt.Sprintf("Checkpoint diagnosis, %s batches (local disk)", human.Digits(int64(n)))
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
	distinct, rmem, round := distinctFigures(res), redisMemoryFigures(res), roundFigures(res)
	all := slices.Concat(ingest, storm, distinct, lag, round, ckpt, mem, rmem)
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
	w("| memory | %s |\n| OS | %s |\n| Go | %s |\n| redis-server | %s (%s) |\n",
		m.memory, m.os, m.goVersion, orUnknown(m.redis), redisSetup)
	w("| streamwatch | %s, built with the release flags (`CGO_ENABLED=0 -trimpath -tags nodemo -ldflags '-s -w'`) |\n", e.version)
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
		w("| Alert ingest, %d alert%s per request, half new keys (flood protection on), into Redis with AOF | %s; p50 %s, p99 %s | %s | %s |\n",
			bt, human.Plural(bt), cell(find(ingest, sw, "alerts/s")), cell(find(ingest, sw, "p50 latency per request")),
			cell(find(ingest, sw, "p99 latency per request")), comp, ratio.verdict()+orDash(ratio.target))
	}
	for _, bt := range batches {
		p := find(ingest, fmt.Sprintf("Alert ingest, batches of %d", bt), "streamwatch p99 ÷ Alertmanager p99 (same run)")
		if len(p.values) > 0 {
			w("| p99 latency, %d alert%s per request | %s | Alertmanager %s; ratio %s | %s |\n", bt, human.Plural(bt),
				cell(find(ingest, fmt.Sprintf("Alert ingest, streamwatch, batches of %d", bt), "p99 latency per request")),
				cell(find(ingest, fmt.Sprintf("Alert ingest, alertmanager, batches of %d", bt), "p99 latency per request")), cell(p), p.verdict()+orDash(p.target))
		}
	}
	{
		sec := "Alert ingest, streamwatch, batches of 20"
		sp, rd := find(ingest, sec, "CPU per 1,000 alerts: streamwatch process"), find(ingest, sec, "CPU per 1,000 alerts: redis-server")
		if len(sp.values) > 0 {
			w("| CPU per 1,000 alerts, 20 per request | streamwatch %s ms, redis-server %s ms | Alertmanager %s ms | %s; %s |\n", cell(sp), cell(rd),
				cell(find(ingest, "Alert ingest, alertmanager, batches of 20", "CPU per 1,000 alerts: Alertmanager process")),
				sp.verdict()+orDash(sp.target), rd.verdict()+orDash(rd.target))
		}
	}
	for _, bt := range batches {
		d := find(ingest, fmt.Sprintf("Alert ingest, batches of %d", bt), doublingName)
		if len(d.values) == 0 {
			continue
		}
		w("| Load generator check, %d alert%s per request: Alertmanager from %d, then %d keep-alive connections | | %s: %s × the rate | %s |\n",
			bt, human.Plural(bt), e.opts.workers, 2*e.opts.workers, cell(find(ingest, fmt.Sprintf("Alert ingest, %s, batches of %d", amDoubled, bt), "alerts/s")),
			cell(d), d.verdict())
	}
	if len(res.storms) > 0 {
		s := res.storms[0]
		w("| Storm: %s duplicates of one alert in %s s (stands for 60 s; thread_coalesce %v for 10s) | %s Slack calls, %s × HTTP 429 | Slack fake: 1 message/s per channel | ≤ 30 calls, no 429: %s |\n",
			human.Digits(int64(e.opts.stormAlerts)), sig3(e.opts.stormWindow.Seconds()), s.coalesce,
			cell(storm[0]), cell(storm[1]), metWord(storm[0].met(storm[0].spread().median) && storm[1].met(storm[1].spread().median)))
	}
	if f := find(distinct, "Distinct-alert storm, flood protection on", "root messages"); len(f.values) > 0 {
		sec := "Distinct-alert storm, flood protection on"
		off := "flood protection off: not measured"
		if o := find(distinct, "Distinct-alert storm, flood protection off", "roots still queued then (1 message/s: that many seconds more)"); len(o.values) > 0 {
			off = fmt.Sprintf("flood protection off (as before): %s roots posted, %s more queued (%s at Slack's 1 message/s), Redis %s MiB",
				cell(find(distinct, "Distinct-alert storm, flood protection off", "root messages posted during the storm and two windows")),
				cell(o), hours(o.values[0]), format(find(distinct, "Distinct-alert storm, flood protection off", "Redis memory of its keys").values[0], "MiB"))
		}
		w("| Distinct-alert storm: %s alerts, each its own key, in %s s to one channel | %s roots, %s Slack calls, %s × HTTP 429; quiet %s after the first alert; Redis %s | %s | %s |\n",
			human.Digits(int64(e.opts.distinctAlerts)), sig3(e.opts.distinctWindow.Seconds()), cell(f),
			cell(find(distinct, sec, "Slack calls (chat.postMessage + chat.update)")), cell(find(distinct, sec, "HTTP 429 answers (fake: 1 message/s per channel)")),
			cell(find(distinct, sec, "first alert → the channel is quiet (last Slack call)")), cell(find(distinct, sec, "Redis memory of its keys")),
			off, f.verdict())
	}
	if len(rmem) > 0 {
		var parts []string
		for _, f := range rmem {
			parts = append(parts, f.name+": "+cell(f))
		}
		w("| Redis memory | %s | | |\n", strings.Join(parts, "; "))
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
	if len(round) > 0 {
		w("| Sampling round of 200 pipelines × 10 partitions, one cluster of 3 brokers | %s, %s Kafka requests; checkpoints: %s, %s storage calls a pipeline | | %s |\n",
			cell(round[0]), cell(round[1]), cell(round[2]), cell(round[3]), round[1].verdict())
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
	e.renderReplicas(&b, res)
	e.renderMethod(&b, res)
	e.renderSkipped(&b, res)
	e.renderRuns(&b, res)
	return b.String()
}

func withUnit(name, unit string) string {
	switch unit {
	case "ms", "s", "MiB", "bytes":
		return name + " (" + unit + ")"
	}
	return name
}

// hours is "2.8 h" for a number of seconds.
func hours(seconds float64) string {
	if seconds < 3600 {
		return fmt.Sprintf("%.0f min", seconds/60)
	}
	return fmt.Sprintf("%.1f h", seconds/3600)
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
	w("- **Redis** runs as production should run it: `appendonly yes`, `appendfsync everysec` (every write\n")
	w("  goes to the append-only file, which is fsync'ed once a second), no RDB snapshots, loopback.\n")
	w("- **Alert ingest.** Each run starts a fresh `streamwatch serve` (the release binary, its own process,\n")
	w("  `--log-level %s`, its log to a file, the default configuration: flood protection on) against one\n", o.logLevel)
	w("  redis-server and Slack's fake (`bot/slackfake`, on the same cores), with a fresh key prefix. The\n")
	w("  fake paces chat.postMessage\n")
	w("  as Slack does, 1 per second per channel (burst 3, then HTTP 429 with Retry-After): every new\n")
	w("  incident queues a root message in the Redis outbox, and streamwatch posts them at that pace, as\n")
	w("  it would to Slack. The calls and 429 answers of each run are listed under \"Runs\".\n")
	if o.generator == "wrk" {
		w("  The load generator is wrk (Debian's package, a separate process, `-t 2 -c %d`, `--latency`): a C\n", o.workers)
		w("  generator spends far less CPU per request than swload, so both servers are driven harder on\n")
		w("  this 2-core machine. Each run first sends the %d hot alerts once, then rotates for %v through\n", hotAlerts, o.ingestLimit)
		w("  %s prepared bodies of 1 or 20 alerts (a Lua script reads them from a file; the token from the\n", human.Digits(wrkBodies))
		w("  environment), closed loop: after the first pass the new alerts come back as re-sends, as\n")
		w("  Alertmanager repeats a storm's alerts. The Redis check after each run: every alert wrk got 2xx\n")
		w("  for is an occurrence of an open incident in Redis, and streamwatch_alerts_received_total counts\n")
		w("  the same (wrk does not count the requests in flight at its stop, which streamwatch recorded too:\n")
		w("  at most one a connection). `-generator swload` measures with swload instead, as described next.\n")
	}
	w("  The load generator (`bench/cmd/swload`, a separate process, loopback only) works as wrk does:\n")
	w("  each sender owns one keep-alive connection and sends its next request as soon as it has read\n")
	w("  the answer (net/http's Request.Write and ReadResponse, no client pool); its own CPU time is a\n")
	w("  figure below, and the Alertmanager runs are repeated from twice the connections to show that\n")
	w("  it does not hold the rate back. It first sends %d hot\n", hotAlerts)
	w("  alerts once, then %d unmeasured requests, then requests of 1 alert (at most %s) and then of\n",
		warmup, human.Digits(int64(o.requests1)))
	w("  20 alerts (at most %s), each for at most %v, from %d concurrent senders, closed loop.\n",
		human.Digits(int64(o.requests20)), o.ingestLimit, o.workers)
	w("  Every other alert repeats one of the hot alerts (a duplicate of an open incident); the others are\n")
	w("  new alerts with new keys, all to one channel: after the first 20 minus the hot ones (the flood\n")
	w("  limit, 20 new incidents a minute), each joins the channel's flood incident, recorded under its own\n")
	w("  key and counted, instead of opening an incident and a Slack message of its own. streamwatch answers\n")
	w("  200 only after Redis has recorded every alert of the request; after each run the Redis check\n")
	w("  compares the incidents and occurrence counts in Redis with what the answers claimed. alerts/s is alerts\n")
	w("  answered 200 over the time from the first request to the last answer; latency is per request.\n")
	w("  CPU per 1,000 alerts is each process's CPU time (/proc/<pid>/stat; Slack's fake: this process's\n")
	w("  rusage) over the whole load run, warm-up included, divided by its alerts.\n")
	w("- **Alertmanager.** Prometheus Alertmanager %s (`go install`, cached), its own process, fresh\n", o.amVersion)
	w("  `--storage.path`, `--cluster.listen-address=` (no gossip), a route to a receiver with no\n")
	w("  integrations, gets the same alerts with the same load on `POST /api/v2/alerts`. It keeps alerts\n")
	w("  in memory only; streamwatch writes each to Redis before answering. The two alternate which goes\n")
	w("  first in each run; the ratio pairs the two figures of the same run. Then a second fresh\n")
	w("  Alertmanager gets the same load from %d connections instead of %d: its rate over the first one's\n", 2*o.workers, o.workers)
	w("  (target ≤ 1.10) shows whether more connections, or a faster generator, would measure more.\n")
	w("- **Storm.** Scaled in time by %s: %s duplicates of one alert (1 per request, evenly paced by\n",
		fmt.Sprintf("%.3g", time.Minute.Seconds()/o.stormWindow.Seconds()), human.Digits(int64(o.stormAlerts)))
	w("  the load generator) over %s s instead of 60 s, with `slack.thread_coalesce` scaled from 10s to the\n", sig3(o.stormWindow.Seconds()))
	w("  value in the table, so the storm spans the same number of coalescing windows. Slack's fake allows\n")
	w("  1 chat.postMessage per second per channel (`slackfake.Options{ChannelRateLimit: 1}`, burst 3);\n")
	w("  the scaled storm posts 6 times as often as a real one, so it is the harder case for the limit.\n")
	w("  Calls are counted until the root message shows every occurrence and the thread replies account\n")
	w("  for every duplicate, plus two more windows.\n")
	w("- **Distinct-alert storm.** %s alerts, each with a key of its own, evenly paced over %s s in real\n",
		human.Digits(int64(o.distinctAlerts)), sig3(o.distinctWindow.Seconds()))
	w("  time (not scaled: the flood limit is per minute), 1 alert per request from up to 32 connections, to\n")
	w("  one channel of a fresh streamwatch with the default configuration (`thread_coalesce` 10s, flood\n")
	w("  limit 20 new incidents a minute, `quiet_for` 5m), against Slack's fake at 1 message/s per channel.\n")
	w("  Counted until no Slack call came for two coalescing windows (\"quiet\"); when the flood ends is\n")
	w("  read from Redis (the rate fell to the limit a minute after the storm's last keys, plus quiet_for),\n")
	w("  not waited for. Redis memory is MEMORY USAGE (exact) of every key of the run's prefix. %d run%s,\n",
		min(o.distinctReps, o.reps), human.Plural(min(o.distinctReps, o.reps)))
	w("  and once more with `alerts.flood.new_incidents_per_minute: 0` (flood protection off, what\n")
	w("  streamwatch did before), stopped two windows after the storm with its roots still queued.\n")
	w("- **Redis memory** (once): a fresh redis-server with the same settings, emptied before each shape;\n")
	w("  `used_memory` after − before. The alerts are recorded through package state, with the scripts\n")
	w("  streamwatch runs, 1,000 per script run: 10,000 distinct alerts with flood protection off, their\n")
	w("  roots then delivered as the deliverer does (per open incident); 999 more alerts (fingerprints) of\n")
	w("  one incident (per stored alert); 10,000 duplicates; 100,000 distinct alerts in one channel with\n")
	w("  flood protection on and off, measured right after (undelivered roots included).\n")
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
	for _, target := range ingestTargets {
		for _, bt := range batches {
			for i, r := range res.ingest[target][bt] {
				w("| %d | %s | %d | %s | %s | %s | %s | %s | %s |\n", i+1, target, bt, human.Digits(int64(r.Requests)), r.StoppedBy,
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
	for i, d := range res.distinct {
		quiet := "not quiet when the run stopped waiting"
		if d.quietSeen {
			quiet = fmt.Sprintf("quiet %.1f s after the first alert", d.quiet.Seconds())
		}
		w("- distinct storm %d, flood protection %s: %d alerts in %.1f s (%s/s, %d opened, %d flooded); %d roots, %d chat.postMessage + %d chat.update, %d × 429; %s; %d outbox entries left; Redis: %d keys, %.2f MiB\n",
			i+1, onOff(d.flood), d.sent.OK, d.sent.Seconds, format(d.sent.AlertsPerS, "alerts/s"), d.sent.Opened, d.sent.Flooded,
			d.roots, d.postMessages, d.updates, d.rateLimited, quiet, d.backlog, d.redisKeys, float64(d.redis)/(1<<20))
	}
	for _, m := range res.memory {
		w("- Redis memory, %s: %s bytes%s — %s\n", m.name, human.Digits(m.bytes), perText(m), m.note)
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
