package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
)

// What acknowledging only replicated alerts costs: the ingest of ingestStreamwatch, with one
// replica attached to the redis-server, from a streamwatch with redis.min_replicas_acked 0 and
// one with 1 (each webhook's batch waits for WAIT on the replica), in the same run.

// replicaRun is one ingest run of the comparison.
type replicaRun struct {
	rep, acked, batch int
	r                 load.Result
}

// ingestReplicated attaches a replica to the redis-server, measures the ingest with
// min_replicas_acked 0 and 1 (alternating which goes first) and stops the replica.
func (e *env) ingestReplicated(ctx context.Context, rep int, res *results) error {
	// A replica that attaches gets its first copy at once, not after the 5 s a primary waits
	// by default for more replicas to share one transfer.
	if err := e.redis.client.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		return err
	}
	replica, err := startRedis(ctx, e.tmp, fmt.Sprintf("replica-%d", rep), "--replicaof", "127.0.0.1", e.redis.port())
	if err != nil {
		return err
	}
	defer replica.close()
	online := fmt.Sprintf("port=%s,state=online", replica.port())
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		info, err := e.redis.client.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, online) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replica did not come online within a minute: %v\n%s", err, info)
		}
	}
	order := []int{0, 1}
	if rep%2 == 0 {
		order = []int{1, 0}
	}
	for _, acked := range order {
		slack, err := newSlack(1)
		if err != nil {
			return err
		}
		sw, err := e.startStreamwatch(ctx, slack, 10*time.Second, fmt.Sprintf("replicas-%d-%d", rep, acked), "",
			fmt.Sprintf("min_replicas_acked: %d", acked))
		if err != nil {
			slack.Close()
			return err
		}
		for _, batch := range batches {
			args := e.ingestArgs(sw.url+"/webhooks/alertmanager", "webhook", true, batch, rep)
			args.run += fmt.Sprintf("-acked%d", acked)
			r, err := e.swload(ctx, args)
			if err == nil {
				err = failed(r.Measured)
			}
			if err != nil {
				sw.stop(15 * time.Second)
				slack.Close()
				return fmt.Errorf("ingest with min_replicas_acked %d, batch %d: %w\n%s", acked, batch, err, sw.logTail(10))
			}
			res.replicas = append(res.replicas, replicaRun{rep: rep, acked: acked, batch: batch, r: r.Measured})
			e.logf("run %d: ingest with a replica, min_replicas_acked %d, batch %2d: %6.0f alerts/s, p50 %.1f ms, p99 %.1f ms",
				rep, acked, batch, r.Measured.AlertsPerS, r.Measured.P50ms, r.Measured.P99ms)
		}
		sw.stop(15 * time.Second)
		slack.Close()
	}
	return nil
}

// renderReplicas writes the comparison's section of RESULTS.md.
func (e *env) renderReplicas(b *strings.Builder, res *results) {
	if len(res.replicas) == 0 {
		return
	}
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Acknowledged once replicated: `redis.min_replicas_acked` 1 against 0\n\n")
	w("The ingest above (half duplicates, flood protection on, %d senders) into the same redis-server, with\n", e.opts.workers)
	w("one replica attached (loopback, the same persistence), from a fresh streamwatch with\n")
	w("`min_replicas_acked: 0` and one with `1`, whose webhooks answer only once Redis's `WAIT` confirms\n")
	w("their batch on the replica; the two alternate which goes first. Median of the runs (min–max):\n\n")
	w("| alerts per request | min_replicas_acked 0 | min_replicas_acked 1 | 1 ÷ 0, alerts/s (same run) |\n|---|---|---|---|\n")
	for _, batch := range batches {
		var rate, p50, p99 [2][]float64
		var ratio []float64
		byRep := map[int][2]float64{}
		for _, r := range res.replicas {
			if r.batch != batch {
				continue
			}
			rate[r.acked] = append(rate[r.acked], r.r.AlertsPerS)
			p50[r.acked] = append(p50[r.acked], r.r.P50ms)
			p99[r.acked] = append(p99[r.acked], r.r.P99ms)
			pair := byRep[r.rep]
			pair[r.acked] = r.r.AlertsPerS
			byRep[r.rep] = pair
		}
		for _, pair := range byRep {
			if pair[0] > 0 && pair[1] > 0 {
				ratio = append(ratio, pair[1]/pair[0])
			}
		}
		side := func(acked int) string {
			return fmt.Sprintf("%s; p50 %s, p99 %s", cell(figure{unit: "alerts/s", values: rate[acked]}),
				cell(figure{unit: "ms", values: p50[acked]}), cell(figure{unit: "ms", values: p99[acked]}))
		}
		w("| %d | %s | %s | %s |\n", batch, side(0), side(1), cell(figure{unit: "×", values: ratio}))
	}
	w("\n")
}
