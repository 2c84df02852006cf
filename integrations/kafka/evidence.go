package kafka

import (
	"strconv"
	"time"
)

// Rule is the evaluator's rule that decided a partition's status. Its numbers are the
// Evidence's fields each constant names; commands words them. The values are stored (in
// detection's observations): append new rules, never renumber.
type Rule uint8

// The rules, with the Evidence fields each uses besides Partition.
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
	// From (committed at the first sample) is below it, the advance over For.
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

// Evidence is what the evaluator judged one partition on: the rule that decided and its
// numbers (see each Rule for the fields it uses). It holds no pointer, so 10,000 of them cost
// the collector nothing.
type Evidence struct {
	Rule      Rule
	AtLeast   bool
	Partition int32
	Samples   int32
	Committed int64
	LogEnd    int64
	Lag       int64
	Allowed   int64
	Grew      int64
	From      int64
	To        int64
	FromLag   int64
	For       time.Duration
}

// unknownEvidence is the evidence of a partition the round could not judge.
func unknownEvidence(p *PartitionLag) Evidence {
	r := RuleUnknownCommit
	switch {
	case p.LogEnd < 0 && p.Committed == UnknownOffset:
		r = RuleUnknownBoth
	case p.LogEnd < 0:
		r = RuleUnknownLogEnd
	}
	return Evidence{Rule: r, Partition: p.Partition, Committed: p.Committed, LogEnd: p.LogEnd, Lag: p.Lag}
}

// Summary is a verdict over many partitions, as data: the worst status, how many partitions
// share it, and the worst partition's evidence (the most lagging among equals). UNKNOWN
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
	// Worst is the worst partition's evidence; its Rule is RuleNone when no partition was
	// judged.
	Worst Evidence
	// Topic is the worst partition's topic when the verdict spans more than one topic.
	Topic string `json:",omitempty"`
}
