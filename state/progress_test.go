package state_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// progressRound is a round of a pipeline that stalls at round 200 of a 30 s sampling: the
// numbers grow while the batch stays, then all clear; some rounds know nothing.
func progressRound(start time.Time, i int) state.ProgressSample {
	at := start.Add(time.Duration(i) * 30 * time.Second)
	s := state.ProgressSample{At: at, Waiting: int64(i % 7), GroupLag: int64(i % 5), Oldest: time.Duration(i%11) * time.Second,
		Batch: int64(i / 2), CommittedAt: at.Add(-time.Duration(i%2)*30*time.Second - 4*time.Second)}
	switch {
	case i%37 == 0:
		s.Waiting, s.GroupLag, s.Oldest, s.Batch, s.CommittedAt = -1, -1, -1, -1, time.Time{}
	case i >= 200 && i < 300:
		stalled := start.Add(200*30*time.Second - 4*time.Second)
		s.Waiting, s.GroupLag, s.Oldest, s.Batch, s.CommittedAt = int64(40*(i-199)), int64(39*(i-199)), at.Sub(stalled), 100, stalled
	}
	return s
}

// downsampled is what the samples must read back as: the rounds of the last hour as they were;
// before, one point a minute (at the minute's start) with the minute's highest numbers and its
// newest batch and commit; nothing older than the window.
func downsampled(rounds []state.ProgressSample, window time.Duration) []state.ProgressSample {
	last := rounds[len(rounds)-1].At
	var out []state.ProgressSample
	for _, r := range rounds {
		if r.At.After(last.Add(-state.FullResolution)) {
			out = append(out, r)
			continue
		}
		m := r.At.Truncate(time.Minute)
		if !m.After(last.Add(-window)) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].At.Equal(m) {
			p := &out[n-1]
			p.Waiting, p.GroupLag, p.Oldest, p.Batch = max(p.Waiting, r.Waiting), max(p.GroupLag, r.GroupLag), max(p.Oldest, r.Oldest), max(p.Batch, r.Batch)
			if r.CommittedAt.After(p.CommittedAt) {
				p.CommittedAt = r.CommittedAt
			}
			continue
		}
		r.At = m
		out = append(out, r)
	}
	return out
}

