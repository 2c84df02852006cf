package commands

import (
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
)

// The evaluator's scripted cases (integrations/kafka asserts their rule codes): pt is one
// sample, committed offset, log end, whether a member holds the partition; script lays them
// out every step from t0.
var wordsT0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

type pt struct {
	c, e  int64
	owned bool
}

func script(p int32, step time.Duration, pts ...pt) []kafka.PartitionSample {
	out := make([]kafka.PartitionSample, len(pts))
	for i, x := range pts {
		out[i] = kafka.PartitionSample{Partition: p, Committed: x.c, LogEnd: x.e, Owned: x.owned, UnixMilli: wordsT0.Add(time.Duration(i) * step).UnixMilli()}
	}
	return out
}

func repeat(n int, x pt) []pt {
	out := make([]pt, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// TestLagWordsEvaluated: each rule the evaluator applies is worded as the lag reply,
// detection and diagnoses have always shown it, numbers included.
func TestLagWordsEvaluated(t *testing.T) {
	t.Parallel()
	const step = 30 * time.Second
	tests := []struct {
		name       string
		samples    []kafka.PartitionSample
		stallAfter time.Duration
		allowedLag int64
		want       kafka.Status
		evidence   string
	}{
		{
			name:     "no samples",
			want:     kafka.StatusUnknown,
			evidence: "no samples",
		},
		{
			name:     "consuming and keeping up",
			samples:  script(0, step, pt{100, 120, true}, pt{140, 150, true}, pt{180, 190, true}),
			want:     kafka.StatusOK,
			evidence: "p0: committed 180 (+80 in 1m), lag 10",
		},
		{
			name:     "caught up",
			samples:  script(1, step, pt{100, 120, true}, pt{190, 190, true}),
			want:     kafka.StatusOK,
			evidence: "p1: caught up at 190",
		},
		{
			// 15 samples 30 s apart: caught up for 7m, then 470 records
			// arrive. The stall clock starts when lag went above the
			// allowed lag, not at the first sample of the committed offset.
			name:       "records that just arrived for a caught-up consumer are no stop",
			samples:    script(3, step, append(repeat(14, pt{1840, 1840, false}), pt{1840, 2310, false})...),
			stallAfter: 5 * time.Minute,
			want:       kafka.StatusOK,
			evidence:   "p3: committed 1840, lag 470",
		},
		{
			name: "stopped after moving: the clock starts at the last change",
			samples: script(3, time.Minute, pt{1000, 1100, true}, pt{1200, 1300, false}, pt{1840, 1900, false},
				pt{1840, 2000, false}, pt{1840, 2100, false}, pt{1840, 2200, false}, pt{1840, 2250, false},
				pt{1840, 2300, false}, pt{1840, 2310, false}, pt{1840, 2310, false}),
			stallAfter: 5 * time.Minute,
			want:       kafka.StatusStopped,
			evidence:   "p3: lag 470 for 7m, committed unchanged at 1840, log end 2310 (+410 in that time), no member holds it",
		},
		{
			name:       "stalled: a live member holds it but commits stay",
			samples:    script(2, time.Minute, pt{500, 600, true}, pt{500, 700, true}, pt{500, 800, true}, pt{500, 900, true}, pt{500, 1000, true}, pt{500, 1100, true}),
			stallAfter: 5 * time.Minute,
			want:       kafka.StatusStalled,
			evidence:   "p2: lag 600 for ≥5m, committed unchanged at 500, log end 1100 (+500 in that time), held by a live member",
		},
		{
			name:       "not yet stalled: waiting for less than stall_after",
			samples:    script(2, time.Minute, pt{500, 600, true}, pt{500, 700, true}, pt{500, 800, true}),
			stallAfter: 5 * time.Minute,
			want:       kafka.StatusOK,
			evidence:   "p2: committed 500, lag 300",
		},
		{
			// Formerly "quiet topic is never stopped": a consumer that
			// stops with records unread is stopped, whether or not the
			// producer still writes.
			name:       "stopped with records unread while the producer is idle",
			samples:    script(4, time.Minute, repeat(12, pt{700, 705, false})...),
			stallAfter: 5 * time.Minute,
			want:       kafka.StatusStopped,
			evidence:   "p4: lag 5 for ≥11m, committed unchanged at 700, log end 705 (no new records in that time), no member holds it",
		},
		{
			name:       "stalled with records unread while the producer is idle",
			samples:    script(4, time.Minute, repeat(12, pt{700, 705, true})...),
			stallAfter: 5 * time.Minute,
			want:       kafka.StatusStalled,
			evidence:   "p4: lag 5 for ≥11m, committed unchanged at 700, log end 705 (no new records in that time), held by a live member",
		},
		{
			name:       "within the allowed lag on a quiet topic is never stalled",
			samples:    script(4, time.Minute, repeat(12, pt{704, 705, true})...),
			stallAfter: 5 * time.Minute,
			allowedLag: 1,
			want:       kafka.StatusOK,
			evidence:   "p4: caught up at 704 (lag 1 ≤ allowed_lag 1)",
		},
		{
			name:     "quiet and caught up",
			samples:  script(4, time.Minute, repeat(12, pt{705, 705, false})...),
			want:     kafka.StatusOK,
			evidence: "p4: caught up at 705",
		},
		{
			name: "warning: lag grows at every sample while commits advance",
			samples: script(5, step, pt{100, 200, true}, pt{150, 300, true}, pt{200, 420, true}, pt{260, 560, true},
				pt{300, 700, true}, pt{320, 870, true}),
			want:     kafka.StatusWarning,
			evidence: "p5: lag never fell over 6 samples, from 100 to 550 over 2m30s, while committed advanced 100 → 320",
		},
		{
			name:     "lag growing on too few samples is no trend",
			samples:  script(5, step, pt{100, 200, true}, pt{150, 300, true}, pt{200, 420, true}),
			want:     kafka.StatusOK,
			evidence: "p5: committed 200 (+100 in 1m), lag 220",
		},
		{
			name: "lag that dips once is no warning",
			samples: script(5, step, pt{100, 200, true}, pt{150, 300, true}, pt{290, 380, true}, pt{300, 500, true},
				pt{310, 700, true}, pt{320, 870, true}),
			want:     kafka.StatusOK,
			evidence: "p5: committed 320 (+220 in 2m30s), lag 550",
		},
		{
			name:     "rewound",
			samples:  script(6, step, pt{1840, 1900, true}, pt{1900, 1950, true}, pt{1200, 2000, true}, pt{1250, 2050, true}),
			want:     kafka.StatusRewound,
			evidence: "p6: committed went back from 1900 to 1200 30s ago; now 1250, 650 short of its previous high",
		},
		{
			name:     "no commits",
			samples:  script(7, step, pt{kafka.NoOffset, 2310, false}, pt{kafka.NoOffset, 2400, false}),
			want:     kafka.StatusNoCommits,
			evidence: "p7: no committed offset, log end 2400",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kafka.Evaluate(tt.samples, kafka.EvalOptions{StallAfter: tt.stallAfter, AllowedLag: tt.allowedLag})
			if got.Status != tt.want {
				t.Errorf("status = %s, want %s", got.Status, tt.want)
			}
			if len(got.Partitions) == 0 {
				if w := lagSummaryLine(got.Summary); w != tt.evidence {
					t.Errorf("words = %q, want %q", w, tt.evidence)
				}
				return
			}
			if w := partitionEvidence(got.Partitions[0].Verdict()); w != tt.evidence {
				t.Errorf("words = %q\nwant      %q", w, tt.evidence)
			}
		})
	}
}

// TestLagWordsIssueSequences: the sequences issue 13 found wrong, worded.
func TestLagWordsIssueSequences(t *testing.T) {
	t.Parallel()
	const step = 30 * time.Second
	caughtUp := repeat(21, pt{1000, 1000, true}) // 10m caught up on a quiet partition
	cases := []struct {
		name       string
		samples    []kafka.PartitionSample
		allowedLag int64
		want       kafka.Status
		evidence   string
	}{
		{"a caught-up consumer on a quiet partition receives one record: not stalled",
			script(0, step, append(caughtUp, pt{1000, 1001, true})...), 0, kafka.StatusOK, "p0: committed 1000, lag 1"},
		{"the same with allowed_lag 1: caught up",
			script(0, step, append(caughtUp, pt{1000, 1001, true})...), 1, kafka.StatusOK, "p0: caught up at 1000 (lag 1 ≤ allowed_lag 1)"},
		{"that record then waits stall_after with no commit: stalled",
			script(0, step, append(caughtUp, repeat(11, pt{1000, 1001, true})...)...), 0, kafka.StatusStalled,
			"p0: lag 1 for 5m, committed unchanged at 1000, log end 1001 (no new records in that time), held by a live member"},
		{"with allowed_lag 1 it never is (a transaction marker)",
			script(0, step, append(caughtUp, repeat(60, pt{1000, 1001, true})...)...), 1, kafka.StatusOK, "p0: caught up at 1000 (lag 1 ≤ allowed_lag 1)"},
		{"a rewind the consumer has passed is no rewind, at lag 0",
			script(1, step, pt{1000, 1000, true}, pt{2000, 2000, true}, pt{3000, 3000, true}, pt{1500, 3050, true}, pt{2500, 3080, true}, pt{3100, 3100, true}),
			0, kafka.StatusOK, "p1: caught up at 3100"},
		{"nor with some lag",
			script(1, step, pt{1000, 1000, true}, pt{2000, 2000, true}, pt{3000, 3000, true}, pt{1500, 3050, true}, pt{2500, 3080, true}, pt{3100, 3300, true}),
			0, kafka.StatusOK, "p1: committed 3100 (+2100 in 2m30s), lag 200"},
		{"a rewind not yet made up is REWOUND",
			script(1, step, pt{1000, 1000, true}, pt{2000, 2000, true}, pt{3000, 3000, true}, pt{1500, 3050, true}, pt{2500, 3080, true}),
			0, kafka.StatusRewound, "p1: committed went back from 3000 to 1500 30s ago; now 2500, 500 short of its previous high"},
		{"a consumer stops with 2,921 records unread while the producer is idle: stopped",
			script(2, step, repeat(12, pt{1000, 3921, false})...), 1, kafka.StatusStopped,
			"p2: lag 2921 for ≥5m30s, committed unchanged at 1000, log end 3921 (no new records in that time), no member holds it"},
		{"a consumer that rewound and then stopped is STOPPED (Burrow checks stop first)",
			script(3, time.Minute, pt{3000, 3000, false}, pt{1500, 3100, false}, pt{1500, 3200, false}, pt{1500, 3300, false},
				pt{1500, 3400, false}, pt{1500, 3500, false}, pt{1500, 3600, false}), 1, kafka.StatusStopped,
			"p3: lag 2100 for 5m, committed unchanged at 1500, log end 3600 (+500 in that time), no member holds it"},
		{"lag that never falls, above the allowed lag at every sample, while commits advance: WARNING",
			script(4, step, pt{100, 200, true}, pt{150, 250, true}, pt{200, 320, true}, pt{250, 370, true}, pt{300, 420, true}),
			1, kafka.StatusWarning, "p4: lag never fell over 5 samples, from 100 to 120 over 2m, while committed advanced 100 → 300"},
		{"the same with one sample caught up in the window is no WARNING (Burrow's rule 1)",
			script(4, step, pt{200, 200, true}, pt{150, 250, true}, pt{200, 320, true}, pt{250, 370, true}, pt{300, 420, true}, pt{350, 490, true}),
			1, kafka.StatusOK, "p4: committed 350 (+150 in 2m30s), lag 140"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := kafka.Evaluate(c.samples, kafka.EvalOptions{StallAfter: 5 * time.Minute, AllowedLag: c.allowedLag})
			p := got.Partitions[0]
			if w := partitionEvidence(p.Verdict()); p.Status != c.want || w != c.evidence {
				t.Errorf("got %s %q\nwant %s %q", p.Status, w, c.want, c.evidence)
			}
		})
	}
}

