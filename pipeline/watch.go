package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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

// WatchEnd says how a recovery watch ended.
type WatchEnd string

// How a watch ends. Each names the fields of WatchReport it uses besides Pipeline.
const (
	// WatchRecovered: progress resumed (Base, Now: the checkpoint's new batch, the group's
	// offsets and lag).
	WatchRecovered WatchEnd = "recovered"
	// WatchNothingWaited: the time ran out while nothing waited for the query, so no progress
	// was due and the watch cannot tell whether the fix took (For, Now).
	WatchNothingWaited WatchEnd = "nothing_waited"
	// WatchNoProgress: the time ran out while records waited: the fix did not take (For, Now).
	WatchNoProgress WatchEnd = "no_progress"
)

// WatchReport is how a watch ended, as data: commands words it (Watcher.Words).
type WatchReport struct {
	End       WatchEnd
	Pipeline  string
	For       time.Duration // the watch's length
	Base, Now Progress      // when the watch started, and at its end
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
	// Words words a watch's report (commands.WatchReport: text is made in commands); nil
	// stores its end and pipeline.
	Words func(WatchReport) string
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

// StartWatch records the pipeline's progress now and watches it for d (commands.Watcher). It
// returns the progress it recorded.
func (w *Watcher) StartWatch(ctx context.Context, name, incident, channel, by string, d time.Duration) (Progress, error) {
	base, err := w.measure(ctx, name)
	if err != nil {
		return Progress{}, err
	}
	raw, _ := json.Marshal(base)
	now := w.Now()
	err = w.Store.StartWatch(ctx, state.Watch{Pipeline: name, Incident: incident, Channel: channel, By: by,
		Started: now, Until: now.Add(d), Baseline: raw})
	return base, err
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
		rep := WatchReport{Pipeline: wt.Pipeline, For: wt.Until.Sub(wt.Started), Base: base, Now: cur}
		switch {
		case cur.HasBatch && base.HasBatch && cur.Batch > base.Batch, cur.HasBatch && !base.HasBatch,
			cur.HasCommitted && cur.Committed > base.Committed:
			rep.End = WatchRecovered
		case !w.Now().After(wt.Until):
			continue
		case cur.idle():
			rep.End = WatchNothingWaited
		case !cur.Oldest.IsZero() && w.Now().Sub(cur.Oldest) < rep.For:
			continue // the records began to wait during the watch: they get its whole length
		default:
			rep.End = WatchNoProgress
		}
		msg, recovered := w.say(rep), rep.End == WatchRecovered
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

func (w *Watcher) say(r WatchReport) string {
	if w.Words != nil {
		return w.Words(r)
	}
	return string(r.End) + " " + r.Pipeline
}

func (w *Watcher) logger() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}
