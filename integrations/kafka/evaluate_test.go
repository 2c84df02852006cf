package kafka

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// pt is one scripted sample: committed offset, log end, whether a member
// holds the partition.
type pt struct {
	c, e  int64
	owned bool
}

// script lays samples of partition p out every step from t0.
func script(p int32, step time.Duration, pts ...pt) []PartitionSample {
	out := make([]PartitionSample, len(pts))
	for i, x := range pts {
		out[i] = PartitionSample{Partition: p, Committed: x.c, LogEnd: x.e, Owned: x.owned, UnixMilli: t0.Add(time.Duration(i) * step).UnixMilli()}
	}
	return out
}

// repeat makes n samples with the same values.
func repeat(n int, x pt) []pt {
	out := make([]pt, n)
	for i := range out {
		out[i] = x
	}
	return out
}

func TestEvaluatePartition(t *testing.T) {
	t.Parallel()
	const step = 30 * time.Second
	tests := []struct {
		name       string
		samples    []PartitionSample
		stallAfter time.Duration
		allowedLag int64
		want       Status
		rule       Rule
	}{
		{
			name: "no samples",
			want: StatusUnknown,
			rule: RuleNone,
		},
		{
			name:    "consuming and keeping up",
			samples: script(0, step, pt{100, 120, true}, pt{140, 150, true}, pt{180, 190, true}),
			want:    StatusOK,
			rule:    RuleConsuming,
		},
		{
			name:    "caught up",
			samples: script(1, step, pt{100, 120, true}, pt{190, 190, true}),
			want:    StatusOK,
			rule:    RuleCaughtUp,
		},
		{
			// 15 samples 30 s apart: caught up for 7m, then 470 records
			// arrive. The stall clock starts when lag went above the
			// allowed lag, not at the first sample of the committed offset.
			name:       "records that just arrived for a caught-up consumer are no stop",
			samples:    script(3, step, append(repeat(14, pt{1840, 1840, false}), pt{1840, 2310, false})...),
			stallAfter: 5 * time.Minute,
			want:       StatusOK,
			rule:       RuleConsuming,
		},
		{
			name: "stopped after moving: the clock starts at the last change",
			samples: script(3, time.Minute, pt{1000, 1100, true}, pt{1200, 1300, false}, pt{1840, 1900, false},
				pt{1840, 2000, false}, pt{1840, 2100, false}, pt{1840, 2200, false}, pt{1840, 2250, false},
				pt{1840, 2300, false}, pt{1840, 2310, false}, pt{1840, 2310, false}),
			stallAfter: 5 * time.Minute,
			want:       StatusStopped,
			rule:       RuleStopped,
		},
		{
			name:       "stalled: a live member holds it but commits stay",
			samples:    script(2, time.Minute, pt{500, 600, true}, pt{500, 700, true}, pt{500, 800, true}, pt{500, 900, true}, pt{500, 1000, true}, pt{500, 1100, true}),
			stallAfter: 5 * time.Minute,
			want:       StatusStalled,
			rule:       RuleStalled,
		},
		{
			name:       "not yet stalled: waiting for less than stall_after",
			samples:    script(2, time.Minute, pt{500, 600, true}, pt{500, 700, true}, pt{500, 800, true}),
			stallAfter: 5 * time.Minute,
			want:       StatusOK,
			rule:       RuleConsuming,
		},
		{
			// Formerly "quiet topic is never stopped": a consumer that
			// stops with records unread is stopped, whether or not the
			// producer still writes.
			name:       "stopped with records unread while the producer is idle",
			samples:    script(4, time.Minute, repeat(12, pt{700, 705, false})...),
			stallAfter: 5 * time.Minute,
			want:       StatusStopped,
			rule:       RuleStopped,
		},
		{
			name:       "stalled with records unread while the producer is idle",
			samples:    script(4, time.Minute, repeat(12, pt{700, 705, true})...),
			stallAfter: 5 * time.Minute,
			want:       StatusStalled,
			rule:       RuleStalled,
		},
		{
			name:       "within the allowed lag on a quiet topic is never stalled",
			samples:    script(4, time.Minute, repeat(12, pt{704, 705, true})...),
			stallAfter: 5 * time.Minute,
			allowedLag: 1,
			want:       StatusOK,
			rule:       RuleCaughtUp,
		},
		{
			name:    "quiet and caught up",
			samples: script(4, time.Minute, repeat(12, pt{705, 705, false})...),
			want:    StatusOK,
			rule:    RuleCaughtUp,
		},
		{
			name: "warning: lag grows at every sample while commits advance",
			samples: script(5, step, pt{100, 200, true}, pt{150, 300, true}, pt{200, 420, true}, pt{260, 560, true},
				pt{300, 700, true}, pt{320, 870, true}),
			want: StatusWarning,
			rule: RuleWarning,
		},
		{
			name:    "lag growing on too few samples is no trend",
			samples: script(5, step, pt{100, 200, true}, pt{150, 300, true}, pt{200, 420, true}),
			want:    StatusOK,
			rule:    RuleConsuming,
		},
		{
			name: "lag that dips once is no warning",
			samples: script(5, step, pt{100, 200, true}, pt{150, 300, true}, pt{290, 380, true}, pt{300, 500, true},
				pt{310, 700, true}, pt{320, 870, true}),
			want: StatusOK,
			rule: RuleConsuming,
		},
		{
			name:    "rewound",
			samples: script(6, step, pt{1840, 1900, true}, pt{1900, 1950, true}, pt{1200, 2000, true}, pt{1250, 2050, true}),
			want:    StatusRewound,
			rule:    RuleRewound,
		},
		{
			name:    "no commits",
			samples: script(7, step, pt{NoOffset, 2310, false}, pt{NoOffset, 2400, false}),
			want:    StatusNoCommits,
			rule:    RuleNoCommit,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := EvalOptions{StallAfter: tt.stallAfter, AllowedLag: tt.allowedLag}
			got := Evaluate(tt.samples, opts)
			if got.Status != tt.want {
				t.Errorf("status = %s, want %s (evidence %+v)", got.Status, tt.want, got.Summary)
			}
			if len(got.Partitions) == 0 {
				if got.Summary != (Summary{}) || tt.rule != RuleNone {
					t.Errorf("summary = %+v, want none (rule %s)", got.Summary, tt.rule)
				}
				return
			}
			if ev := got.Partitions[0].Evidence; ev.Rule != tt.rule || got.Summary.Worst != got.Partitions[0].Verdict() {
				t.Errorf("evidence = %+v, want rule %s with the partition's numbers (summary %+v)", ev, tt.rule, got.Summary)
			}
		})
	}
}

