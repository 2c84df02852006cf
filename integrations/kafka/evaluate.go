package kafka

import (
	"slices"
	"strconv"
	"time"
)

// Status is the evaluator's verdict on a partition or a group.
type Status int

// Statuses, from least to most severe; a group takes its worst partition's.
const (
	StatusUnknown   Status = iota // no samples
	StatusOK                      // consuming, caught up, or nothing new to consume
	StatusNoCommits               // the group has no committed offset
	StatusWarning                 // lag above allowed_lag at every sample and never fell, while commits advanced
	StatusRewound                 // the committed offset went backwards and has not yet come back to its previous high
	StatusStalled                 // a member holds the partition, yet more than allowed_lag records have waited for stall_after with no commit
	StatusStopped                 // no member holds it, and more than allowed_lag records have waited for stall_after with no commit
)

var statusNames = [...]string{"UNKNOWN", "OK", "NO_COMMITS", "WARNING", "REWOUND", "STALLED", "STOPPED"}

func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// ParseStatus is the inverse of Status.String.
func ParseStatus(s string) (Status, bool) {
	for i, n := range statusNames {
		if n == s {
			return Status(i), true
		}
	}
	return StatusUnknown, false
}

// Healthy is true for OK, and for UNKNOWN which says nothing is wrong yet.
func (s Status) Healthy() bool { return s == StatusOK || s == StatusUnknown }

// PartitionSample is one partition of one sampling round of a group on a
// topic: what the group had committed and where the log ended, at At.
//
// A sample holds no pointer (the time is Unix milliseconds), so a window of
// 10,000 partitions × 60 rounds copies as plain memory and costs the
// garbage collector nothing to scan.
type PartitionSample struct {
	Partition int32
	// Owned is true when a live member of the group held the partition.
	// It tells a stuck consumer (STALLED) from a gone one (STOPPED).
	Owned     bool
	Committed int64 // NoOffset when the group had no commit
	LogEnd    int64
	UnixMilli int64 // when the sample was taken
}

// Time is when the sample was taken.
func (s *PartitionSample) Time() time.Time { return time.UnixMilli(s.UnixMilli) }

// since is now minus the sample's time.
func (s *PartitionSample) since(now time.Time) time.Duration {
	return time.Duration(now.UnixMilli()-s.UnixMilli) * time.Millisecond
}

func millisBetween(a, b *PartitionSample) time.Duration {
	return time.Duration(b.UnixMilli-a.UnixMilli) * time.Millisecond
}

// EvalOptions parameterise Evaluate.
type EvalOptions struct {
	Now        time.Time     // the evaluation time; zero means the latest sample's time
	StallAfter time.Duration // 0 means DefaultStallAfter
	// AllowedLag is how many records a consumer may leave unread and still count as
	// caught up: transaction markers leave a lag of 1 for ever. The zero value allows none.
	AllowedLag int64
	// MinSamples is the number of samples a trend (WARNING) needs; 0
	// means 5.
	MinSamples int
}

// PartitionStatus is the verdict on one partition.
type PartitionStatus struct {
	Partition int32
	Status    Status
	// Evidence is the rule that decided Status and the numbers it used besides Committed,
	// LogEnd and Lag.
	Evidence  Evidence
	Committed int64 // at the latest sample
	LogEnd    int64
	Lag       int64 // -1 without a commit
	// Age estimates how old the record at the committed offset is, by
	// interpolating when the log end passed it. AgeAtLeast marks a lower
	// bound: the log end had passed it before the first sample.
	Age        time.Duration
	AgeAtLeast bool
	Samples    int
	// Moved is when the samples first showed the current committed offset; zero when it
	// has not changed since the first sample (the window shows no commit progress).
	Moved time.Time
}

// GroupStatus is the verdict on a group's partitions of one topic.
type GroupStatus struct {
	Status     Status
	Summary    Summary
	Counts     map[Status]int
	Partitions []PartitionStatus // sorted by partition
	// Moved is the latest Moved of the partitions: when the samples last saw a commit.
	Moved time.Time
}

