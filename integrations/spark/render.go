package spark

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// RenderText renders a report as plain text for a chat reply or a terminal: the facts first,
// then the findings, worst first, each with its evidence.
func RenderText(r *Report) string {
	var b strings.Builder
	now := r.CheckedAt
	fmt.Fprintf(&b, "Checkpoint %s\n", r.Location)
	id := r.QueryID
	if id == "" {
		id = "unknown"
	}
	fmt.Fprintf(&b, "Checked %s, query id %s\n", stamp(now), id)

	if p := r.Planned; p != nil {
		fmt.Fprintf(&b, "Planned:   batch %d (%s, planned %s, %s ago)\n", p.ID, p.File, stamp(p.PlannedAt), age(now.Sub(p.PlannedAt)))
	} else if r.Offsets.Readable {
		b.WriteString("Planned:   no batch yet\n")
	}
	if c := r.Committed; c != nil {
		fmt.Fprintf(&b, "Committed: batch %d (%s, written %s, %s ago)\n", c.ID, c.File, stamp(c.ModTime), age(now.Sub(c.ModTime)))
	} else if r.Commits.Readable || (!r.Commits.Present && r.Offsets.Present) {
		b.WriteString("Committed: no batch\n")
	}
	if f := r.InFlight; f != nil {
		fmt.Fprintf(&b, "In flight: batch %d for %s\n", f.ID, age(f.For))
	} else if r.Planned != nil && r.Committed != nil {
		b.WriteString("In flight: none\n")
	}
	if r.Offsets.Present || r.Commits.Present {
		fmt.Fprintf(&b, "Logs:      %s, %s\n", logLine(r.Offsets), logLine(r.Commits))
	}

	if len(r.Kafka) > 0 {
		renderKafka(&b, r)
	}
	for _, op := range r.State {
		b.WriteString(stateLine(op))
	}
	if n := len(r.Leftovers); n > 0 {
		fmt.Fprintf(&b, "Leftovers: %s (temp or orphan checksum)\n", plural(n, "file"))
	}
	if r.VersionHint != "" {
		fmt.Fprintf(&b, "Spark:     %s\n", r.VersionHint)
	}

	b.WriteString("Findings:\n")
	for _, f := range r.Findings {
		where := ""
		if f.File != "" {
			where = " [" + f.File + "]"
		}
		fmt.Fprintf(&b, "  %s %s%s: %s\n", strings.ToUpper(f.Severity.String()), f.Code, where, f.Summary)
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "    - %s\n", e)
		}
	}
	return b.String()
}

func logLine(l LogListing) string {
	switch {
	case !l.Present:
		return l.Dir + "/ absent"
	case !l.Readable:
		return l.Dir + "/ unreadable"
	case l.Batches == 0:
		return l.Dir + "/ empty"
	}
	s := fmt.Sprintf("%s/ %s %d..%d", l.Dir, plural(l.Batches, "batch"), l.First, l.Latest)
	if l.GapCount > 0 {
		s += fmt.Sprintf(" (%d missing)", l.GapCount)
	}
	if l.Checksums > 0 || l.TempFiles > 0 {
		s += fmt.Sprintf(" +%d .crc, %d temp", l.Checksums, l.TempFiles)
	}
	return s
}

// renderKafka lists partitions when there are few, and sums per topic otherwise.
func renderKafka(b *strings.Builder, r *Report) {
	base := r.KafkaBaseline
	if base == "" {
		base = "the checkpoint"
	}
	fmt.Fprintf(b, "Kafka, pending counted from %s:\n", base)
	off := func(v int64) string {
		if v < 0 {
			return "?"
		}
		return fmt.Sprint(v)
	}
	if len(r.Kafka) <= 12 {
		for _, k := range r.Kafka {
			fmt.Fprintf(b, "  %s[%d]: committed %s, planned %s", k.Topic, k.Partition, off(k.Committed), off(k.Planned))
			if k.LogEnd >= 0 {
				fmt.Fprintf(b, ", log end %d", k.LogEnd)
			}
			if k.PendingKnown {
				fmt.Fprintf(b, ", pending %d", k.Pending)
			}
			if k.Note != "" {
				fmt.Fprintf(b, " (%s)", k.Note)
			}
			b.WriteString("\n")
		}
	} else {
		type topicSum struct {
			parts, notes    int
			pending, maxP   int64
			maxPart         int32
			anyPendingKnown bool
		}
		sums := map[string]*topicSum{}
		for _, k := range r.Kafka {
			s := sums[k.Topic]
			if s == nil {
				s = &topicSum{maxPart: -1}
				sums[k.Topic] = s
			}
			s.parts++
			if k.Note != "" {
				s.notes++
			}
			if k.PendingKnown && k.Pending > 0 {
				s.pending += k.Pending
				if k.Pending > s.maxP {
					s.maxP, s.maxPart = k.Pending, k.Partition
				}
			}
			s.anyPendingKnown = s.anyPendingKnown || k.PendingKnown
		}
		topics := make([]string, 0, len(sums))
		for t := range sums {
			topics = append(topics, t)
		}
		sort.Strings(topics)
		for _, t := range topics {
			s := sums[t]
			fmt.Fprintf(b, "  %s: %d partitions", t, s.parts)
			if s.anyPendingKnown {
				fmt.Fprintf(b, ", pending %d", s.pending)
				if s.maxPart >= 0 {
					fmt.Fprintf(b, " (most on partition %d: %d)", s.maxPart, s.maxP)
				}
			}
			if s.notes > 0 {
				fmt.Fprintf(b, ", %d partitions disagree with the broker", s.notes)
			}
			b.WriteString("\n")
		}
	}
	if r.PendingKnown {
		fmt.Fprintf(b, "  pending total: %d records\n", r.PendingTotal)
	}
}

func stateLine(op OperatorState) string {
	name := ""
	if op.Metadata != nil && op.Metadata.Operator.Name != "" {
		name = " (" + op.Metadata.Operator.Name + ")"
	}
	parts := map[int]bool{}
	for _, s := range op.Stores {
		parts[s.Partition] = true
	}
	total := fmt.Sprint(len(parts))
	if op.ExpectedPartitions > 0 {
		total = fmt.Sprintf("%d/%d", len(parts), op.ExpectedPartitions)
	}
	s := fmt.Sprintf("State:     operator %d%s: %s partitions", op.ID, name, total)
	if op.MaxVersion >= 0 {
		s += fmt.Sprintf(", newest versions %d..%d", op.MinVersion, op.MaxVersion)
	} else {
		s += ", no state files"
	}
	if op.ExpectedVersion >= 0 {
		s += fmt.Sprintf(" (want %d)", op.ExpectedVersion)
	}
	return s + "\n"
}

// stamp formats a time for people, in UTC.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "at an unknown time"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// age formats a duration coarsely: 45s, 12m5s, 3h4m, 2d3h.
func age(d time.Duration) string {
	if d < 0 {
		return "-" + age(-d)
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dd%dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	}
}
