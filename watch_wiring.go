package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/state"
)

// progress is what a recovery watch compares: the checkpoint's newest commit and the
// documented group's committed offsets.
type progress struct {
	Batch        int64 `json:"batch"`
	HasBatch     bool  `json:"has_batch"`
	Committed    int64 `json:"committed"`
	HasCommitted bool  `json:"has_committed"`
	Lag          int64 `json:"lag"`
}

func (p progress) String() string {
	var parts []string
	if p.HasBatch {
		parts = append(parts, fmt.Sprintf("checkpoint commit batch %d", p.Batch))
	}
	if p.HasCommitted {
		parts = append(parts, fmt.Sprintf("group committed %d records in total, lag %d", p.Committed, p.Lag))
	}
	if len(parts) == 0 {
		return "no progress signal could be read"
	}
	return strings.Join(parts, "; ")
}

type watcher struct {
	cfg   *config.Config
	store *state.Store
	kafka *kafkaParts
	cps   *checkpoints
	now   func() time.Time
}

func (w *watcher) measure(ctx context.Context, name string) (progress, error) {
	p, ok := w.cfg.Pipeline(name)
	if !ok {
		return progress{}, fmt.Errorf("unknown pipeline %q", name)
	}
	var pr progress
	if p.Checkpoint.Location != "" {
		if r, err := w.cps.Diagnose(ctx, name); err == nil && r.Committed != nil {
			pr.Batch, pr.HasBatch = r.Committed.ID, true
		}
	}
	if p.Kafka.Enabled() {
		if cl, err := w.kafka.clusters.Cluster(p.Kafka.Cluster); err == nil {
			if off, err := cl.Offsets(ctx, p.Kafka.Group, p.Kafka.Topics...); err == nil {
				for _, pl := range off.Partitions {
					if pl.Committed >= 0 {
						pr.Committed += pl.Committed
						pr.HasCommitted = true
					}
					if pl.Lag > 0 {
						pr.Lag += pl.Lag
					}
				}
			}
		}
	}
	return pr, nil
}

// StartWatch implements commands.Watcher.
func (w *watcher) StartWatch(ctx context.Context, name, incident, channel, by string, d time.Duration) (string, error) {
	base, err := w.measure(ctx, name)
	if err != nil {
		return "", err
	}
	raw, _ := json.Marshal(base)
	now := w.now()
	err = w.store.StartWatch(ctx, state.Watch{Pipeline: name, Incident: incident, Channel: channel, By: by,
		Started: now, Until: now.Add(d), Baseline: raw})
	return base.String(), err
}

// tick checks every active watch once; each ends (and is reported) exactly once.
func (w *watcher) tick(ctx context.Context, log *slog.Logger) error {
	watches, err := w.store.Watches(ctx)
	if err != nil {
		return err
	}
	for _, wt := range watches {
		var base progress
		_ = json.Unmarshal(wt.Baseline, &base)
		cur, err := w.measure(ctx, wt.Pipeline)
		if err != nil {
			log.Warn("watch", "pipeline", wt.Pipeline, "err", err)
			continue
		}
		var msg string
		switch {
		case cur.HasBatch && base.HasBatch && cur.Batch > base.Batch, cur.HasBatch && !base.HasBatch,
			cur.HasCommitted && cur.Committed > base.Committed:
			msg = fmt.Sprintf("Recovery: %s is progressing again. %s", wt.Pipeline, describeProgress(base, cur))
		case w.now().After(wt.Until):
			msg = fmt.Sprintf("No progress on %s within %s of watching: %s. The fix did not take; run `diagnose %s`.",
				wt.Pipeline, wt.Until.Sub(wt.Started).Round(time.Second), cur, wt.Pipeline)
		default:
			continue
		}
		if ended, err := w.store.EndWatch(ctx, wt.Pipeline); err != nil || !ended {
			continue
		}
		if wt.Incident != "" {
			_, err = w.store.Note(ctx, wt.Incident, "remediation", "streamwatch", msg, "")
		} else {
			err = w.store.EnqueueNotice(ctx, wt.Channel, msg)
		}
		if err != nil {
			log.Warn("watch report", "pipeline", wt.Pipeline, "err", err)
		}
	}
	return nil
}

func describeProgress(base, cur progress) string {
	var parts []string
	if cur.HasBatch && (!base.HasBatch || cur.Batch > base.Batch) {
		from := "none"
		if base.HasBatch {
			from = fmt.Sprint(base.Batch)
		}
		parts = append(parts, fmt.Sprintf("first new checkpoint commit: batch %s → %d", from, cur.Batch))
	}
	if cur.HasCommitted && cur.Committed > base.Committed {
		trend := "falling"
		if cur.Lag >= base.Lag {
			trend = "not falling yet"
		}
		parts = append(parts, fmt.Sprintf("group offsets advanced by %d; lag %d → %d (%s)", cur.Committed-base.Committed, base.Lag, cur.Lag, trend))
	}
	return strings.Join(parts, "; ") + "."
}
