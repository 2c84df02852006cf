package commands_test

import (
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestWatchReport: each end of a recovery watch, worded for the incident's thread or the
// channel, with the progress it saw.
func TestWatchReport(t *testing.T) {
	base := pipeline.Progress{Batch: 3, HasBatch: true, Committed: 200, HasCommitted: true, Lag: 40}
	committed, moved, none := base, base, base
	committed.Batch = 4
	moved.Committed, moved.Lag = 245, 15
	none.HasBatch = false
	notFalling := moved
	notFalling.Lag = 40
	idle := pipeline.Progress{Batch: 1, HasBatch: true, HasWaiting: true}
	waiting := pipeline.Progress{Batch: 1, HasBatch: true, HasWaiting: true, Waiting: 6}
	r := func(end pipeline.WatchEnd, base, now pipeline.Progress) pipeline.WatchReport {
		return pipeline.WatchReport{End: end, Pipeline: "sms-replies", For: 30 * time.Minute, Base: base, Now: now}
	}
	for _, c := range []struct {
		name string
		r    pipeline.WatchReport
		want string
	}{
		{"a new checkpoint commit", r(pipeline.WatchRecovered, base, committed),
			"Recovery: sms-replies is progressing again. first new checkpoint commit: batch 3 → 4."},
		{"the first checkpoint commit", r(pipeline.WatchRecovered, none, committed),
			"Recovery: sms-replies is progressing again. first new checkpoint commit: batch none → 4."},
		{"the group commits again", r(pipeline.WatchRecovered, base, moved),
			"Recovery: sms-replies is progressing again. group offsets advanced by 45; lag 40 → 15 (falling)."},
		{"the group commits, its lag not falling", r(pipeline.WatchRecovered, base, notFalling),
			"Recovery: sms-replies is progressing again. group offsets advanced by 45; lag 40 → 40 (not falling yet)."},
		{"time runs out", r(pipeline.WatchNoProgress, base, base),
			"No progress on sms-replies within 30m0s of watching: checkpoint commit batch 3; group committed 200 records in total, lag 40. The fix did not take; run `diagnose sms-replies`."},
		{"time runs out while records wait", r(pipeline.WatchNoProgress, idle, waiting),
			"No progress on sms-replies within 30m0s of watching: checkpoint commit batch 1; 6 records wait beyond the checkpoint. The fix did not take; run `diagnose sms-replies`."},
		{"nothing waited", r(pipeline.WatchNothingWaited, idle, idle),
			"Nothing waited for sms-replies during 30m0s of watching (checkpoint commit batch 1; 0 records wait beyond the checkpoint): " +
				"no progress was due, so the watch cannot tell whether the fix took; run `diagnose sms-replies` once records arrive."},
	} {
		if got := commands.WatchReport(c.r); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	if got := commands.ProgressText(pipeline.Progress{}); got != "no progress signal could be read" {
		t.Errorf("no signal: %q", got)
	}
}
