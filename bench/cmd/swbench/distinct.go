package main

import (
	"context"
	"fmt"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
)

// distinctResult is one distinct-alert storm: -distinct-alerts alerts, each with its own dedup
// key, over -distinct-window into one channel.
type distinctResult struct {
	flood        bool // flood protection on (the default) or off
	sent         load.Result
	roots        int // root messages in the channel
	postMessages int
	updates      int
	rateLimited  int
	// quiet is the time from the first alert to the last Slack call, once the channel has been
	// quiet for two coalescing windows; quietSeen is false when it was not reached (flood off:
	// the roots queue for hours, and the run stops waiting).
	quiet     time.Duration
	quietSeen bool
	backlog   int64 // outbox entries still waiting for Slack when the run stopped
	redis     int64 // bytes of the storm's keys (MEMORY USAGE of each)
	redisKeys int
	floodOver time.Duration // from the first alert to when the flood ends (flood on)
}

// distinctCoalesce is the default thread_coalesce: the distinct storm runs in real time.
const distinctCoalesce = 10 * time.Second

// distinctStorm sends -distinct-alerts distinct alerts evenly over -distinct-window (60 s:
// real time, not scaled, since the flood's rate is per minute) to one channel, with the
// default configuration, against Slack's fake limiting each channel to 1 message/s. It counts
// the Slack calls and roots until the channel is quiet, and the Redis memory the storm left.
// With flood off it measures what streamwatch did before flood protection: a root per key.
func (e *env) distinctStorm(ctx context.Context, rep int, flood bool, res *results) error {
	slack, err := newSlack(1)
	if err != nil {
		return err
	}
	defer slack.Close()
	tag, alerts := fmt.Sprintf("distinct-%d", rep), ""
	if !flood {
		tag, alerts = tag+"-off", "  flood: {new_incidents_per_minute: 0}\n"
	}
	sw, err := e.startStreamwatch(ctx, slack, distinctCoalesce, tag, alerts)
	if err != nil {
		return err
	}
	defer sw.stop(15 * time.Second)
	n, window := e.opts.distinctAlerts, e.opts.distinctWindow
	began := time.Now()
	r, err := e.swload(ctx, loadArgs{url: sw.url + "/webhooks/alertmanager", format: "webhook", token: true,
		batch: 1, dup: 0, requests: n, duration: window + time.Minute, workers: 32,
		rate: float64(n) / window.Seconds(), warmup: 0, run: tag})
	if err != nil {
		return err
	}
	if err := failed(r.Measured); err != nil {
		return fmt.Errorf("distinct storm: %w\n%s", err, sw.logTail(10))
	}
	d := distinctResult{flood: flood, sent: r.Measured}
	calls := func() (last time.Time) {
		for _, c := range slack.Calls() {
			if !startupCalls[c.Method] && c.At.After(last) {
				last = c.At
			}
		}
		return last
	}
	// Quiet: no Slack call for two coalescing windows. Flood off never gets there in useful
	// time (a root per second for hours): stop after the same two windows.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		last := calls()
		if flood && !last.IsZero() && time.Since(last) > 2*distinctCoalesce {
			d.quiet, d.quietSeen = last.Sub(began), true
			break
		}
		if !flood && time.Since(began) > window+2*distinctCoalesce || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, c := range slack.Calls() {
		switch c.Method {
		case "chat.postMessage":
			d.postMessages++
		case "chat.update":
			d.updates++
		}
	}
	for _, m := range slack.Messages(alertChannel) {
		if m.ThreadTS == "" {
			d.roots++
		}
	}
	d.rateLimited = slack.RateLimited()
	if d.backlog, err = e.redis.client.XLen(ctx, "{"+sw.prefix+"}:outbox").Result(); err != nil {
		return err
	}
	if d.redis, d.redisKeys, err = e.redis.prefixMemory(ctx, sw.prefix); err != nil {
		return err
	}
	if flood {
		// The flood ends quiet_for (5m) after the rate fell to the limit: read when, rather than
		// wait for it.
		if at, err := e.redis.client.HGet(ctx, "{"+sw.prefix+"}:flood:"+alertChannel, "ends_at").Int64(); err == nil {
			d.floodOver = time.UnixMilli(at).Sub(began)
		}
	}
	res.distinct = append(res.distinct, d)
	e.logf("run %d: distinct storm (flood protection %s): %d alerts in %.1f s; %d roots, %d Slack calls (%d × 429); quiet after %.0f s (%v); %d outbox entries left; Redis %d keys, %.1f MiB",
		rep, onOff(flood), r.Measured.OK, r.Measured.Seconds, d.roots, d.postMessages+d.updates, d.rateLimited,
		d.quiet.Seconds(), d.quietSeen, d.backlog, d.redisKeys, float64(d.redis)/(1<<20))
	return nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
