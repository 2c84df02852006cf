package commands

import (
	"fmt"
	"strconv"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/internal/human"
)

// lagSummaryLine words the evaluator's verdict over many partitions in one line: "1 of 4
// partitions STALLED; worst p3: …", "12 partitions OK, lag 40; most behind p7: …", with the
// partitions nothing is known about counted at the end.
func lagSummaryLine(s kafka.Summary) string {
	if s.Worst.Evidence.Rule == kafka.RuleNone {
		if s.Unknown == 0 {
			return "no samples"
		}
		return "nothing known about " + human.Count(s.Unknown, "partition")
	}
	worst := partitionEvidence(s.Worst)
	if s.Worst.Topic != "" {
		worst = s.Worst.Topic + " " + worst
	}
	var line string
	switch {
	case s.Status == kafka.StatusOK:
		line = fmt.Sprintf("%s OK, lag %s; most behind %s", human.Count(s.Judged, "partition"), human.Digits(s.Lag), worst)
	case s.Same == s.Judged:
		line = fmt.Sprintf("all %s %s; worst %s", human.Count(s.Judged, "partition"), s.Status, worst)
	default:
		line = fmt.Sprintf("%d of %s %s; worst %s", s.Same, human.Count(s.Judged, "partition"), s.Status, worst)
	}
	if s.Unknown > 0 {
		line += fmt.Sprintf("; %s unknown", human.Count(s.Unknown, "partition"))
	}
	return line
}

// partitionEvidence words the rule that decided a partition's status and its numbers:
// "p3: lag 470 for 7m, committed unchanged at 1840, log end 2310 (+410 in that time), no
// member holds it".
func partitionEvidence(p kafka.PartitionVerdict) string {
	e := p.Evidence
	b := append(make([]byte, 0, 96), 'p')
	b = strconv.AppendInt(b, int64(p.Partition), 10)
	b = append(b, ": "...)
	num := func(prefix string, n int64) { b = strconv.AppendInt(append(b, prefix...), n, 10) }
	age := func(prefix string, d time.Duration) { b = human.AppendAge(append(b, prefix...), d) }
	switch e.Rule {
	case kafka.RuleUnknownBoth:
		b = append(b, "log end and commit unknown"...)
	case kafka.RuleUnknownLogEnd:
		b = append(b, "log end unknown"...)
	case kafka.RuleUnknownCommit:
		b = append(b, "commit unknown"...)
	case kafka.RuleNoCommit:
		num("no committed offset, log end ", p.LogEnd)
	case kafka.RuleCaughtUp:
		num("caught up at ", p.Committed)
		if p.Lag > 0 {
			num(" (lag ", p.Lag)
			num(" ≤ allowed_lag ", e.Allowed)
			b = append(b, ')')
		}
	case kafka.RuleStopped, kafka.RuleStalled:
		num("lag ", p.Lag)
		b = append(b, " for "...)
		if e.AtLeast {
			b = append(b, "≥"...) // it may have waited before the first sample
		}
		age("", e.For)
		num(", committed unchanged at ", p.Committed)
		num(", log end ", p.LogEnd)
		if e.Grew > 0 {
			num(" (+", e.Grew)
			b = append(b, " in that time)"...)
		} else {
			b = append(b, " (no new records in that time)"...)
		}
		if e.Rule == kafka.RuleStopped {
			b = append(b, ", no member holds it"...)
		} else {
			b = append(b, ", held by a live member"...)
		}
	case kafka.RuleRewound:
		num("committed went back from ", e.From)
		num(" to ", e.To)
		age(" ", e.For)
		b = append(b, " ago"...)
		if p.Committed != e.To {
			num("; now ", p.Committed)
		}
		num(", ", e.From-p.Committed)
		b = append(b, " short of its previous high"...)
	case kafka.RuleWarning:
		num("lag never fell over ", int64(e.Samples))
		num(" samples, from ", e.FromLag)
		num(" to ", p.Lag)
		age(" over ", e.For)
		num(", while committed advanced ", e.From)
		num(" → ", p.Committed)
	case kafka.RuleConsuming:
		num("committed ", p.Committed)
		if e.From >= 0 && e.From < p.Committed {
			num(" (+", p.Committed-e.From)
			age(" in ", e.For)
			b = append(b, ')')
		}
		num(", lag ", p.Lag)
	default:
		b = append(b, e.Rule.String()...)
	}
	return string(b)
}
