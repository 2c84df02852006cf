// Command swload is streamwatch's load generator: it POSTs Alertmanager alerts to one loopback
// URL, bounded by a request count and a time limit, and prints what it measured as JSON.
//
//	swload -url http://127.0.0.1:8080/webhooks/alertmanager -batch 20 -dup 0.5 -requests 1000 -duration 15s
//	swload -url http://127.0.0.1:9093/api/v2/alerts -format api -batch 20 -dup 0.5 -requests 1000
//
// Before the measured requests it sends each hot alert once (so the duplicates join open
// incidents) and -warmup requests of the same mix, which are not measured. The bearer token is
// read from the environment variable -token-env names, never from a flag. Only loopback
// addresses are accepted.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
)

// Report is what swload prints.
type Report struct {
	URL      string      `json:"url"`
	Format   string      `json:"format"`
	Batch    int         `json:"batch"`
	Dup      float64     `json:"dup"`
	Hot      int         `json:"hot"`
	Rate     float64     `json:"rate"`
	Workers  int         `json:"workers"`
	HotSent  load.Result `json:"hotSent"`
	Warmup   load.Result `json:"warmup"`
	Measured load.Result `json:"measured"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "swload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("swload", flag.ContinueOnError)
	target := fs.String("url", "", "URL to POST to (loopback only)")
	format := fs.String("format", "webhook", "body format: webhook (Alertmanager webhook v4) or api (Alertmanager's POST /api/v2/alerts)")
	batch := fs.Int("batch", 1, "alerts per request")
	dup := fs.Float64("dup", 0.5, "fraction of alerts that duplicate a hot alert")
	hot := fs.Int("hot", 10, "distinct alerts the duplicates repeat")
	runID := fs.String("run", fmt.Sprint(time.Now().UnixNano()), "makes new alerts' names unique to this run")
	requests := fs.Int("requests", 1000, "measured requests, at most")
	duration := fs.Duration("duration", 15*time.Second, "time for the measured requests, at most")
	workers := fs.Int("workers", 8, "requests in flight at most")
	rate := fs.Float64("rate", 0, "requests per second, evenly paced; 0: as fast as answers come")
	warmup := fs.Int("warmup", 50, "unmeasured requests of the same mix before the run")
	tokenEnv := fs.String("token-env", "STREAMWATCH_WEBHOOK_TOKEN", "environment variable holding the bearer token (empty: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := load.CheckLoopback(*target); err != nil {
		return err
	}
	f, err := load.ParseFormat(*format)
	if err != nil {
		return err
	}
	if *dup < 0 || *dup > 1 || *batch < 1 || *requests < 1 || *duration <= 0 || *warmup < 0 {
		return fmt.Errorf("need 0 ≤ -dup ≤ 1, -batch ≥ 1, -requests ≥ 1, -duration > 0, -warmup ≥ 0")
	}
	token := ""
	if *tokenEnv != "" {
		token = getenv(*tokenEnv)
	}
	now := time.Now()
	mix := load.Mix{Run: *runID, Batch: *batch, Dup: *dup, Hot: *hot, StartsAt: now}
	rep := Report{URL: *target, Format: string(f), Batch: *batch, Dup: *dup, Hot: *hot, Rate: *rate, Workers: *workers}

	// Each hot alert once, in order, so that duplicates find their incidents open.
	var hotReqs [][]load.Alert
	if *dup > 0 {
		for _, a := range mix.HotAlerts() {
			hotReqs = append(hotReqs, []load.Alert{a})
		}
	}
	step := func(reqs [][]load.Alert, perRequest, workers int, limit time.Duration, rate float64) (load.Result, error) {
		if len(reqs) == 0 {
			return load.Result{}, nil
		}
		bodies, err := load.Bodies(f, reqs)
		if err != nil {
			return load.Result{}, err
		}
		return load.Run(ctx, load.Plan{URL: *target, Token: token, Bodies: bodies, AlertsPerRequest: perRequest,
			Requests: len(bodies), Duration: limit, Workers: workers, Rate: rate})
	}
	if rep.HotSent, err = step(hotReqs, 1, 1, 30*time.Second, 0); err != nil {
		return err
	}
	if rep.HotSent.OK != len(hotReqs) {
		return fmt.Errorf("opening the hot alerts: %d of %d answered 2xx: %s", rep.HotSent.OK, len(hotReqs), rep.HotSent.FirstFail)
	}
	warm := mix
	warm.Run = *runID + "-warmup"
	if rep.Warmup, err = step(warm.Requests(*warmup), *batch, *workers, 30*time.Second, 0); err != nil {
		return err
	}
	if rep.Measured, err = step(mix.Requests(*requests), *batch, *workers, *duration, *rate); err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
