package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/state"
)

// Progress is what a recovery watch compares: the checkpoint's newest commit and the
// documented group's committed offsets; and whether records wait for the query at all.
type Progress struct {
	Batch        int64 `json:"batch"`
	HasBatch     bool  `json:"has_batch"`
	Committed    int64 `json:"committed"`
	HasCommitted bool  `json:"has_committed"`
	Lag          int64 `json:"lag"`
	// Waiting are the records the brokers hold beyond the checkpoint (HasWaiting: known);
	// Oldest the oldest one's own timestamp (zero: none waits, or unknown).
	Waiting    int64     `json:"waiting,omitempty"`
	HasWaiting bool      `json:"has_waiting,omitempty"`
	Oldest     time.Time `json:"oldest,omitzero"`
}

// idle says nothing waits for the query: no record beyond the checkpoint, no group lag.
func (p Progress) idle() bool {
	return p.HasWaiting && p.Waiting == 0 && (!p.HasCommitted || p.Lag == 0)
}

func (p Progress) String() string {
	var parts []string
	if p.HasBatch {
		parts = append(parts, fmt.Sprintf("checkpoint commit batch %d", p.Batch))
	}
	if p.HasWaiting {
		parts = append(parts, fmt.Sprintf("%d records wait beyond the checkpoint", p.Waiting))
	}
	if p.HasCommitted {
		parts = append(parts, fmt.Sprintf("group committed %d records in total, lag %d", p.Committed, p.Lag))
	}
	if len(parts) == 0 {
		return "no progress signal could be read"
	}
	return strings.Join(parts, "; ")
}

// WatchStore keeps recovery watches and reports their end into incident threads or channels
// (state.Store).
type WatchStore interface {
	StartWatch(ctx context.Context, w state.Watch) error
	Watches(ctx context.Context) ([]state.Watch, error)
	EndWatch(ctx context.Context, pipeline string) (bool, error)
	Note(ctx context.Context, id, ev, actor, detail, once string) (bool, error)
	EnqueueNotice(ctx context.Context, channel, text string) error
}

// Watcher runs recovery watches: after a fix, it compares a pipeline's progress with what it
// was when the watch started, and reports once when progress resumes or the time runs out.
type Watcher struct {
	Config      *config.Config
	Store       WatchStore
	Checkpoints *Checkpoints
	Kafka       Offsets // nil: the group's offsets are not compared
	Now         func() time.Time
	Log         *slog.Logger
	// Recovered, when set, is told of each recovery the watch reports in an incident's thread
	// (the app follows it with a chart). It must not block.
	Recovered func(incident, pipeline string)
}

// WatchEvery is how often recovery watches look for progress.
const WatchEvery = 5 * time.Second

func (w *Watcher) measure(ctx context.Context, name string) (Progress, error) {
	p, ok := w.Config.Pipeline(name)
	if !ok {
		return Progress{}, fmt.Errorf("unknown pipeline %q", name)
	}
	var pr Progress
	if p.Checkpoint.Location != "" {
		if rd, err := w.Checkpoints.Read(ctx, name); err == nil {
			if r := rd.Report; r.Committed != nil {
				pr.Batch, pr.HasBatch = r.Committed.ID, true
			}
			if rd.Report.PendingKnown {
				pr.Waiting, pr.HasWaiting, pr.Oldest = rd.Report.PendingTotal, true, rd.Oldest
			}
		}
	}
	if p.Kafka.Enabled() && w.Kafka != nil {
		if off, err := w.Kafka.Offsets(ctx, p.Kafka.Cluster, p.Kafka.Group, p.Kafka.Topics...); err == nil {
			for _, pl := range off.Partitions {
				if pl.Committed >= 0 {
					pr.Committed += pl.Committed
					pr.HasCommitted = true
				}
			}
			pr.Lag, _ = kafka.SumLag(off.Partitions)
		}
	}
	return pr, nil
}

// StartWatch records the pipeline's progress now and watches it for d (commands.Watcher).
func (w *Watcher) StartWatch(ctx context.Context, name, incident, channel, by string, d time.Duration) (string, error) {
	base, err := w.measure(ctx, name)
	if err != nil {
		return "", err
	}
	raw, _ := json.Marshal(base)
	now := w.Now()
	err = w.Store.StartWatch(ctx, state.Watch{Pipeline: name, Incident: incident, Channel: channel, By: by,
		Started: now, Until: now.Add(d), Baseline: raw})
	return base.String(), err
}

// Tick checks every active watch once; each ends (and is reported) exactly once. Its time
// counts only while records waited for the query: when it runs out with nothing waiting, the
// report says so instead of calling the fix failed; records that began to wait during the
// watch get its whole length before it does.
func (w *Watcher) Tick(ctx context.Context) error {
	watches, err := w.Store.Watches(ctx)
	if err != nil {
		return err
	}
	for _, wt := range watches {
		var base Progress
		_ = json.Unmarshal(wt.Baseline, &base)
		cur, err := w.measure(ctx, wt.Pipeline)
		if err != nil {
			w.logger().Warn("watch", "pipeline", wt.Pipeline, "err", err)
			continue
		}
		var msg string
		recovered := false
		switch {
		case cur.HasBatch && base.HasBatch && cur.Batch > base.Batch, cur.HasBatch && !base.HasBatch,
			cur.HasCommitted && cur.Committed > base.Committed:
			msg = fmt.Sprintf("Recovery: %s is progressing again. %s", wt.Pipeline, describeProgress(base, cur))
			recovered = true
		case !w.Now().After(wt.Until):
			continue
		case cur.idle():
			msg = fmt.Sprintf("Nothing waited for %s during %s of watching (%s): no progress was due, so the watch cannot tell whether the fix took; run `diagnose %s` once records arrive.",
				wt.Pipeline, wt.Until.Sub(wt.Started).Round(time.Second), cur, wt.Pipeline)
		case !cur.Oldest.IsZero() && w.Now().Sub(cur.Oldest) < wt.Until.Sub(wt.Started):
			continue // the records began to wait during the watch: they get its whole length
		default:
			msg = fmt.Sprintf("No progress on %s within %s of watching: %s. The fix did not take; run `diagnose %s`.",
				wt.Pipeline, wt.Until.Sub(wt.Started).Round(time.Second), cur, wt.Pipeline)
		}
		if ended, err := w.Store.EndWatch(ctx, wt.Pipeline); err != nil || !ended {
			continue
		}
		if wt.Incident != "" {
			_, err = w.Store.Note(ctx, wt.Incident, "remediation", "streamwatch", msg, "")
		} else {
			err = w.Store.EnqueueNotice(ctx, wt.Channel, msg)
		}
		if err != nil {
			w.logger().Warn("watch report", "pipeline", wt.Pipeline, "err", err)
		} else if recovered && wt.Incident != "" && w.Recovered != nil {
			w.Recovered(wt.Incident, wt.Pipeline)
		}
	}
	return nil
}

func describeProgress(base, cur Progress) string {
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

func (w *Watcher) logger() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}
