package kafka

import (
	"testing"
	"time"
)

// burrowCommit is one entry of Burrow's offset ring: a commit, when it was made, and the lag
// the broker's log end gave it then.
type burrowCommit struct{ offset, ms, lag int64 }

// burrowRound is one of our sampling rounds after the last commit: the committed offset
// stays, the log end is what the broker said at ms.
type burrowRound struct{ ms, logEnd int64 }

// burrowSamples translates a Burrow case into our samples: a sample per commit (committed
// offset, offset+lag), then our sampler's rounds between the last commit and now, then the
// round taken now (the broker's current log end). Burrow keeps only commits and a few recent
// broker offsets; our window keeps every round, so rounds Burrow has no record of are spelled
// out here, as our sampler would have taken them.
func burrowSamples(owned bool, commits []burrowCommit, rounds []burrowRound, nowMS, currentLag int64) []PartitionSample {
	var out []PartitionSample
	for _, c := range commits {
		out = append(out, PartitionSample{Committed: c.offset, LogEnd: c.offset + c.lag, Owned: owned, UnixMilli: c.ms})
	}
	last := commits[len(commits)-1].offset
	for _, r := range rounds {
		out = append(out, PartitionSample{Committed: last, LogEnd: r.logEnd, Owned: owned, UnixMilli: r.ms})
	}
	return append(out, PartitionSample{Committed: last, LogEnd: last + currentLag, Owned: owned, UnixMilli: nowMS})
}

// burrowStop is Burrow's stop rule as an absolute stall_after: Burrow calls a partition stopped
// when now − last commit > last commit − first commit (strictly); our rule is "≥ stall_after".
func burrowStop(commits []burrowCommit) time.Duration {
	return time.Duration(commits[len(commits)-1].ms-commits[0].ms)*time.Millisecond + time.Millisecond
}

