package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// A/B: `make bench-ab BASE=<commit>` (scripts/bench-ab) builds the base commit's release
// binary and this tree's, then runs the ingest measurement of both on this machine in one run,
// alternating which goes first (ABBA…), with the same Redis, the same load and the same
// settings, and prints each headline figure of both with the ratio. A figure worse by more
// than abWorse is flagged. It is a benchmark, not a test: CI does not run it.

// abWorse is how much worse a figure may be before the table flags it.
const abWorse = 0.10

// abRun alternates the base binary and this tree's over reps runs of the streamwatch ingest.
func (e *env) abRun(ctx context.Context, res *results) error {
	change := e.streamwatchBin
	for rep := 1; rep <= e.opts.reps; rep++ {
		order := []string{"base", "change"}
		if rep%2 == 0 {
			order[0], order[1] = order[1], order[0]
		}
		for _, side := range order {
			e.streamwatchBin = change
			if side == "base" {
				e.streamwatchBin = e.opts.abBase
			}
			if err := e.ingestSide(ctx, rep, side, res); err != nil {
				return fmt.Errorf("run %d, %s: %w", rep, side, err)
			}
		}
	}
	e.streamwatchBin = change
	return nil
}

// ingestSide is one ingest run (batches of 1, then 20) of the binary in e.streamwatchBin,
// recorded under target.
func (e *env) ingestSide(ctx context.Context, rep int, target string, res *results) error {
	slack, err := newSlack(1)
	if err != nil {
		return err
	}
	defer slack.Close()
	sw, err := e.startStreamwatch(ctx, slack, 10*time.Second, fmt.Sprintf("ab-%s-%d", target, rep), "")
	if err != nil {
		return err
	}
	defer sw.stop(15 * time.Second)
	alerts := 0
	for _, batch := range batches {
		n, err := e.ingestWrk(ctx, sw, batch, rep, target, res)
		if err != nil {
			return err
		}
		alerts += n
	}
	check := e.checkCounted(ctx, sw, alerts)
	e.logf("run %d: %s: Redis %s", rep, target, check)
	if strings.HasPrefix(check, "MISMATCH") {
		return fmt.Errorf("%s", check)
	}
	return nil
}

// abTable prints the headline figures of both sides with their ratio.
func (e *env) abTable(w io.Writer, res *results, m machine) {
	fmt.Fprintf(w, "\nA/B on %s, %d cores; load average %s before, %s after; %d alternating runs each, median (min–max)\n",
		m.cpu, m.cores, m.loadBefore, m.loadAfter, e.opts.reps)
	fmt.Fprintf(w, "base: %s   change: this tree (%s)\n\n", e.opts.abName, e.version)
	fmt.Fprintf(w, "| figure | base | change | change ÷ base | |\n|---|---|---|---:|---|\n")
	for _, b := range batches {
		type row struct {
			name   string
			values func(target string) []float64
			higher bool // higher is better
		}
		ingest := func(f func(i int, target string) float64) func(string) []float64 {
			return func(target string) []float64 {
				var v []float64
				for i := range res.ingest[target][b] {
					v = append(v, f(i, target))
				}
				return v
			}
		}
		rows := []row{
			{fmt.Sprintf("alerts/s, %d a request", b), ingest(func(i int, t string) float64 { return res.ingest[t][b][i].AlertsPerS }), true},
			{fmt.Sprintf("p50 ms, %d a request", b), ingest(func(i int, t string) float64 { return res.ingest[t][b][i].P50ms }), false},
			{fmt.Sprintf("p99 ms, %d a request", b), ingest(func(i int, t string) float64 { return res.ingest[t][b][i].P99ms }), false},
			{fmt.Sprintf("streamwatch CPU ms per 1,000 alerts, %d a request", b), func(t string) []float64 { return res.cpu[t][b]["streamwatch process"] }, false},
			{fmt.Sprintf("redis-server CPU ms per 1,000 alerts, %d a request", b), func(t string) []float64 { return res.cpu[t][b]["redis-server"] }, false},
		}
		for _, r := range rows {
			base, change := spreadOf(r.values("base")), spreadOf(r.values("change"))
			if base.n == 0 || change.n == 0 || base.median == 0 {
				continue
			}
			ratio := change.median / base.median
			flag := ""
			if (r.higher && ratio < 1-abWorse) || (!r.higher && ratio > 1+abWorse) {
				flag = fmt.Sprintf("**worse by more than %.0f%%**", abWorse*100)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.2f | %s |\n", r.name, abCell(base), abCell(change), ratio, flag)
		}
	}
	fmt.Fprintln(w)
}

func abCell(s spread) string {
	return fmt.Sprintf("%s (%s–%s)", sig3(s.median), sig3(s.min), sig3(s.max))
}
