package state_test

import (
	"context"
	"slices"
	"testing"

	"github.com/streamwatch/streamwatch/state"
)

// TestLagSamplesRoundTrip: what the sampler appends comes back from ReadLag unchanged, rounds
// oldest first, committed offsets that are negative (no commit, unknown) included; only the
// newest rounds are kept.
func TestLagSamplesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	key := state.LagSeries{Cluster: "main", Group: "sms-replies-prod", Topic: "client.replies.sms"}
	const keep = 60
	var want []state.LagSample
	var wantRounds []int
	for r := range keep + 3 {
		at := int64(1_796_000_000_000 + r*30_000)
		round := []state.LagSample{
			{Partition: 0, Owned: true, Committed: int64(10 * r), LogEnd: int64(10*r + 5), UnixMilli: at},
			{Partition: 1, Owned: false, Committed: -1, LogEnd: 7, UnixMilli: at + 3},
			{Partition: 70000, Owned: true, Committed: -2, LogEnd: -2, UnixMilli: at + 1},
		}
		if err := s.AppendLag(ctx, key, round, keep); err != nil {
			t.Fatal(err)
		}
		if r >= 3 {
			want = append(want, round...)
			wantRounds = append(wantRounds, r-3, r-3, r-3)
		}
	}
	var got []state.LagSample
	var gotRounds []int
	n, err := s.ReadLag(ctx, key, func(r int, x state.LagSample) {
		got = append(got, x)
		gotRounds = append(gotRounds, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != keep || !slices.Equal(got, want) || !slices.Equal(gotRounds, wantRounds) {
		t.Fatalf("read %d rounds, %d samples, want the newest %d rounds (%d samples):\ngot  %+v\nwant %+v", n, len(got), keep, len(want), got[:3], want[:3])
	}
}