// TestEvaluateAgainstBurrow ports the cases of Burrow's evaluator
// (core/internal/evaluator/caching_test.go, tests 0–11) and of Burrow issue #714 / PR #716.
// Burrow's status is written down beside ours; where they differ, why says why
// (docs/lag-evaluator.md lists every difference).
func TestEvaluateAgainstBurrow(t *testing.T) {
	t.Parallel()
	steady := []burrowCommit{{1000, 100000, 0}, {2000, 200000, 50}, {3000, 300000, 100}, {4000, 400000, 150}, {5000, 500000, 200}}
	always := []burrowCommit{{1000, 100000, 50}, {2000, 200000, 100}, {3000, 300000, 150}, {4000, 400000, 200}, {5000, 500000, 250}}
	// Tests 9 and 10: fifteen commits a second apart, each at lag 0.
	var perSecond []burrowCommit
	for i, ms := range []int64{1512224618356, 1512224619362, 1512224620366, 1512224621367, 1512224622370, 1512224623373,
		1512224624378, 1512224625379, 1512224626383, 1512224627383, 1512224628383, 1512224629388, 1512224630391,
		1512224631394, 1512224632397} {
		perSecond = append(perSecond, burrowCommit{792748079 + int64(i), ms, 0})
	}
	const now9 = 1512224650000
	// Test 9's broker offsets, newest first: 792749024 (now), 792749000, 792748800, 792748600,
	// 792748500; the rounds before those, back to the last commit, saw the log end rise.
	var rounds9 []burrowRound
	for k := int64(0); k < 13; k++ {
		rounds9 = append(rounds9, burrowRound{1512224633400 + k*1000, 792748093 + 30*(k+1)})
	}
	rounds9 = append(rounds9, burrowRound{1512224646000, 792748500}, burrowRound{1512224647000, 792748600},
		burrowRound{1512224648000, 792748800}, burrowRound{1512224649000, 792749000})

	cases := []struct {
		name       string
		samples    []PartitionSample
		stallAfter time.Duration
		burrow     Status
		want       Status
		why        string // set where we differ from Burrow's table
	}{
		{name: "0: OK, zero lag in the window and not stopped yet",
			samples: burrowSamples(true, steady, nil, 600000, 200), stallAfter: burrowStop(steady),
			burrow: StatusOK, want: StatusOK},
		{name: "1: OK, 400s since the last commit is not more than the 400s window",
			samples: burrowSamples(false, steady, nil, 900000, 200), stallAfter: burrowStop(steady),
			burrow: StatusOK, want: StatusOK},
		{name: "2: STOP, 500s without a commit while lag is 200, though lag was 0 earlier (#290)",
			samples: burrowSamples(false, steady, nil, 1000000, 200), stallAfter: burrowStop(steady),
			burrow: StatusStopped, want: StatusStopped},
		{name: "3: STOP, lag never zero",
			samples: burrowSamples(false, always, nil, 1000000, 250), stallAfter: burrowStop(always),
			burrow: StatusStopped, want: StatusStopped},
		{name: "4: OK, the same offset with zero lag at the start",
			samples: burrowSamples(true, []burrowCommit{{1000, 100000, 0}, {1000, 200000, 50}, {1000, 300000, 100}, {1000, 400000, 150}, {1000, 500000, 200}},
				nil, 600000, 200),
			stallAfter: 400*time.Second + time.Millisecond, burrow: StatusOK, want: StatusOK},
		{name: "5: STALL, the same offset committed again and again with lag",
			samples: burrowSamples(true, []burrowCommit{{1000, 100000, 100}, {1000, 200000, 150}, {1000, 300000, 200}, {1000, 400000, 250}, {1000, 500000, 300}},
				nil, 600000, 300),
			stallAfter: 400*time.Second + time.Millisecond, burrow: StatusStalled, want: StatusStalled},
		{name: "6: STALL, even when the lag stays the same (no new records)",
			samples: burrowSamples(true, []burrowCommit{{1000, 100000, 100}, {1000, 200000, 100}, {1000, 300000, 100}, {1000, 400000, 100}, {1000, 500000, 100}},
				nil, 600000, 100),
			stallAfter: 400*time.Second + time.Millisecond, burrow: StatusStalled, want: StatusStalled},
		{name: "7: a rewind the consumer has since passed",
			samples: burrowSamples(true, []burrowCommit{{1000, 100000, 100}, {2000, 200000, 150}, {3000, 300000, 200}, {2000, 400000, 1250}, {4000, 500000, 300}},
				nil, 600000, 300),
			stallAfter: 400*time.Second + time.Millisecond, burrow: StatusRewound, want: StatusOK,
			why: "the table predates #716: the consumer is at 4000, past 3000, its high before the rewind; by #716's rule (and ours) the rewind no longer counts"},
		{name: "8: OK, the current lag is 0 though the timestamps say stopped",
			samples: burrowSamples(false, always, nil, 1000000, 0), stallAfter: burrowStop(always),
			burrow: StatusOK, want: StatusOK},
		{name: "9: STOP, commits at lag 0 until new data arrived and no commit followed (#290)",
			samples: burrowSamples(false, perSecond, rounds9, now9, 792749024-792748093), stallAfter: burrowStop(perSecond),
			burrow: StatusStopped, want: StatusStopped},
		{name: "10: OK, the one new record arrived moments ago (#303)",
			samples: burrowSamples(false, perSecond, []burrowRound{{1512224647000, 792748093}, {1512224648000, 792748093}, {1512224649000, 792748093}},
				now9, 1),
			stallAfter: burrowStop(perSecond), burrow: StatusOK, want: StatusOK},
		// Test 11 adds commits without a lag value (Burrow fills lag only when a broker offset
		// is known): every sample of ours carries the log end fetched with it, so it has no
		// counterpart.
		{name: "#714: REWIND, a healthy consumer at lag 0 rewinds",
			samples:    burrowSamples(true, []burrowCommit{{10, 60000, 0}, {20, 120000, 0}, {30, 180000, 0}, {20, 240000, 20}}, nil, 240000, 20),
			stallAfter: 5 * time.Minute, burrow: StatusRewound, want: StatusRewound},
		{name: "#714: OK once it is back at its high before the rewind",
			samples:    burrowSamples(true, []burrowCommit{{20, 120000, 0}, {30, 180000, 0}, {20, 240000, 10}, {30, 300000, 15}}, nil, 300000, 15),
			stallAfter: 5 * time.Minute, burrow: StatusOK, want: StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Evaluate(c.samples, EvalOptions{StallAfter: c.stallAfter})
			if got.Status != c.want {
				t.Errorf("status %s, want %s (Burrow: %s) — %+v", got.Status, c.want, c.burrow, got.Summary)
			}
			if (c.want != c.burrow) != (c.why != "") {
				t.Errorf("ours %s, Burrow's %s: a difference needs a reason, agreement none (why %q)", c.want, c.burrow, c.why)
			}
		})
	}
}

