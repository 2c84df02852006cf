package commands

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// DetectMessage words one of detection's messages (pipeline.Detector.Words): the incident's
// title and root line, its thread notes and the channel's notices.
func DetectMessage(m pipeline.Message) string {
	obs := m.Observation
	switch m.Kind {
	case pipeline.MsgTitle:
		return detectHeadline(m.Pipeline, m.Signals, obs)
	case pipeline.MsgDetected:
		return detectedLine(m.Signals, obs)
	case pipeline.MsgClearing:
		return fmt.Sprintf("%s, clearing (recovers after %d clear rounds): %s", symptomList(m.Signals, obs), pipeline.ClearRounds, detectNumbers(obs))
	case pipeline.MsgAgain:
		return "Again: " + detectedLine(m.Signals, obs)
	case pipeline.MsgNowAlso:
		return fmt.Sprintf("Now also %s: %s", symptomList(m.Signals, obs), detectNumbers(obs))
	case pipeline.MsgNotice:
		return fmt.Sprintf("streamwatch detected a problem with %s: %s", m.Pipeline, detectedLine(m.Signals, obs))
	case pipeline.MsgRecovered:
		return "Recovered: " + progressLine(obs)
	case pipeline.MsgRecoveredNotice:
		return fmt.Sprintf("%s recovered: %s", m.Pipeline, progressLine(obs))
	case pipeline.MsgRestarted:
		return fmt.Sprintf("The query restarted: runId %s (was %s), seen at %s in the driver log.", m.Run, m.PrevRun, obs.BeatAt.UTC().Format(time.RFC3339))
	case pipeline.MsgRetentionWarning:
		return fmt.Sprintf("⚠️ %s: %s. Spark must catch up, or retention.ms be raised, before then.", m.Pipeline, retentionLine(obs))
	case pipeline.MsgPublishRewound:
		moved := make([]string, len(m.Rewound))
		for i, r := range m.Rewound {
			moved[i] = fmt.Sprintf("%s from %d to %d", r.Partition, r.From, r.To)
		}
		return fmt.Sprintf("The checkpoint of %s went back (batch %d): publish_group %s moved back with it on %s.",
			m.Pipeline, m.Batch, m.Group, strings.Join(moved, ", "))
	}
	return string(m.Kind) + ": " + m.Pipeline
}

// describeSignal names a symptom for people.
func describeSignal(s pipeline.Signal, obs pipeline.Observation) string {
	switch s {
	case pipeline.SignalStale:
		return "checkpoint stale"
	case pipeline.SignalStalled:
		status := obs.GroupStatus
		if status == "" {
			status = "stalled"
		}
		return "group " + status
	case pipeline.SignalLag:
		return "lag over " + human.Age(obs.MaxLag)
	case pipeline.SignalSilent:
		return "query silent"
	case pipeline.SignalRetention:
		return "unread records near retention"
	case pipeline.SignalSlow:
		return "batch slow"
	}
	return string(s)
}

// symptomList writes symptoms for people: "checkpoint stale, lag over 15m".
func symptomList(syms []pipeline.Signal, obs pipeline.Observation) string {
	parts := make([]string, len(syms))
	for i, s := range syms {
		parts[i] = describeSignal(s, obs)
	}
	return strings.Join(parts, ", ")
}

// detectHeadline is a detection incident's title: the pipeline and its main symptom with its
// numbers ("sms-replies: 1,240 records have waited 6m12s with no checkpoint commit").
func detectHeadline(name string, active []pipeline.Signal, obs pipeline.Observation) string {
	switch {
	case slices.Contains(active, pipeline.SignalSilent):
		return fmt.Sprintf("%s: the query has said nothing in the driver log for %s (no progress, no idle line)", name, human.Age(obs.SilentFor))
	case slices.Contains(active, pipeline.SignalRetention):
		return fmt.Sprintf("%s: unread records of %s are %.0f%% through its retention (%s left)", name, obs.RetentionTopic,
			100*obs.RetentionShare, human.Age(obs.RetentionLeft))
	case slices.Contains(active, pipeline.SignalSlow):
		return fmt.Sprintf("%s: batch %d has run %s, its usual duration is %s", name, obs.Running, human.Age(obs.RunningFor), shortAge(obs.UsualDuration))
	case slices.Contains(active, pipeline.SignalStale):
		return fmt.Sprintf("%s: %s have waited %s with no checkpoint commit", name, records(obs.Waiting), human.Age(obs.WaitingFor))
	case slices.Contains(active, pipeline.SignalLag):
		return fmt.Sprintf("%s: Spark %s behind (%s wait)", name, human.Age(obs.Oldest), records(obs.Waiting))
	case slices.Contains(active, pipeline.SignalStalled):
		return fmt.Sprintf("%s: consumer group %s %s", name, obs.Group, obs.GroupStatus)
	}
	return name + ": " + symptomList(active, obs)
}