// Evaluate judges a group from its samples. It is pure: no I/O, no clock
// but opts.Now. samples may mix partitions and must be in the order they
// were taken (oldest first), as a SampleStore returns them.
//
// For each partition, over its samples (docs/lag-evaluator.md compares
// the rules with Burrow's):
//   - no commit at the latest sample: NO_COMMITS;
//   - lag at most AllowedLag at the latest sample: OK;
//   - more than AllowedLag records have waited for at least stall_after
//     without the committed offset moving (the clock starts at the first
//     sample of the current committed offset whose lag exceeds AllowedLag,
//     so time spent caught up does not count): STOPPED if no member holds
//     the partition; whether the producer still writes does not matter;
//   - the committed offset went backwards and has not come back to the
//     highest offset committed before: REWOUND;
//   - the same wait with a member holding the partition: STALLED;
//   - at least MinSamples samples with a commit, lag above AllowedLag at
//     every one, never falling from one to the next, and the committed
//     offset advanced: WARNING (Burrow's rule 5);
//   - otherwise OK.
func Evaluate(samples []PartitionSample, opts EvalOptions) GroupStatus {
	return evaluate(samples, nil, opts)
}

// evaluate judges window followed by latest, as if they were one slice,
// without copying either: the monitor judges stored rounds plus the answer
// it just fetched.
//
// Stores hand samples round by round, so one partition's samples lie a
// round apart in memory. Rather than gather each partition's samples
// (a cache miss per sample at 10,000 partitions), evaluate streams through
// the samples in order twice, keeping a small state per partition: the
// first pass gathers what the rules need, the second brackets each
// partition's committed offset between two log-end samples for its age.
func evaluate(window, latest []PartitionSample, opts EvalOptions) GroupStatus {
	if opts.StallAfter <= 0 {
		opts.StallAfter = DefaultStallAfter
	}
	if opts.MinSamples <= 0 {
		opts.MinSamples = 5
	}
	src := sampleSource{window, latest}
	states := &partStates{allowed: max(opts.AllowedLag, 0)}
	states.observeAll(window, 0)
	states.observeAll(latest, len(window))
	if opts.Now.IsZero() {
		for _, st := range states.all() {
			if at := src.at(st.last).Time(); at.After(opts.Now) {
				opts.Now = at
			}
		}
	}
	states.bracketAll(window, 0)
	states.bracketAll(latest, len(window))

	all := states.all()
	out := GroupStatus{Partitions: make([]PartitionStatus, len(all))}
	for i, st := range all {
		out.Partitions[i] = st.verdict(src, opts)
	}
	out.Summary, out.Counts = summarize(out.Partitions)
	out.Status = out.Summary.Status
	for _, p := range out.Partitions {
		if p.Moved.After(out.Moved) {
			out.Moved = p.Moved
		}
	}
	return out
}

// partStates holds one partState per partition: in a slice indexed by
// partition, as Kafka's partitions are dense, or in a map if a partition
// number is far beyond the sample count.
type partStates struct {
	dense   []partState
	sparse  map[int32]*partState
	n       int
	allowed int64 // EvalOptions.AllowedLag
}

func (ps *partStates) observeAll(samples []PartitionSample, base int) {
	ps.n += len(samples)
	for i := range samples {
		p, at := samples[i].Partition, ref(base+i+1)
		if ps.sparse == nil && p >= 0 && int(p) < len(ps.dense) {
			ps.dense[p].observe(&samples[i], at, ps.allowed) // the common case, kept tight
			continue
		}
		ps.slot(p).observe(&samples[i], at, ps.allowed)
	}
}

func (ps *partStates) bracketAll(samples []PartitionSample, base int) {
	if ps.sparse == nil {
		dense := ps.dense
		for i := range samples {
			dense[samples[i].Partition].bracket(&samples[i], ref(base+i+1))
		}
		return
	}
	for i := range samples {
		ps.sparse[samples[i].Partition].bracket(&samples[i], ref(base+i+1))
	}
}

