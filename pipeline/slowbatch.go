package pipeline

import (
	"slices"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

// A slow batch (batch_slow, with checkpoint.stale_after: auto): the batch the query planned
// (offsets/<N+1>) and has not committed has run more than StaleFactor times its usual duration, and
// at least StaleFloor. The usual duration is the median of the durations of the newest
// durationWindow batches of the commit history (commits/<N> − offsets/<N>), at least
// minDurations of them. A quiet topic's query plans no batch, so it never holds there; and it
// is judged before a 15-minute trigger's next commit is even due.
const (
	durationWindow = 20
	minDurations   = 3
)

// UsualDuration is the median duration of the newest durationWindow batches of the history
// whose duration is known; zero with fewer than minDurations of them.
func UsualDuration(h []state.Commit) time.Duration {
	var ds []time.Duration
	for i := len(h) - 1; i >= 0 && len(ds) < durationWindow; i-- {
		if h[i].Took > 0 {
			ds = append(ds, h[i].Took)
		}
	}
	if len(ds) < minDurations {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// SlowAfter is how long a batch may run before it is slow: max(StaleFactor × usual, StaleFloor);
// zero (not judged) while the usual duration is not learned.
func SlowAfter(usual time.Duration) time.Duration {
	if usual <= 0 {
		return 0
	}
	return max(StaleFactor*usual, StaleFloor)
}

// BatchClock is the clock of the batch in flight: which batch, since when it has run (its
// offsets file's time, never before the last round that saw another batch, or none, in
// flight), and when the last round looked.
type BatchClock struct {
	Batch int64     `json:"batch"`
	Clock HeldClock `json:"clock,omitzero"`
	Seen  time.Time `json:"seen,omitzero"`
}

// Observe is the clock after a round at now that saw batch running since planned (batch -1:
// none in flight). Another batch than the last round's starts afresh: it was planned after
// that round, since the last round's batch had not committed then.
func (c BatchClock) Observe(now time.Time, batch int64, planned time.Time) BatchClock {
	if batch < 0 {
		return BatchClock{Batch: -1, Clock: HeldClock{Clear: now}, Seen: now}
	}
	clock := c.Clock
	if batch != c.Batch || !clock.Held() {
		clock = HeldClock{Clear: c.Seen}
	}
	return BatchClock{Batch: batch, Clock: clock.Observe(now, true, planned), Seen: now}
}

// batchSlow judges the batch in flight against the usual duration: the evidence (the batch,
// how long it has run, the usual duration, the threshold) goes into obs; the clock is the next
// round's. Not judged without stale_after: auto, a readable checkpoint or a learned duration.
func batchSlow(x *detected, obs *Observation, prev BatchClock) BatchClock {
	if !x.p.Checkpoint.StaleAuto || x.batches == nil || !obs.CheckpointKnown {
		return prev
	}
	b := x.batches
	next := prev.Observe(obs.At, b.Running, b.RunningSince)
	obs.UsualDuration, obs.SlowAfter = x.usual, SlowAfter(x.usual)
	if b.Running >= 0 {
		obs.Running, obs.RunningSince = b.Running, next.Clock.Since
		obs.RunningFor = next.Clock.For(obs.At, time.Time{})
	}
	if obs.SlowAfter <= 0 {
		return next
	}
	obs.Holds[SignalSlow] = b.Running >= 0 && obs.RunningFor > obs.SlowAfter
	return next
}
