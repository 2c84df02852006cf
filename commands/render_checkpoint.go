package commands

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/internal/human"
)

// checkpointLines lays a checkpoint report out: the facts first, then the findings, worst
// first, each with its evidence.
func checkpointLines(r *spark.Report) []string {
	var b strings.Builder
	now := r.CheckedAt
	fmt.Fprintf(&b, "Checkpoint %s\n", r.Location)
	id := r.QueryID
	if id == "" {
		id = "unknown"
	}
	fmt.Fprintf(&b, "Checked %s, query id %s\n", human.Time(now), id)

	if p := r.Planned; p != nil {
		fmt.Fprintf(&b, "Planned:   batch %d (%s, planned %s, %s ago)\n", p.ID, p.File, human.Time(p.PlannedAt), human.Elapsed(now.Sub(p.PlannedAt)))
	} else if r.Offsets.Readable {
		b.WriteString("Planned:   no batch yet\n")
	}
	if c := r.Committed; c != nil {
		fmt.Fprintf(&b, "Committed: batch %d (%s, written %s, %s ago)\n", c.ID, c.File, human.Time(c.ModTime), human.Elapsed(now.Sub(c.ModTime)))
	} else if r.Commits.Readable || (!r.Commits.Present && r.Offsets.Present) {
		b.WriteString("Committed: no batch\n")
	}
	if f := r.InFlight; f != nil {
		fmt.Fprintf(&b, "In flight: batch %d for %s\n", f.ID, human.Elapsed(f.For))
	} else if r.Planned != nil && r.Committed != nil {
		b.WriteString("In flight: none\n")
	}
	if r.Offsets.Present || r.Commits.Present {
		fmt.Fprintf(&b, "Logs:      %s, %s\n", logLine(r.Offsets), logLine(r.Commits))
	}

	if len(r.Kafka) > 0 {
		checkpointKafka(&b, r)
	}
	for _, op := range r.State {
		b.WriteString(stateLine(op))
	}
	if n := len(r.Leftovers); n > 0 {
		fmt.Fprintf(&b, "Leftovers: %s (temp or orphan checksum)\n", human.Count(n, "file"))
	}
	if len(r.Hints) > 0 {
		fmt.Fprintf(&b, "Spark:     %s\n", versionHint(r.Hints))
	}

	b.WriteString("Findings:\n")
	for _, f := range r.Findings {
		where := ""
		if f.File != "" {
			where = " [" + f.File + "]"
		}
		fmt.Fprintf(&b, "  %s %s%s: %s\n", strings.ToUpper(f.Severity.String()), f.Code, where, sparkLine(f.Summary))
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "    - %s\n", sparkLine(e))
		}
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

func logLine(l spark.LogListing) string {
	switch {
	case !l.Present:
		return l.Dir + "/ absent"
	case !l.Readable:
		return l.Dir + "/ unreadable"
	case l.Batches == 0:
		return l.Dir + "/ empty"
	}
	s := fmt.Sprintf("%s/ %s %d..%d", l.Dir, human.Count(l.Batches, "batch"), l.First, l.Latest)
	if l.GapCount > 0 {
		s += fmt.Sprintf(" (%d missing)", l.GapCount)
	}
	if l.Checksums > 0 || l.TempFiles > 0 {
		s += fmt.Sprintf(" +%d .crc, %d temp", l.Checksums, l.TempFiles)
	}
	return s
}

// checkpointKafka lists partitions when there are few, and sums per topic otherwise.
func checkpointKafka(b *strings.Builder, r *spark.Report) {
	fmt.Fprintf(b, "Kafka, pending counted from %s:\n", kafkaBaseline(r))
	off := func(v int64) string {
		if v < 0 {
			return "?"
		}
		return fmt.Sprint(v)
	}
	if len(r.Kafka) <= 12 {
		for _, k := range r.Kafka {
			fmt.Fprintf(b, "  %s[%d]: committed %s, planned %s", k.Topic, k.Partition, off(k.Committed), off(k.Planned))
			if k.LogStart > 0 {
				fmt.Fprintf(b, ", log start %d", k.LogStart)
			}
			if k.LogEnd >= 0 {
				fmt.Fprintf(b, ", log end %d", k.LogEnd)
			}
			if k.PendingKnown {
				fmt.Fprintf(b, ", pending %d", k.Pending)
			}
			if k.Note != "" {
				fmt.Fprintf(b, " (%s)", partitionNote(k.Note))
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
	if r.LostRecords > 0 {
		fmt.Fprintf(b, "  deleted by retention before the query read them: %d records on %s\n", r.LostRecords, human.Count(r.LostPartitions, "partition"))
	}
}

func stateLine(op spark.OperatorState) string {
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
