package pipeline_test

import (
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/pipeline"
)

// TestHeldClock: the stall clock counts only the time its condition held. Each row is a
// sequence of rounds (seconds since t0: the condition held or not, and the oldest waiting
// record's timestamp when known) and how long the condition has held after the last round,
// counted from the later of its start and the reset (the newest commit).
func TestHeldClock(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	type round struct {
		at    int
		holds bool
		began int // -1: unknown
	}
	cases := []struct {
		name   string
		rounds []round
		reset  int // the newest commit, in seconds; -1 none
		want   time.Duration
	}{
		{"quiet for 600s, records since 598s: 2s, not 600s",
			[]round{{0, false, -1}, {300, false, -1}, {590, false, -1}, {600, true, 598}}, 0, 2 * time.Second},
		{"quiet, then records with unknown timestamps: from the first round that saw them",
			[]round{{0, false, -1}, {30, true, -1}, {60, true, -1}}, 0, 30 * time.Second},
		{"a record timestamp before the last clear round is not trusted",
			[]round{{0, false, -1}, {100, false, -1}, {130, true, 10}}, 0, 30 * time.Second},
		{"a newer commit resets the clock: the query progresses, slower than the topic",
			[]round{{0, true, 0}, {30, true, 0}, {60, true, 0}}, 55, 5 * time.Second},
		{"records waited, then none: the clock stops and starts again with the next wait",
			[]round{{0, true, 0}, {30, true, 0}, {60, false, -1}, {90, true, 89}}, 0, time.Second},
		{"a record stamped in the future counts from the round",
			[]round{{0, false, -1}, {10, true, 50}}, 0, 0},
		{"never held", []round{{0, false, -1}, {10, false, -1}}, 0, 0},
		{"no commit yet: from when records began", []round{{0, true, 0}, {40, true, 0}}, -1, 40 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var clock pipeline.HeldClock
			for _, r := range c.rounds {
				var began time.Time
				if r.began >= 0 {
					began = sec(r.began)
				}
				clock = clock.Observe(sec(r.at), r.holds, began)
			}
			var reset time.Time
			if c.reset >= 0 {
				reset = sec(c.reset)
			}
			last := c.rounds[len(c.rounds)-1].at
			if got := clock.For(sec(last), reset); got != c.want {
				t.Errorf("held %s, want %s (clock %+v)", got, c.want, clock)
			}
		})
	}
}
