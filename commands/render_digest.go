package commands

import (
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/probe"
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
		lines = append(lines, fmt.Sprintf("%-20s %-13s %-12s %-12s %s", r.Pipeline, probeStatus(r.Status), age, lag, sparkline(r.Lag)))
	}
	for _, r := range d.Rows {
		if r.Description != "" {
			lines = append(lines, r.Pipeline+": "+r.Description)
		}
	}
	for _, n := range d.Notes {
		lines = append(lines, statusNoteLine(n))
	}
	if d.Missed > 0 {
		lines = append(lines, fmt.Sprintf("%d scheduled tick(s) were missed since the last digest: no replica was running.", d.Missed))
	}
	return lines
}

// statusNoteLine is one of detection's notes below the digest's table.
func statusNoteLine(n pipeline.StatusNote) string {
	switch n.Kind {
	case pipeline.NoteDetected:
		s := fmt.Sprintf("%s: detected %s", n.Pipeline, detectedLine(n.Active, n.Observation))
		if n.Incident != "" {
			s += " (" + n.Incident + ")"
		}
		return s
	case pipeline.NoteLivenessUnwatched:
		return fmt.Sprintf("%s: liveness is not watched: %s", n.Pipeline, livenessGap(n.Observation))
	case pipeline.NotePublishRefused:
		return fmt.Sprintf("%s: publish_group %s not committed since %s: %s", n.Pipeline, n.Publish.Group,
			human.Time(n.Publish.Since), publishRefusal(n.Publish))
	}
	return n.Pipeline + ": " + string(n.Kind)
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

// livenessGap says why a query's liveness is not watched.
func livenessGap(o pipeline.Observation) string {
	switch o.Liveness {
	case pipeline.LivenessNoLog:
		return "no driver log is configured (logs.paths, logs.kubernetes)"
	case pipeline.LivenessUnreadable:
		return "the driver log could not be read: " + o.LivenessErr
	case pipeline.LivenessNoBeat:
		return "the driver log has no progress or idle line yet (are INFO lines logged?)"
	}
	return string(o.Liveness) // an earlier version's words
}

// publishRefusal says why publish_group did not commit.
func publishRefusal(p pipeline.PublishState) string {
	r := p.Refusal
	if r == nil {
		return p.Refused // an earlier version's words
	}
	switch r.Code {
	case pipeline.RefuseGroupUnknown:
		return "the group could not be described this round (its members are unknown)"
	case pipeline.RefuseLiveMembers:
		return fmt.Sprintf("%s has %s (%s): streamwatch commits only to a group nobody consumes with",
			r.Group, human.Count(len(r.Members), "live member"), strings.Join(r.Members, ", "))
	case pipeline.RefuseCommitsUnread:
		return "the group's commits could not be read this round"
	case pipeline.RefuseCluster:
		if r.Commit == "" { // an earlier version's words and error
			return "the cluster refused the commit: " + r.Err
		}
		return "the cluster refused the commit: " + commitRefusalWords(r.Commit) + " (" + r.Err + ")"
	case pipeline.RefuseGroupAhead:
		held := make([]string, len(r.Held))
		for i, h := range r.Held {
			held[i] = fmt.Sprintf("%s (group at %d, checkpoint at %d)", h.Partition, h.Group, h.Checkpoint)
		}
		return "the group is ahead of the checkpoint and streamwatch did not put it there; left alone on " + strings.Join(held, ", ")
	}
	return string(r.Code)
}

// probeStatus is a digest row's probe status: OK, DEGRADED, FAILED, or never probed.
func probeStatus(s string) string {
	if s == "" {
		return "never probed"
	}
	return s
}

// statusReply is the `status` reply: all OK or the pipelines that need a look, how many notes
// follow, then the digest's table.
func statusReply(d pipeline.Digest) Reply {
	var bad []string
	for _, r := range d.Rows {
		if r.Status != string(probe.StatusOK) {
			bad = append(bad, r.Pipeline+" "+probeStatus(r.Status))
		}
	}
	text := fmt.Sprintf("%d pipeline%s, all OK", len(d.Rows), human.Plural(len(d.Rows)))
	if len(bad) > 0 {
		text = "Needs a look: " + strings.Join(bad, ", ")
	}
	if len(d.Notes) > 0 {
		text += fmt.Sprintf(" (%d note%s below)", len(d.Notes), human.Plural(len(d.Notes)))
	}
	return Reply{Text: text, Sections: []Section{{Lines: digestLines(d), Pre: true}}}
}
