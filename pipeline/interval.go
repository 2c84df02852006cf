package pipeline

import (
	"slices"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/state"
)

// checkpoint.stale_after: auto. A fixed threshold fits no pipeline: a query with 2-second
// batches is in trouble after 30 s, one with a 15-minute trigger is fine after 10 minutes.
// Burrow judges a consumer by its own rhythm for the same reason. With auto, the threshold is
// StaleFactor times the pipeline's batch interval, learned from its commits, and never below
// StaleFloor (two rounds of hysteresis come on top).
const (
	StaleFactor = 5
	StaleFloor  = 20 * time.Second
	// minIntervals is how many intervals between commits are needed to trust the median.
	minIntervals = 3
)

// BatchInterval is the pipeline's usual time between batches: the median, over consecutive
// commits of the history, of the time between them per batch (a batch skipped counts as
// two intervals). The median ignores a slow batch or a pause for a restart. Zero with fewer
// than minIntervals intervals.
func BatchInterval(h []state.Commit) time.Duration {
	var ds []time.Duration
	for i := 1; i < len(h); i++ {
		if n := h[i].Batch - h[i-1].Batch; n > 0 && h[i].At.After(h[i-1].At) {
			ds = append(ds, h[i].At.Sub(h[i-1].At)/time.Duration(n))
		}
	}
	if len(ds) < minIntervals {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// StaleAfter is how long records may wait with no commit before p's checkpoint is stale: the
// configured duration, or with auto, max(StaleFactor × the learned interval, StaleFloor); until an
// interval is learned, the configured default.
func StaleAfter(p *config.Pipeline, interval time.Duration) time.Duration {
	if !p.Checkpoint.StaleAuto || interval <= 0 {
		return p.Checkpoint.StaleAfter
	}
	return max(StaleFactor*interval, StaleFloor)
}
