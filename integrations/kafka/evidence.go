package kafka

import (
	"strconv"
	"time"
)

// Rule is the evaluator's rule that decided a partition's status. Its numbers are the
// partition's Committed, LogEnd and Lag, and the Evidence fields each constant names; commands
// words them. The values are stored (in detection's observations): append new rules, never
// renumber.
type Rule uint8

// The rules, with the numbers each uses besides the partition.
const (
	RuleNone Rule = iota // no partition was judged
	// RuleUnknownLogEnd: the partition's log end is unknown this round (UNKNOWN).
	RuleUnknownLogEnd
	// RuleUnknownCommit: the group's commit is unknown this round, or the evaluator had no
	// sample of the partition (UNKNOWN).
	RuleUnknownCommit
	// RuleUnknownBoth: both the log end and the commit are unknown this round (UNKNOWN).
	RuleUnknownBoth
	// RuleNoCommit: no committed offset at the latest sample (NO_COMMITS); LogEnd.
	RuleNoCommit
	// RuleCaughtUp: Lag ≤ Allowed (allowed_lag) at the latest sample (OK); Committed, Lag,
	// Allowed.
	RuleCaughtUp
	// RuleStopped: Lag, above the allowed lag, has waited For with Committed unchanged and no
	// member holds the partition (STOPPED); Committed, LogEnd, Lag, For, AtLeast (the wait
	// began at the first sample: For is a lower bound), Grew (records the log end gained
	// meanwhile).
	RuleStopped
	// RuleRewound: the committed offset went back from From (the highest committed before)
	// to To, For ago, and Committed is still below From (REWOUND).
	RuleRewound
	// RuleStalled: as RuleStopped, with a member holding the partition (STALLED).
	RuleStalled
	// RuleWarning: over Samples samples with a commit, lag never fell, from FromLag to Lag
	// over For, while committed advanced From → Committed (WARNING, Burrow's rule 5).
	RuleWarning
	// RuleConsuming: consuming with Lag above the allowed lag (OK); Committed, Lag, and, when
	// From (committed at the first sample) is below Committed, the advance over For.
	RuleConsuming
)

var ruleNames = [...]string{"none", "unknown_log_end", "unknown_commit", "unknown_both", "no_commit",
	"caught_up", "stopped", "rewound", "stalled", "warning", "consuming"}

func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return "Rule(" + strconv.Itoa(int(r)) + ")"
}

// Evidence is what the evaluator judged one partition on beyond its Committed, LogEnd and Lag:
// the rule that decided and the other numbers it used (see each Rule). It holds no pointer, so
// 10,000 of them cost the collector nothing.
type Evidence struct {
	Rule    Rule
	AtLeast bool          `json:",omitempty"`
	Samples int32         `json:",omitempty"`
	Allowed int64         `json:",omitempty"`
	Grew    int64         `json:",omitempty"`
	From    int64         `json:",omitempty"`
	To      int64         `json:",omitempty"`
	FromLag int64         `json:",omitempty"`
	For     time.Duration `json:",omitempty"`
}

// unknownRule is the rule of a partition the round could not judge.
func unknownRule(p *PartitionLag) Evidence {
	switch {
	case p.LogEnd < 0 && p.Committed == UnknownOffset:
		return Evidence{Rule: RuleUnknownBoth}
	case p.LogEnd < 0:
		return Evidence{Rule: RuleUnknownLogEnd}
	}
	return Evidence{Rule: RuleUnknownCommit}
}

// PartitionVerdict is one partition's judgment with all its numbers: a Summary's worst.
type PartitionVerdict struct {
	// Topic is set when the verdict spans more than one topic.
	Topic     string `json:",omitempty"`
	Partition int32
	Committed int64
	LogEnd    int64
	Lag       int64
	Evidence  Evidence
}

// Verdict is the partition's judgment with its numbers.
func (p *PartitionStatus) Verdict() PartitionVerdict {
	return PartitionVerdict{Partition: p.Partition, Committed: p.Committed, LogEnd: p.LogEnd, Lag: p.Lag, Evidence: p.Evidence}
}

// Verdict is the partition's judgment with its numbers and topic.
func (p *PartitionLag) Verdict() PartitionVerdict {
	return PartitionVerdict{Topic: p.Topic, Partition: p.Partition, Committed: p.Committed, LogEnd: p.LogEnd, Lag: p.Lag, Evidence: p.Evidence}
}

func (p *PartitionStatus) judgment() (Status, int64) { return p.Status, p.Lag }
func (p *PartitionLag) judgment() (Status, int64)    { return p.Status, p.Lag }

// Summary is a verdict over many partitions, as data: the worst status, how many partitions
// share it, and the worst partition's judgment (the most lagging among equals). UNKNOWN
// partitions decide only when nothing else is known; otherwise they are counted apart.
type Summary struct {
	Status Status
	// Judged is how many partitions have a status other than UNKNOWN; Same how many of them
	// share Status; Unknown how many are UNKNOWN. All zero: no samples.
	Judged  int
	Same    int
	Unknown int
	// Lag is, when Status is OK, the lag summed over the partitions (SumLag).
	Lag int64
	// Worst is the worst partition's judgment; its Evidence.Rule is RuleNone when no
	// partition was judged.
	Worst PartitionVerdict
}

// judgedPartition is a PartitionStatus or a PartitionLag, for summarize.
type judgedPartition[P any] interface {
	*P
	judgment() (Status, int64)
	Verdict() PartitionVerdict
}

// summarize gives a group the worst of its partitions' statuses and that partition's judgment
// (the most lagging one among equals), with how many partitions share it. UNKNOWN partitions
// decide only when nothing else is known; otherwise they are counted apart. It reads the
// partitions in place: a report's 10,000 are not copied.
func summarize[P any, J judgedPartition[P]](parts []P) (sum Summary, counts map[Status]int) {
	counts = map[Status]int{}
	worst, worstStatus, worstLag := -1, StatusUnknown, int64(0)
	for i := range parts {
		st, lag := J(&parts[i]).judgment()
		counts[st]++
		if st == StatusUnknown {
			continue
		}
		if worst < 0 || st > worstStatus || st == worstStatus && lag > worstLag {
			worst, worstStatus, worstLag = i, st, lag
		}
		if lag > 0 {
			sum.Lag += lag // SumLag's sum, without a second pass
		}
	}
	sum.Unknown = counts[StatusUnknown]
	if worst < 0 {
		sum.Lag = 0
		return sum, counts
	}
	sum.Status, sum.Worst = worstStatus, J(&parts[worst]).Verdict()
	sum.Judged = len(parts) - sum.Unknown
	sum.Same = counts[worstStatus]
	if worstStatus != StatusOK {
		sum.Lag = 0
	}
	return sum, counts
}