func TestEvaluateGroup(t *testing.T) {
	t.Parallel()
	const step = time.Minute
	var samples []PartitionSample
	// Interleave partitions round by round, the way a store returns them.
	series := [][]PartitionSample{
		script(0, step, pt{10, 10, true}, pt{20, 20, true}, pt{30, 30, true}, pt{40, 40, true}, pt{50, 50, true}, pt{60, 60, true}, pt{70, 70, true}),
		script(1, step, repeat(7, pt{104, 105, false})...), // quiet, within the allowed lag
		script(2, step, pt{5, 5, false}, pt{5, 50, false}, pt{5, 90, false}, pt{5, 130, false}, pt{5, 170, false}, pt{5, 210, false}, pt{5, 250, false}),                                        // stopped
		script(3, step, pt{5, 5, false}, pt{5, 10, false}, pt{5, 15, false}, pt{5, 20, false}, pt{5, 25, false}, pt{5, 30, false}, pt{5, 35, false}),                                            // stopped, less lag
		script(4, step, pt{NoOffset, 0, false}, pt{NoOffset, 0, false}, pt{NoOffset, 0, false}, pt{NoOffset, 0, false}, pt{NoOffset, 0, false}, pt{NoOffset, 0, false}, pt{NoOffset, 0, false}), // never committed
	}
	for i := range series[0] {
		for _, s := range series {
			samples = append(samples, s[i])
		}
	}
	got := Evaluate(samples, EvalOptions{StallAfter: 5 * time.Minute, AllowedLag: 1, Now: t0.Add(6 * time.Minute)})
	if got.Status != StatusStopped {
		t.Fatalf("status = %s, want STOPPED", got.Status)
	}
	// "2 of 5 partitions STOPPED; worst p2: lag 245 for 5m, committed unchanged at 5, log end 250 (+200 in that time),
	// no member holds it" (commands: TestLagWords).
	want := Summary{Status: StatusStopped, Judged: 5, Same: 2, Worst: PartitionVerdict{Partition: 2, Committed: 5,
		LogEnd: 250, Lag: 245, Evidence: Evidence{Rule: RuleStopped, For: 5 * time.Minute, Grew: 200}}}
	if got.Summary != want {
		t.Errorf("summary = %+v\nwant      %+v", got.Summary, want)
	}
	wantCounts := map[Status]int{StatusOK: 2, StatusStopped: 2, StatusNoCommits: 1}
	for st, n := range wantCounts {
		if got.Counts[st] != n {
			t.Errorf("counts[%s] = %d, want %d (all: %v)", st, got.Counts[st], n, got.Counts)
		}
	}
	for i, p := range got.Partitions {
		if p.Partition != int32(i) || p.Samples != 7 {
			t.Errorf("partition %d: %+v", i, p)
		}
	}

	ok := Evaluate(series[0], EvalOptions{})
	// "1 partition OK, lag 0; most behind p0: caught up at 70"
	wantOK := Summary{Status: StatusOK, Judged: 1, Same: 1, Worst: PartitionVerdict{Committed: 70, LogEnd: 70, Evidence: Evidence{Rule: RuleCaughtUp}}}
	if ok.Status != StatusOK || ok.Summary != wantOK {
		t.Errorf("all OK: %s %+v", ok.Status, ok.Summary)
	}
}

