package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// What acknowledging only replicated alerts costs: the ingest of ingestStreamwatch, with one
// replica attached to the redis-server, from a streamwatch with redis.min_replicas_acked 0 and
// one with 1 (each webhook's batch waits for WAIT on the replica), in the same run. The
// figures are recorded under the targets replicaTarget names, which the ingest comparison's
// tables leave out; renderReplicas writes them in a section of their own.

// replicaTarget names the ingest figures of a streamwatch with min_replicas_acked acked.
func replicaTarget(acked int) string {
	return fmt.Sprintf("a replica attached, min_replicas_acked %d", acked)
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
		if err := e.ingestReplicatedOnce(ctx, rep, acked, res); err != nil {
			return fmt.Errorf("ingest with min_replicas_acked %d: %w", acked, err)
		}
	}
	return nil
}

func (e *env) ingestReplicatedOnce(ctx context.Context, rep, acked int, res *results) error {
	target := replicaTarget(acked)
	slack, err := newSlack(1)
	if err != nil {
		return err
	}
	defer slack.Close()
	sw, err := e.startStreamwatch(ctx, slack, 10*time.Second, fmt.Sprintf("replicas-%d-%d", rep, acked), "",
		fmt.Sprintf("min_replicas_acked: %d", acked))
	if err != nil {
		return err
	}
	defer sw.stop(15 * time.Second)
	alerts := 0
	for _, batch := range batches {
		if e.opts.generator == "wrk" {
			n, err := e.ingestWrk(ctx, sw, batch, rep, target, res)
			if err != nil {
				return err
			}
			alerts += n
			continue
		}
		args := e.ingestArgs(sw.url+"/webhooks/alertmanager", "webhook", true, batch, rep)
		args.run += fmt.Sprintf("-acked%d", acked)
		r, err := e.swload(ctx, args)
		if err == nil {
			err = failed(r.Measured)
		}
		if err != nil {
			return fmt.Errorf("batch %d: %w\n%s", batch, err, sw.logTail(10))
		}
		res.addIngest(target, batch, r.Measured)
		e.logf("run %d: %s ingest, batch %2d: %6.0f alerts/s, p50 %.1f ms, p99 %.1f ms",
			rep, target, batch, r.Measured.AlertsPerS, r.Measured.P50ms, r.Measured.P99ms)
	}
	if e.opts.generator == "wrk" {
		check := e.checkCounted(ctx, sw, alerts)
		e.logf("run %d: %s: Redis %s", rep, target, check)
		if strings.HasPrefix(check, "MISMATCH") {
			return fmt.Errorf("%s", check)
		}
	}
	return nil
}

// renderReplicas writes the comparison's section of RESULTS.md.
func (e *env) renderReplicas(b *strings.Builder, res *results) {
	off, on := replicaTarget(0), replicaTarget(1)
	if len(res.ingest[off]) == 0 {
		return
	}
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("## Acknowledged once replicated: `redis.min_replicas_acked` 1 against 0\n\n")
	w("The ingest above (%s, %d connections) into the same redis-server with one replica attached\n", e.opts.generator, e.opts.workers)
	w("(loopback, the same persistence), from a fresh streamwatch with `min_replicas_acked: 0` and one\n")
	w("with `1`, whose webhooks answer only once Redis's `WAIT` confirms their batch on the replica;\n")
	w("the two alternate which goes first. Median of the runs (min–max):\n\n")
	w("| alerts per request | min_replicas_acked | alerts/s | p50 | p99 | CPU per 1,000 alerts: streamwatch, redis-server |\n|---|---|---|---|---|---|\n")
	for _, batch := range batches {
		for _, target := range []string{off, on} {
			rs := res.ingest[target][batch]
			var rate, p50, p99 []float64
			for _, r := range rs {
				rate, p50, p99 = append(rate, r.AlertsPerS), append(p50, r.P50ms), append(p99, r.P99ms)
			}
			w("| %d | %s | %s | %s | %s | %s, %s |\n", batch, strings.TrimPrefix(target, "a replica attached, min_replicas_acked "),
				cell(figure{unit: "alerts/s", values: rate}), cell(figure{unit: "ms", values: p50}), cell(figure{unit: "ms", values: p99}),
				cell(figure{unit: "ms", values: res.cpu[target][batch]["streamwatch process"]}),
				cell(figure{unit: "ms", values: res.cpu[target][batch]["redis-server"]}))
		}
		var ratio []float64
		a, c := res.ingest[off][batch], res.ingest[on][batch]
		for i := range min(len(a), len(c)) {
			ratio = append(ratio, c[i].AlertsPerS/a[i].AlertsPerS)
		}
		w("| %d | 1 ÷ 0 (same run) | %s | | | |\n", batch, cell(figure{unit: "×", values: ratio}))
	}
	w("\n")
}