// TestProgressDownsampling: after 5 hours of 30 s rounds with a 3 h window, the samples read
// back point by point as the last hour's rounds and one point a minute before, back to the
// window; unknown numbers stay unknown.
func TestProgressDownsampling(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	p := state.NewProgress(s, 3*time.Hour)
	start := time.Date(2026, 12, 5, 9, 0, 10, 0, time.UTC)
	var rounds []state.ProgressSample
	for i := range 600 {
		r := progressRound(start, i)
		rounds = append(rounds, r)
		if err := p.Record(ctx, map[string]state.ProgressSample{"sms-replies": r, "other": {At: r.At, Waiting: 1, GroupLag: -1, Oldest: -1, Batch: -1}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.Samples(ctx, "sms-replies", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := downsampled(rounds, 3*time.Hour)
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d (120 rounds of the last hour, 120 minutes before)", len(got), len(want))
	}
	if len(want) != 120+120 {
		t.Fatalf("the reference gives %d points", len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sample %d:\ngot  %+v\nwant %+v", i, got[i], want[i])
		}
	}
	since := rounds[len(rounds)-1].At.Add(-10 * time.Minute)
	if recent, _ := p.Samples(ctx, "sms-replies", since); len(recent) != 21 || recent[0].At.Before(since) {
		t.Errorf("the last 10 minutes: %d samples from %v, want 21 from %v", len(recent), recent[0].At, since)
	}
}

// TestProgressLateRound: a round that finishes after a later one (two replicas' rounds
// overlapping) is dropped; the samples stay in time order.
func TestProgressLateRound(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	p := state.NewProgress(s, time.Hour)
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{0, 60 * time.Second, 30 * time.Second} {
		if err := p.Record(ctx, map[string]state.ProgressSample{"p": {At: at.Add(d), Waiting: int64(d / time.Second), GroupLag: -1, Oldest: -1, Batch: -1}}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := p.Samples(ctx, "p", time.Time{})
	if len(got) != 2 || got[0].Waiting != 0 || got[1].Waiting != 60 {
		t.Errorf("samples %+v, want the rounds at 0 s and 60 s", got)
	}
}

// TestProgressProbes: probe results are kept for the window, oldest first.
func TestProgressProbes(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	p := state.NewProgress(s, time.Hour)
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	for i := range 30 {
		if err := p.RecordProbe(ctx, "p", state.ProbeMark{At: at.Add(time.Duration(i) * 5 * time.Minute), OK: i%3 != 0}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.Probes(ctx, "p", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	last := at.Add(29 * 5 * time.Minute)
	if len(got) != 13 || !got[0].At.Equal(last.Add(-time.Hour)) || !got[12].At.Equal(last) || got[12].OK != (29%3 != 0) {
		t.Errorf("probes %+v, want the 13 of the last hour", got)
	}
}

// The memory bound the README and docs/config.md state: the samples of a pipeline sampled
// every 30 s, kept for 6 h (420 points of about 50 bytes), take at most this many bytes of
// Redis memory.
const progressBytesPerPipeline = 24 << 10

// TestProgressMemory: 200 pipelines' 6 hours of 30 s rounds (with numbers as large as a
// busy pipeline's) stay within progressBytesPerPipeline each on a redis-server of their own,
// measured as used_memory's growth and as MEMORY USAGE of the keys.
func TestProgressMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 144,000 samples")
	}
	ctx := context.Background()
	srv, err := testredis.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	opt, _ := redis.ParseURL(srv.URL)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	p := state.NewProgress(state.New(rdb, "streamwatch"), 6*time.Hour)
	before := usedMemory(t, rdb)
	start := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	const pipelines, rounds = 200, 6 * 120
	for i := range rounds {
		at := start.Add(time.Duration(i) * 30 * time.Second)
		round := map[string]state.ProgressSample{}
		for n := range pipelines {
			round[fmt.Sprintf("pipeline-%03d", n)] = state.ProgressSample{At: at, Waiting: 1_250_000 + int64(i*n), GroupLag: 1_180_000 + int64(i*n),
				Oldest: time.Duration(3000+i) * time.Second, Batch: 250_000 + int64(i), CommittedAt: at.Add(-37 * time.Second)}
		}
		if err := p.Record(ctx, round); err != nil {
			t.Fatal(err)
		}
	}
	grew := usedMemory(t, rdb) - before
	var keys int64
	for _, k := range rdb.Keys(ctx, "*").Val() {
		keys += rdb.MemoryUsage(ctx, k, 0).Val()
	}
	samples, _ := p.Samples(ctx, "pipeline-007", time.Time{})
	t.Logf("200 pipelines, 6 h of 30 s rounds: used_memory grew %d bytes (%d a pipeline); MEMORY USAGE of the keys %d (%d a pipeline); %d points a pipeline",
		grew, grew/pipelines, keys, keys/pipelines, len(samples))
	if len(samples) != 120+300 {
		t.Errorf("%d points kept, want 120 rounds and 300 minutes", len(samples))
	}
	if grew > pipelines*progressBytesPerPipeline || keys > pipelines*progressBytesPerPipeline {
		t.Errorf("200 pipelines take %d bytes (used_memory) and %d (MEMORY USAGE): over the bound of %d a pipeline", grew, keys, progressBytesPerPipeline)
	}
}

func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}

// BenchmarkProgressRecord200 is what charts add to a sampling round of 200 pipelines: one
// script run storing each pipeline's sample, in steady state (an hour and more of rounds kept,
// so every round folds the oldest into its minute).
func BenchmarkProgressRecord200(b *testing.B) {
	ctx := context.Background()
	rdb, prefix := testredis.Client(b)
	p := state.NewProgress(state.New(rdb, prefix), 6*time.Hour)
	start := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	round := func(i int) map[string]state.ProgressSample {
		at := start.Add(time.Duration(i) * 30 * time.Second)
		out := map[string]state.ProgressSample{}
		for n := range 200 {
			out[fmt.Sprintf("pipeline-%03d", n)] = state.ProgressSample{At: at, Waiting: 1_250_000 + int64(i), GroupLag: 1_180_000,
				Oldest: 3000 * time.Second, Batch: 250_000 + int64(i), CommittedAt: at.Add(-37 * time.Second)}
		}
		return out
	}
	for i := range 150 { // past the hour: folding happens from now on
		if err := p.Record(ctx, round(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Record(ctx, round(150+i)); err != nil {
			b.Fatal(err)
		}
	}
}