// slot returns p's state, growing the dense slice or switching to the map.
func (ps *partStates) slot(p int32) *partState {
	if ps.sparse == nil {
		if p >= 0 && int(p) < 4*ps.n+1024 {
			if int(p) >= len(ps.dense) {
				grown := make([]partState, max(int(p)+1, 2*len(ps.dense)))
				copy(grown, ps.dense)
				ps.dense = grown
			}
			return &ps.dense[p]
		}
		ps.sparse = make(map[int32]*partState, len(ps.dense))
		for i := range ps.dense {
			if ps.dense[i].n > 0 {
				st := ps.dense[i]
				ps.sparse[int32(i)] = &st
			}
		}
		ps.dense = nil
	}
	st := ps.sparse[p]
	if st == nil {
		st = &partState{}
		ps.sparse[p] = st
	}
	return st
}

// all lists the states of partitions with samples, by partition.
func (ps *partStates) all() []*partState {
	var out []*partState
	if ps.sparse == nil {
		for i := range ps.dense {
			if ps.dense[i].n > 0 {
				out = append(out, &ps.dense[i])
			}
		}
		return out
	}
	for _, st := range ps.sparse {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b *partState) int { return int(a.partition - b.partition) })
	return out
}

// ref is the position of a sample in window+latest, plus one: the zero
// ref is no sample. partState holds refs rather than pointers so that the
// states hold no pointers at all: the collector neither scans them nor
// makes every store pay a write barrier.
type ref int32

// sampleSource is window+latest, read by position.
type sampleSource struct{ window, latest []PartitionSample }

func (s sampleSource) at(r ref) *PartitionSample {
	if i := int(r) - 1; i < len(s.window) {
		return &s.window[i]
	} else {
		return &s.latest[i-len(s.window)]
	}
}

// partState is what the rules need from one partition's samples, gathered
// in one pass in time order. The fields read at every sample are copies;
// the samples the verdict reads once are refs.
type partState struct {
	n             int32
	partition     int32
	lastCommitted int64
	lastLogEnd    int64
	first, last   ref

	// The run of samples that show the latest committed offset starts at
	// runStart; runFromFirst says it starts at the first sample.
	runStart     ref
	runFromFirst bool
	// waitStart is the first sample of the run whose lag exceeded the
	// allowed lag: the stall clock starts there. 0 while within it.
	waitStart ref

	// Samples with a commit: the first, the previous, how many; whether
	// lag exceeded the allowed lag at every one and never fell between two.
	nCommitted       int32
	firstCommitted   ref
	prevCommitted    int64
	prevLag          int64
	lagAlwaysAbove   bool
	lagNeverFell     bool
	highestCommitted int64

	// The latest rewind: the highest offset committed before it, and the
	// sample that showed it.
	rewindHigh int64
	rewindTo   ref

	// The last sample whose log end had not passed the latest commit, and
	// the sample after it.
	below, above ref
}

func (st *partState) observe(s *PartitionSample, r ref, allowed int64) {
	if st.n == 0 {
		st.partition, st.first, st.runStart, st.runFromFirst = s.Partition, r, r, true
	} else if s.Committed != st.lastCommitted {
		st.runStart, st.runFromFirst, st.waitStart = r, false, 0
	}
	if s.Committed >= 0 {
		lag := max(s.LogEnd-s.Committed, 0)
		switch {
		case lag <= allowed:
			st.waitStart = 0 // caught up (a truncated log can bring lag back down)
		case st.waitStart == 0:
			st.waitStart = r
		}
		if st.nCommitted == 0 {
			st.firstCommitted = r
			st.lagAlwaysAbove, st.lagNeverFell = true, true
			st.highestCommitted = s.Committed
		} else {
			if s.Committed < st.prevCommitted {
				st.rewindHigh, st.rewindTo = st.highestCommitted, r
			}
			if lag < st.prevLag {
				st.lagNeverFell = false
			}
			st.highestCommitted = max(st.highestCommitted, s.Committed)
		}
		if lag <= allowed {
			st.lagAlwaysAbove = false
		}
		st.prevCommitted, st.prevLag = s.Committed, lag
		st.nCommitted++
	} else {
		st.waitStart = 0
	}
	st.last, st.lastCommitted, st.lastLogEnd = r, s.Committed, s.LogEnd
	st.n++
}