func TestEstimateAge(t *testing.T) {
	t.Parallel()
	now := t0.Add(5 * time.Minute)
	ageOf := func(s []PartitionSample) (time.Duration, bool) {
		p := Evaluate(s, EvalOptions{Now: now}).Partitions[0]
		return p.Age, p.AgeAtLeast
	}
	// Log end 100 at t0, 200 at t0+1m, 300 at t0+2m; committed 150: the
	// record at 150 was appended ~t0+30.6s (offset 150 is the 51st of the
	// 100 appended in that minute).
	age, atLeast := ageOf(script(0, time.Minute, pt{150, 100, false}, pt{150, 200, false}, pt{150, 300, false}))
	if want := now.Sub(t0.Add(30600 * time.Millisecond)); atLeast || age != want {
		t.Errorf("age = %v (at least %v), want %v", age, atLeast, want)
	}
	// Committed below every sampled log end: older than the window.
	if age, atLeast := ageOf(script(0, time.Minute, pt{50, 100, false}, pt{50, 200, false})); !atLeast || age != 5*time.Minute {
		t.Errorf("age = %v (at least %v), want ≥5m", age, atLeast)
	}
	// No lag, no age.
	if age, _ := ageOf(script(0, time.Minute, pt{200, 200, false})); age != 0 {
		t.Errorf("age = %v, want 0", age)
	}
}

// TestEvaluateOrderOfPartitions: samples interleaved round by round, or
// partition by partition, or split between a window and a latest round,
// give the same verdicts.
func TestEvaluateOrderOfPartitions(t *testing.T) {
	t.Parallel()
	a := script(0, time.Minute, pt{1, 5, false}, pt{1, 9, false}, pt{1, 20, false}, pt{1, 30, false}, pt{1, 40, false}, pt{1, 50, false})
	b := script(7, time.Minute, pt{3, 5, true}, pt{4, 9, true}, pt{6, 20, true}, pt{8, 30, true}, pt{9, 40, true}, pt{10, 50, true})
	var rounds []PartitionSample
	for i := range a {
		rounds = append(rounds, b[i], a[i])
	}
	byPartition := append(slices.Clone(a), b...)
	sparse := slices.Clone(byPartition)
	for i := range sparse {
		if sparse[i].Partition == 7 {
			sparse[i].Partition = 1 << 30
		}
	}
	want := Evaluate(byPartition, EvalOptions{})
	split := evaluate(rounds[:len(rounds)-2], rounds[len(rounds)-2:], EvalOptions{})
	for name, got := range map[string]GroupStatus{"rounds": Evaluate(rounds, EvalOptions{}), "split": split} {
		if got.Status != want.Status || got.Summary != want.Summary || len(got.Partitions) != 2 ||
			got.Partitions[0] != want.Partitions[0] || got.Partitions[1] != want.Partitions[1] {
			t.Errorf("%s: %+v\nwant %+v", name, got, want)
		}
	}
	got := Evaluate(sparse, EvalOptions{})
	if len(got.Partitions) != 2 || got.Partitions[0].Partition != 0 || got.Partitions[1].Partition != 1<<30 ||
		got.Partitions[1].Status != want.Partitions[1].Status {
		t.Errorf("sparse: %+v", got)
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	if s, ok := ParseStatus("STALLED"); !ok || s != StatusStalled || !strings.EqualFold(s.String(), "stalled") {
		t.Errorf("ParseStatus round trip failed")
	}
}