// TestEvaluateIssueSequences are the sequences issue 13 found wrong, and the rules that fix
// them.
func TestEvaluateIssueSequences(t *testing.T) {
	t.Parallel()
	const step = 30 * time.Second
	caughtUp := repeat(21, pt{1000, 1000, true}) // 10m caught up on a quiet partition
	cases := []struct {
		name       string
		samples    []PartitionSample
		allowedLag int64
		want       Status
		rule       Rule
	}{
		{"a caught-up consumer on a quiet partition receives one record: not stalled",
			script(0, step, append(caughtUp, pt{1000, 1001, true})...), 0, StatusOK, RuleConsuming},
		{"the same with allowed_lag 1: caught up",
			script(0, step, append(caughtUp, pt{1000, 1001, true})...), 1, StatusOK, RuleCaughtUp},
		{"that record then waits stall_after with no commit: stalled",
			script(0, step, append(caughtUp, repeat(11, pt{1000, 1001, true})...)...), 0, StatusStalled, RuleStalled},
		{"with allowed_lag 1 it never is (a transaction marker)",
			script(0, step, append(caughtUp, repeat(60, pt{1000, 1001, true})...)...), 1, StatusOK, RuleCaughtUp},
		{"a rewind the consumer has passed is no rewind, at lag 0",
			script(1, step, pt{1000, 1000, true}, pt{2000, 2000, true}, pt{3000, 3000, true}, pt{1500, 3050, true}, pt{2500, 3080, true}, pt{3100, 3100, true}),
			0, StatusOK, RuleCaughtUp},
		{"nor with some lag",
			script(1, step, pt{1000, 1000, true}, pt{2000, 2000, true}, pt{3000, 3000, true}, pt{1500, 3050, true}, pt{2500, 3080, true}, pt{3100, 3300, true}),
			0, StatusOK, RuleConsuming},
		{"a rewind not yet made up is REWOUND",
			script(1, step, pt{1000, 1000, true}, pt{2000, 2000, true}, pt{3000, 3000, true}, pt{1500, 3050, true}, pt{2500, 3080, true}),
			0, StatusRewound, RuleRewound},
		{"a consumer stops with 2,921 records unread while the producer is idle: stopped",
			script(2, step, repeat(12, pt{1000, 3921, false})...), 1, StatusStopped, RuleStopped},
		{"a consumer that rewound and then stopped is STOPPED (Burrow checks stop first)",
			script(3, time.Minute, pt{3000, 3000, false}, pt{1500, 3100, false}, pt{1500, 3200, false}, pt{1500, 3300, false},
				pt{1500, 3400, false}, pt{1500, 3500, false}, pt{1500, 3600, false}), 1, StatusStopped, RuleStopped},
		{"lag that never falls, above the allowed lag at every sample, while commits advance: WARNING",
			script(4, step, pt{100, 200, true}, pt{150, 250, true}, pt{200, 320, true}, pt{250, 370, true}, pt{300, 420, true}),
			1, StatusWarning, RuleWarning},
		{"the same with one sample caught up in the window is no WARNING (Burrow's rule 1)",
			script(4, step, pt{200, 200, true}, pt{150, 250, true}, pt{200, 320, true}, pt{250, 370, true}, pt{300, 420, true}, pt{350, 490, true}),
			1, StatusOK, RuleConsuming},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Evaluate(c.samples, EvalOptions{StallAfter: 5 * time.Minute, AllowedLag: c.allowedLag})
			p := got.Partitions[0]
			if p.Status != c.want || p.Evidence.Rule != c.rule {
				t.Errorf("got %s %+v\nwant %s %s", p.Status, p.Evidence, c.want, c.rule)
			}
		})
	}
}