// bracket is the second pass: it finds the two samples between which the
// log end passed the latest committed offset.
func (st *partState) bracket(s *PartitionSample, r ref) {
	c := st.lastCommitted
	if c < 0 || st.lastLogEnd <= c {
		return
	}
	switch {
	case s.LogEnd <= c:
		st.below, st.above = r, 0
	case st.below != 0 && st.above == 0:
		st.above = r
	}
}

// age interpolates when the log end passed the latest committed offset: the
// record at offset C was appended once the log end exceeded C.
func (st *partState) age(src sampleSource, now time.Time) (time.Duration, bool) {
	c := st.lastCommitted
	switch {
	case c < 0 || st.lastLogEnd <= c:
		return 0, false
	case st.below == 0:
		return max(src.at(st.first).since(now), 0), true
	case st.above == 0:
		return 0, false
	}
	a, b := src.at(st.below), src.at(st.above)
	frac := float64(c+1-a.LogEnd) / float64(b.LogEnd-a.LogEnd)
	appended := a.UnixMilli + int64(frac*float64(b.UnixMilli-a.UnixMilli))
	return max(time.Duration(now.UnixMilli()-appended)*time.Millisecond, 0), false
}

func lagOf(s *PartitionSample) int64 {
	if s.Committed < 0 {
		return -1
	}
	return max(s.LogEnd-s.Committed, 0)
}

// verdict applies the rules and keeps the numbers the deciding rule used as the partition's
// Evidence (commands words it).
func (st *partState) verdict(src sampleSource, opts EvalOptions) PartitionStatus {
	last := src.at(st.last)
	ps := PartitionStatus{Partition: last.Partition, Committed: last.Committed, LogEnd: last.LogEnd,
		Lag: lagOf(last), Samples: int(st.n)}
	if !st.runFromFirst {
		ps.Moved = src.at(st.runStart).Time()
	}
	ev := &ps.Evidence
	allowed := max(opts.AllowedLag, 0)

	switch {
	case last.Committed < 0:
		ps.Status, ev.Rule = StatusNoCommits, RuleNoCommit
		return ps
	case ps.Lag <= allowed:
		ps.Status, ev.Rule, ev.Allowed = StatusOK, RuleCaughtUp, allowed
		return ps
	}
	ps.Age, ps.AgeAtLeast = st.age(src, opts.Now)

	// The stall clock: how long more than the allowed lag has waited
	// without a commit.
	waited := time.Duration(-1)
	if st.waitStart != 0 && st.n > 1 {
		waited = src.at(st.waitStart).since(opts.Now)
	}
	stalled := waited >= opts.StallAfter
	wait := func(r Rule) {
		ev.Rule, ev.For, ev.AtLeast = r, waited, st.waitStart == st.first // it may have waited before the first sample
		ev.Grew = max(last.LogEnd-src.at(st.waitStart).LogEnd, 0)
	}
	if stalled && !last.Owned {
		ps.Status = StatusStopped
		wait(RuleStopped)
		return ps
	}
	if st.rewindTo != 0 && last.Committed < st.rewindHigh {
		to := src.at(st.rewindTo)
		ps.Status, ev.Rule = StatusRewound, RuleRewound
		ev.From, ev.To, ev.For = st.rewindHigh, to.Committed, to.since(opts.Now)
		return ps
	}
	if stalled {
		ps.Status = StatusStalled
		wait(RuleStalled)
		return ps
	}

	// Burrow's warning rule over the samples with commits: lag above the
	// allowed lag at every one and never falling while commits advanced.
	if first := src.at(st.firstCommitted); st.lagAlwaysAbove && st.lagNeverFell && int(st.nCommitted) >= opts.MinSamples &&
		last.Committed > first.Committed {
		ps.Status, ev.Rule = StatusWarning, RuleWarning
		ev.Samples, ev.FromLag, ev.For, ev.From = st.nCommitted, lagOf(first), millisBetween(first, last), first.Committed
		return ps
	}

	first := src.at(st.first)
	ps.Status, ev.Rule = StatusOK, RuleConsuming
	ev.From, ev.For = first.Committed, millisBetween(first, last)
	return ps
}
