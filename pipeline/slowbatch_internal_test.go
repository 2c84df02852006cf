package pipeline

import (
	"slices"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/state"
)

func TestUsualDuration(t *testing.T) {
	h := func(tooks ...float64) []state.Commit {
		var out []state.Commit
		for i, s := range tooks {
			out = append(out, state.Commit{Batch: int64(i), Took: time.Duration(s * float64(time.Second))})
		}
		return out
	}
	many := make([]float64, 0, 40)
	for range 30 {
		many = append(many, 60) // a day ago batches took a minute
	}
	for range 20 {
		many = append(many, 2) // the newest twenty take 2s
	}
	for _, tc := range []struct {
		name string
		h    []state.Commit
		want time.Duration
	}{
		{"none", nil, 0},
		{"too few durations", h(1, 0, 0, 1), 0},
		{"the median ignores a slow batch", h(1, 1, 30, 1, 1.2), time.Second},
		{"unknown durations are skipped", h(0, 2, 0, 2, 0, 2), 2 * time.Second},
		{"only the newest twenty", h(many...), 2 * time.Second},
		{"sub-second batches", h(0.2, 0.25, 0.3), 250 * time.Millisecond},
	} {
		if got := UsualDuration(tc.h); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct{ usual, want time.Duration }{
		{0, 0},
		{250 * time.Millisecond, 20 * time.Second}, // the floor
		{10 * time.Second, 50 * time.Second},
		{3 * time.Minute, 15 * time.Minute},
	} {
		if got := SlowAfter(tc.usual); got != tc.want {
			t.Errorf("SlowAfter(%v) = %v, want %v", tc.usual, got, tc.want)
		}
	}
}

// TestBatchSlow: round after round, what the batch in flight says: its clock counts only while
// that batch is in flight (from its offsets file's time, never before the last round that saw
// no batch or another one), a quiet topic's query (no batch in flight) never holds, and nothing
// is judged without a learned duration or stale_after: auto.
func TestBatchSlow(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	sec := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	auto := &config.Pipeline{Name: "p", Checkpoint: config.Checkpoint{StaleAfter: 10 * time.Minute, StaleAuto: true}}
	fixed := &config.Pipeline{Name: "p", Checkpoint: config.Checkpoint{StaleAfter: 10 * time.Minute}}
	type round struct {
		at      int   // seconds after t0
		running int64 // -1: none in flight
		planned int   // its offsets file's time, seconds after t0
		// want: whether batch_slow holds ("" not judged, "yes", "no") and how long the batch ran
		holds string
		ran   time.Duration
	}
	for _, tc := range []struct {
		name   string
		p      *config.Pipeline
		usual  time.Duration
		rounds []round
	}{
		{"a batch stalls past 5 × its usual 2s, at least 20s", auto, 2 * time.Second, []round{
			{0, -1, 0, "no", 0},
			{10, 7, 9, "no", time.Second},
			{20, 7, 9, "no", 11 * time.Second},
			{30, 7, 9, "yes", 21 * time.Second},
			{40, 7, 9, "yes", 31 * time.Second},
		}},
		{"a quiet topic: no batch is ever planned", auto, 2 * time.Second, []round{
			{0, -1, 0, "no", 0}, {600, -1, 0, "no", 0}, {3600, -1, 0, "no", 0},
		}},
		{"a busy query: each batch is new, none runs long", auto, 2 * time.Second, []round{
			{0, 4, -1, "no", time.Second}, {30, 9, 29, "no", time.Second}, {60, 14, 59, "no", time.Second},
		}},
		{"a batch stamped before the last round that saw none counts from that round", auto, 2 * time.Second, []round{
			{0, -1, 0, "no", 0},
			{10, 5, -100, "no", 10 * time.Second},
			{25, 5, -100, "yes", 25 * time.Second},
		}},
		{"another batch in flight starts afresh", auto, 2 * time.Second, []round{
			{0, 5, -15, "no", 15 * time.Second},
			{10, 6, 9, "no", time.Second},
			{40, 6, 9, "yes", 31 * time.Second},
			{50, -1, 0, "no", 0},
		}},
		{"the first round believes the offsets file", auto, 10 * time.Second, []round{
			{0, 3, -60, "yes", time.Minute},
		}},
		{"a 15-minute trigger's long batches: usual 4m", auto, 4 * time.Minute, []round{
			{0, 2, -1, "no", time.Second}, {600, 2, -1, "no", 601 * time.Second}, {1300, 2, -1, "yes", 1301 * time.Second},
		}},
		{"no duration learned yet", auto, 0, []round{{0, 3, -60, "", time.Minute}}},
		{"a fixed stale_after", fixed, 2 * time.Second, []round{{0, 3, -60, "", 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clock BatchClock
			for i, r := range tc.rounds {
				b := &spark.Batches{Batch: 1, Running: r.running}
				if r.running >= 0 {
					b.RunningSince = sec(r.planned)
				}
				x := &detected{p: tc.p, batches: b, usual: tc.usual}
				obs := Observation{At: sec(r.at), CheckpointKnown: true, Holds: map[Signal]bool{}}
				clock = batchSlow(x, &obs, clock)
				holds, known := obs.Holds[SignalSlow]
				got := ""
				if known {
					got = map[bool]string{true: "yes", false: "no"}[holds]
				}
				if got != r.holds || obs.RunningFor != r.ran {
					t.Errorf("round %d (%ds): holds %q, ran %v; want %q, %v", i, r.at, got, obs.RunningFor, r.holds, r.ran)
				}
			}
		})
	}
}

// TestBatchSlowEvidence: the root says which batch, how long it ran, the usual duration and
// the threshold, and the symptom opens only after two rounds.
func TestBatchSlowEvidence(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	p := &config.Pipeline{Name: "sms-replies", Checkpoint: config.Checkpoint{StaleAfter: 10 * time.Minute, StaleAuto: true}}
	var st DetectState
	var changes []Change
	var obs Observation
	for _, at := range []int{0, 25, 30} {
		x := &detected{p: p, usual: 1500 * time.Millisecond,
			batches: &spark.Batches{Batch: 41, Running: 42, RunningSince: t0.Add(-time.Second)}}
		obs = Observation{At: t0.Add(time.Duration(at) * time.Second), CheckpointKnown: true, Batch: 41, CommitAge: time.Second, Waiting: -1, Holds: map[Signal]bool{}}
		x.running = batchSlow(x, &obs, st.Running)
		var change Change
		st, change, _ = Step(st, obs)
		st.Running = x.running
		changes = append(changes, change)
	}
	if want := []Change{Unchanged, Unchanged, Began}; changes[0] != want[0] || changes[1] != want[1] || changes[2] != want[2] {
		t.Fatalf("changes %v, want %v", changes, want)
	}
	// The words are commands' (TestDetectMessage); here the values they are made of.
	if !slices.Equal(st.Active(), []Signal{SignalSlow}) || obs.Running != 42 || obs.RunningFor != 31*time.Second ||
		obs.UsualDuration != 1500*time.Millisecond || obs.SlowAfter != 20*time.Second {
		t.Errorf("active %v, batch %d ran %v, usual %v, slow after %v; want [%s], 42, 31s, 1.5s, 20s",
			st.Active(), obs.Running, obs.RunningFor, obs.UsualDuration, obs.SlowAfter, SignalSlow)
	}
	if at := faultAt(st.Active(), obs); !at.Equal(t0.Add(-time.Second)) {
		t.Errorf("fault at %v, want the batch's planning", at)
	}
}
