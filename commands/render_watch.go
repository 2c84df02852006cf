package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/pipeline"
)

// WatchReport words how a recovery watch ended (pipeline.Watcher.Words), for the incident's
// thread or the channel.
func WatchReport(r pipeline.WatchReport) string {
	watched := r.For.Round(time.Second)
	switch r.End {
	case pipeline.WatchRecovered:
		return fmt.Sprintf("Recovery: %s is progressing again. %s", r.Pipeline, progressGain(r.Base, r.Now))
	case pipeline.WatchNothingWaited:
		return fmt.Sprintf("Nothing waited for %s during %s of watching (%s): no progress was due, so the watch cannot tell whether the fix took; run `diagnose %s` once records arrive.",
			r.Pipeline, watched, ProgressText(r.Now), r.Pipeline)
	case pipeline.WatchNoProgress:
		return fmt.Sprintf("No progress on %s within %s of watching: %s. The fix did not take; run `diagnose %s`.",
			r.Pipeline, watched, ProgressText(r.Now), r.Pipeline)
	}
	return string(r.End) + ": " + r.Pipeline
}

// ProgressText words what a recovery watch compares: the checkpoint's newest commit, the
// records waiting beyond it, the group's committed offsets and lag.
func ProgressText(p pipeline.Progress) string {
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

// progressGain words the progress from base to cur: the first new checkpoint commit, the
// group's offsets advancing and whether its lag falls.
func progressGain(base, cur pipeline.Progress) string {
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

// watchForUsage refuses `watch PIPELINE word …` whose word is not "for".
func watchForUsage(got string, usages []string) error {
	return &UsageError{Msg: fmt.Sprintf("expected \"for\", got %q", got), Usages: usages}
}

// watchSpanUsage refuses a watch's duration that is not one, or not up to 24h.
func watchSpanUsage(arg string, usages []string) error {
	return &UsageError{Msg: fmt.Sprintf("%q is not a duration up to 24h such as 30m", arg), Usages: usages}
}

// watchUsage refuses a `watch` with the wrong number of words.
func watchUsage(usages []string) error {
	return &UsageError{Msg: "watch takes a pipeline and optionally `for DURATION`", Usages: usages}
}

// watchingText answers a started watch: what, for how long, where it reports (the incident's
// thread, or "": this channel) and the progress it starts from.
func watchingText(pipeline string, d time.Duration, incident string, base pipeline.Progress) string {
	where := "this channel"
	if incident != "" {
		where = incident + "'s thread"
	}
	return fmt.Sprintf("Watching %s for %s; I will report in %s when progress resumes or the time runs out. Now: %s", pipeline, d, where, ProgressText(base))
}