// TestLagWords: every rule code and every summary form, worded as the evaluator used to word
// them itself.
func TestLagWords(t *testing.T) {
	t.Parallel()
	stopped := kafka.PartitionVerdict{Partition: 2, Committed: 5, LogEnd: 250, Lag: 245, Evidence: kafka.Evidence{Rule: kafka.RuleStopped, For: 5 * time.Minute, Grew: 200}}
	caught := kafka.PartitionVerdict{Committed: 70, LogEnd: 70, Evidence: kafka.Evidence{Rule: kafka.RuleCaughtUp}}
	onTopic := stopped
	onTopic.Topic = "payments"
	for _, c := range []struct {
		sum  kafka.Summary
		want string
	}{
		{kafka.Summary{}, "no samples"},
		{kafka.Summary{Unknown: 3}, "nothing known about 3 partitions"},
		{kafka.Summary{Status: kafka.StatusOK, Judged: 1, Same: 1, Worst: caught}, "1 partition OK, lag 0; most behind p0: caught up at 70"},
		{kafka.Summary{Status: kafka.StatusOK, Judged: 12, Same: 12, Lag: 12345, Worst: kafka.PartitionVerdict{Partition: 7, Committed: 500, Lag: 300, Evidence: kafka.Evidence{Rule: kafka.RuleConsuming, From: 500}}}, "12 partitions OK, lag 12,345; most behind p7: committed 500, lag 300"},
		{kafka.Summary{Status: kafka.StatusStopped, Judged: 5, Same: 2, Worst: stopped},
			"2 of 5 partitions STOPPED; worst p2: lag 245 for 5m, committed unchanged at 5, log end 250 (+200 in that time), no member holds it"},
		{kafka.Summary{Status: kafka.StatusStopped, Judged: 2, Same: 2, Unknown: 1, Worst: onTopic},
			"all 2 partitions STOPPED; worst payments p2: lag 245 for 5m, committed unchanged at 5, log end 250 (+200 in that time), " +
				"no member holds it; 1 partition unknown"},
		{kafka.Summary{Status: kafka.StatusNoCommits, Judged: 1, Same: 1, Unknown: 2, Worst: kafka.PartitionVerdict{Partition: 4, Committed: kafka.NoOffset, LogEnd: 9, Lag: -1, Evidence: kafka.Evidence{Rule: kafka.RuleNoCommit}}}, "all 1 partition NO_COMMITS; worst p4: no committed offset, log end 9; 2 partitions unknown"},
	} {
		if got := lagSummaryLine(c.sum); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.sum, got, c.want)
		}
	}
	for _, c := range []struct {
		ev   kafka.PartitionVerdict
		want string
	}{
		{kafka.PartitionVerdict{Partition: 3, Evidence: kafka.Evidence{Rule: kafka.RuleUnknownLogEnd}}, "p3: log end unknown"},
		{kafka.PartitionVerdict{Partition: 3, Evidence: kafka.Evidence{Rule: kafka.RuleUnknownCommit}}, "p3: commit unknown"},
		{kafka.PartitionVerdict{Partition: 3, Evidence: kafka.Evidence{Rule: kafka.RuleUnknownBoth}}, "p3: log end and commit unknown"},
		{kafka.PartitionVerdict{Partition: 3, Committed: 120, LogEnd: 121, Lag: 1, Evidence: kafka.Evidence{Rule: kafka.RuleCaughtUp, Allowed: 1}}, "p3: caught up at 120 (lag 1 ≤ allowed_lag 1)"},
		{kafka.PartitionVerdict{Partition: 1, Committed: 100, LogEnd: 140, Lag: 40, Evidence: kafka.Evidence{Rule: kafka.RuleStalled, For: 6 * time.Minute, AtLeast: true}},
			"p1: lag 40 for ≥6m, committed unchanged at 100, log end 140 (no new records in that time), held by a live member"},
		{kafka.PartitionVerdict{Partition: 6, Committed: 1200, Evidence: kafka.Evidence{Rule: kafka.RuleRewound, From: 1900, To: 1200, For: 30 * time.Second}},
			"p6: committed went back from 1900 to 1200 30s ago, 700 short of its previous high"},
		{kafka.PartitionVerdict{Partition: 0, Committed: 180, LogEnd: 190, Lag: 10, Evidence: kafka.Evidence{Rule: kafka.RuleConsuming, From: kafka.NoOffset, For: time.Minute}},
			"p0: committed 180, lag 10"},
	} {
		if got := partitionEvidence(c.ev); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.ev, got, c.want)
		}
	}
}