// detectNumbers is the line of numbers a detection incident's root shows and edits every
// round: the records waiting beyond the checkpoint and the oldest one's age, the last
// checkpoint commit's age, and the documented group's verdict.
func detectNumbers(obs pipeline.Observation) string {
	var parts []string
	if obs.CheckpointKnown {
		if obs.Waiting >= 0 {
			s := records(obs.Waiting) + " wait beyond the checkpoint"
			if obs.WaitingFor >= 0 && obs.Waiting > 0 {
				s += fmt.Sprintf(" (for %s with no commit)", human.Age(obs.WaitingFor))
			}
			if obs.OldestKnown && obs.Waiting > 0 {
				s += fmt.Sprintf(", the oldest %s old (%s)", human.Age(obs.Oldest), obs.OldestAt)
			}
			parts = append(parts, s)
			if obs.Lost > 0 {
				parts = append(parts, fmt.Sprintf("%s deleted by retention before the query read them", records(obs.Lost)))
			}
		}
		if obs.Batch >= 0 {
			parts = append(parts, fmt.Sprintf("last checkpoint commit %s ago (batch %d)", human.Age(obs.CommitAge), obs.Batch))
			if obs.Interval > 0 {
				parts = append(parts, fmt.Sprintf("stale after %s (auto: %d × the learned batch interval %s, at least %s)",
					human.Age(obs.StaleAfter), pipeline.StaleFactor, human.Age(obs.Interval), human.Age(pipeline.StaleFloor)))
			}
		} else {
			parts = append(parts, "the checkpoint has no commit")
		}
		if !obs.RunningSince.IsZero() {
			s := fmt.Sprintf("batch %d running for %s", obs.Running, human.Age(obs.RunningFor))
			if obs.UsualDuration > 0 {
				s += fmt.Sprintf(" (usual %s; slow after %s: %d × the usual batch duration, at least %s)",
					shortAge(obs.UsualDuration), human.Age(obs.SlowAfter), pipeline.StaleFactor, human.Age(pipeline.StaleFloor))
			}
			parts = append(parts, s)
		}
	} else if obs.CheckpointErr != "" {
		parts = append(parts, "checkpoint unreadable: "+obs.CheckpointErr)
	}
	if obs.RetentionShare > 0 && obs.Retention > 0 {
		parts = append(parts, retentionLine(obs))
	}
	if obs.SilentFor >= 0 && !obs.BeatAt.IsZero() {
		s := fmt.Sprintf("the query's last heartbeat %s ago", human.Age(obs.SilentFor))
		if !obs.LogWritten.IsZero() {
			s += fmt.Sprintf(", the driver log last written %s ago", human.Age(obs.At.Sub(obs.LogWritten)))
		}
		s += ": " + obs.BeatLine
		if obs.BeatPod != nil {
			s += " (" + obs.BeatLog + ": " + podNote(*obs.BeatPod) + ")"
		} else if obs.BeatNote != "" { // stored by an earlier version
			s += " (" + obs.BeatLog + ": " + obs.BeatNote + ")"
		}
		parts = append(parts, s)
	}
	if obs.GroupStatus != "" {
		s := fmt.Sprintf("group %s %s", obs.Group, obs.GroupStatus)
		switch {
		case obs.GroupSummary != nil:
			s += " (" + lagSummaryLine(*obs.GroupSummary) + ")"
		case obs.GroupEvidence != "": // stored by an earlier version
			s += " (" + obs.GroupEvidence + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// detectedLine is the root's symptom line: the active symptoms, then the numbers.
func detectedLine(active []pipeline.Signal, obs pipeline.Observation) string {
	return symptomList(active, obs) + ": " + detectNumbers(obs)
}

// progressLine says where a recovered pipeline stands.
func progressLine(obs pipeline.Observation) string {
	n := detectNumbers(obs)
	if n == "" {
		return "progress resumed"
	}
	return "progress resumed: " + n
}

func records(n int64) string {
	if n < 0 {
		return "an unknown number of records"
	}
	if n == 1 {
		return "1 record"
	}
	return human.Digits(n) + " records"
}

// retentionLine says how close unread records are to retention: the topic, the partitions,
// the oldest one's age, the retention and the time left.
func retentionLine(obs pipeline.Observation) string {
	ps := make([]string, len(obs.RetentionParts))
	for i, p := range obs.RetentionParts {
		ps[i] = fmt.Sprint(p)
	}
	where := obs.RetentionTopic
	if len(ps) > 0 {
		where += " partition " + strings.Join(ps, ", ")
	}
	return fmt.Sprintf("the oldest unread record of %s has used %.0f%% of retention.ms %s: %s left before retention deletes it unread",
		where, 100*obs.RetentionShare, human.Age(obs.Retention), human.Age(obs.RetentionLeft))
}

// shortAge writes a batch duration finer than human.Age under 10s (a usual batch often is):
// "250ms", "1.5s".
func shortAge(d time.Duration) string {
	switch {
	case d > 0 && d < time.Second:
		return d.Round(time.Millisecond).String()
	case d > 0 && d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return human.Age(d)
}
