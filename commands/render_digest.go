package commands

import (
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// digestLines lay the digest out as a table, the failing pipelines first.
func digestLines(d pipeline.Digest) []string {
	lines := []string{fmt.Sprintf("%-20s %-13s %-12s %-12s %s", "PIPELINE", "PROBE", "LAST COMMIT", "LAG", "LAG TREND")}
	for _, r := range d.Rows {
		age := "-"
		if r.CommitAge >= 0 {
			age = human.Age(r.CommitAge) + " ago"
		}
		lag := "-"
		if len(r.Lag) > 0 {
			lag = fmt.Sprint(r.Lag[len(r.Lag)-1])
		}
		lines = append(lines, fmt.Sprintf("%-20s %-13s %-12s %-12s %s", r.Pipeline, r.Status, age, lag, sparkline(r.Lag)))
	}
	for _, r := range d.Rows {
		if r.Description != "" {
			lines = append(lines, r.Pipeline+": "+r.Description)
		}
	}
	lines = append(lines, d.Notes...)
	if d.Missed > 0 {
		lines = append(lines, fmt.Sprintf("%d scheduled tick(s) were missed since the last digest: no replica was running.", d.Missed))
	}
	return lines
}

// DigestReply is the health digest as it is posted on health.digest_schedule.
func DigestReply(d pipeline.Digest) Reply {
	return Reply{Text: "Pipeline health at " + human.Minute(d.At), Sections: []Section{{Lines: digestLines(d), Pre: true}}}
}

// sparkline draws values with the eight block characters, scaled between their min and max.
func sparkline(values []int64) string {
	if len(values) == 0 {
		return ""
	}
	const bars = "▁▂▃▄▅▆▇█"
	runes := []rune(bars)
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for _, v := range values {
		i := 0
		if hi > lo {
			i = int((v - lo) * int64(len(runes)-1) / (hi - lo))
		}
		b.WriteRune(runes[i])
	}
	return b.String()
}

// ago writes how old something is, coarsely: 45s, 7m, 3h10m, 2d4h.
