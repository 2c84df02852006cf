package pipeline

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// TestClock: a clock counts only the rounds its condition held: it starts at the first round
// that saw it (or earlier, from the condition's own evidence, never before the last clear
// round), stops at a clear round, and ignores rounds that could not tell.
func TestClock(t *testing.T) {
	type round struct {
		at           time.Duration
		known, holds bool
		began        time.Time
		wantSince    time.Time // zero: not holding
		wantHeld     time.Duration
	}
	unknown := func(d time.Duration, since time.Time, held time.Duration) round {
		return round{at: d, wantSince: since, wantHeld: held}
	}
	tests := []struct {
		name   string
		rounds []round
	}{
		{"counts from the first round that saw it hold", []round{
			{at: 0, known: true, holds: false},
			{at: time.Minute, known: true, holds: true, wantSince: at(time.Minute)},
			{at: 2 * time.Minute, known: true, holds: true, wantSince: at(time.Minute), wantHeld: time.Minute},
		}},
		{"a clear round stops and resets it", []round{
			{at: 0, known: true, holds: true, wantSince: at(0)},
			{at: time.Minute, known: true, holds: false},
			{at: 2 * time.Minute, known: true, holds: true, wantSince: at(2 * time.Minute)},
			{at: 3 * time.Minute, known: true, holds: true, wantSince: at(2 * time.Minute), wantHeld: time.Minute},
		}},
		{"a round that cannot tell changes nothing", []round{
			{at: 0, known: true, holds: true, wantSince: at(0)},
			unknown(time.Minute, at(0), time.Minute),
			{at: 2 * time.Minute, known: true, holds: true, wantSince: at(0), wantHeld: 2 * time.Minute},
		}},
		{"the condition's own evidence moves the start earlier", []round{
			{at: 0, known: true, holds: false},
			{at: time.Minute, known: true, holds: true, began: at(30 * time.Second), wantSince: at(30 * time.Second), wantHeld: 30 * time.Second},
		}},
		{"but never before the last round that saw it clear", []round{
			{at: 0, known: true, holds: false},
			{at: time.Minute, known: true, holds: true, began: at(-time.Hour), wantSince: at(0), wantHeld: time.Minute},
		}},
		{"nor after the round, nor later once started", []round{
			{at: 0, known: true, holds: true, began: at(time.Hour), wantSince: at(0)},
			{at: time.Minute, known: true, holds: true, began: at(30 * time.Second), wantSince: at(0), wantHeld: time.Minute},
		}},
		{"evidence known only later still counts", []round{
			{at: 0, known: true, holds: true, wantSince: at(0)},
			{at: time.Minute, known: true, holds: true, began: at(-10 * time.Second), wantSince: at(-10 * time.Second), wantHeld: 70 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Clock
			for i, r := range tt.rounds {
				c = c.Observe(at(r.at), r.known, r.holds, r.began)
				if !c.Since.Equal(r.wantSince) || c.Held(at(r.at)) != r.wantHeld || c.Holding() != !r.wantSince.IsZero() {
					t.Fatalf("round %d: since %v, held %v; want %v, %v", i+1, c.Since, c.Held(at(r.at)), r.wantSince, r.wantHeld)
				}
			}
		})
	}
}

// TestAssessStaleAndLag: checkpoint_stale counts how long records have waited with no
// checkpoint commit, and the lag the oldest waiting record's age, both by the clock of the
// waiting records: the quiet time before they arrived never counts.
func TestAssessStaleAndLag(t *testing.T) {
	const staleAfter, maxLag = 3 * time.Minute, 15 * time.Minute
	type round struct {
		at       time.Duration
		read     reading
		stale    any // true, false or nil (not judged)
		lag      any
		staleFor time.Duration
		oldest   time.Duration // when the lag is judged
	}
	committed := at(-10 * time.Minute) // the query's last commit: ten quiet minutes ago
	caughtUp := reading{known: true, committedAt: committed, timesKnown: true}
	waiting := func(since time.Time) reading {
		return reading{known: true, waits: true, oldest: since, oldestAt: "sms/0", timesKnown: !since.IsZero(), committedAt: committed}
	}
	tests := []struct {
		name   string
		rounds []round
	}{
		{"a quiet topic's burst the query commits in time: never stale", []round{
			{at: 0, read: caughtUp, stale: false, lag: false},
			{at: 30 * time.Second, read: waiting(at(29 * time.Second)), stale: false, lag: false, staleFor: time.Second, oldest: time.Second},
			{at: 60 * time.Second, read: waiting(at(29 * time.Second)), stale: false, lag: false, staleFor: 31 * time.Second, oldest: 31 * time.Second},
			{at: 90 * time.Second, read: func() reading { r := caughtUp; r.committedAt = at(80 * time.Second); return r }(), stale: false, lag: false},
		}},
		{"the same burst with the query stopped: stale once the records waited stale_after", []round{
			{at: 0, read: caughtUp, stale: false, lag: false},
			{at: 30 * time.Second, read: waiting(at(29 * time.Second)), stale: false, lag: false, staleFor: time.Second, oldest: time.Second},
			{at: 3*time.Minute + 29*time.Second, read: waiting(at(29 * time.Second)), stale: true, lag: false, staleFor: 3 * time.Minute, oldest: 3 * time.Minute},
		}},
		{"record times unknown: counted from the first round that saw records wait", []round{
			{at: 0, read: caughtUp, stale: false, lag: false},
			{at: 30 * time.Second, read: waiting(time.Time{}), stale: false, lag: nil, staleFor: 0},
			{at: 3*time.Minute + 30*time.Second, read: waiting(time.Time{}), stale: true, lag: nil, staleFor: 3 * time.Minute},
		}},
		{"a record stamped before it was written (a backfill) counts from the last caught-up round", []round{
			{at: 0, read: caughtUp, stale: false, lag: false},
			{at: 30 * time.Second, read: waiting(at(-24 * time.Hour)), stale: false, lag: false, staleFor: 30 * time.Second, oldest: 30 * time.Second},
		}},
		{"a stuck query while records keep arriving: stale from the first record after the last commit", []round{
			{at: 0, read: waiting(committed.Add(time.Second)), stale: true, lag: false, staleFor: 10*time.Minute - time.Second, oldest: 10*time.Minute - time.Second},
			{at: 6 * time.Minute, read: waiting(committed.Add(time.Second)), stale: true, lag: true, staleFor: 16*time.Minute - time.Second, oldest: 16*time.Minute - time.Second},
		}},
		{"a commit while records wait restarts the count", []round{
			{at: 0, read: waiting(at(-5 * time.Minute)), stale: true, lag: false, staleFor: 5 * time.Minute, oldest: 5 * time.Minute},
			{at: time.Minute, read: func() reading { r := waiting(at(-5 * time.Minute)); r.committedAt = at(50 * time.Second); return r }(),
				stale: false, lag: false, staleFor: 10 * time.Second, oldest: 6 * time.Minute},
		}},
		{"a round that could not read the checkpoint judges nothing and keeps the clock", []round{
			{at: 0, read: caughtUp, stale: false, lag: false},
			{at: 30 * time.Second, read: waiting(time.Time{}), stale: false, lag: nil},
			{at: 2 * time.Minute, read: reading{}, stale: nil, lag: nil},
			{at: 3*time.Minute + 30*time.Second, read: waiting(time.Time{}), stale: true, lag: nil, staleFor: 3 * time.Minute},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Clock
			for i, r := range tt.rounds {
				obs := Observation{At: at(r.at), Holds: map[Signal]bool{}, StaleAfter: staleAfter, MaxLag: maxLag}
				c = assess(c, &obs, r.read)
				for sig, want := range map[Signal]any{SignalStale: r.stale, SignalLag: r.lag} {
					got, judged := obs.Holds[sig]
					if want == nil && judged || want != nil && (!judged || got != want.(bool)) {
						t.Fatalf("round %d: %s = %v (judged %v), want %v", i+1, sig, got, judged, want)
					}
				}
				if r.read.waits && obs.StaleFor != r.staleFor {
					t.Errorf("round %d: stale for %v, want %v", i+1, obs.StaleFor, r.staleFor)
				}
				if r.read.waits && r.oldest > 0 && (!obs.OldestKnown || obs.Oldest != r.oldest) {
					t.Errorf("round %d: oldest %v (known %v), want %v", i+1, obs.Oldest, obs.OldestKnown, r.oldest)
				}
			}
		})
	}
}
