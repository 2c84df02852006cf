package pipeline

import "time"

// Clock counts only the time its condition held. It is kept across rounds (in detection's
// record) and moved by one observation a round: it starts when the condition is first seen
// holding, or earlier when the condition's own evidence says so (the timestamp of the oldest
// waiting record), but never before the last round that saw the condition clear; a round
// that sees it clear stops and resets it; a round that could not tell leaves it alone.
//
// A clock that started from "the last time something happened" (the newest commit, the
// first sample of a group) would count time in which nothing was wrong: a quiet topic's ten
// minutes without records counted as ten minutes of a stall. Every duration a symptom
// reports is a Clock's, or a measurement bounded by one.
type Clock struct {
	// Since is when the condition began to hold; zero while it does not.
	Since time.Time `json:"since,omitzero"`
	// Clear is the last round that saw the condition not hold: whatever holds now began
	// after it.
	Clear time.Time `json:"clear,omitzero"`
}

// Observe applies one round at `at`. known false means the round could not tell (the clock
// is left as it was); holds says whether the condition held; began, when not zero, is when
// the condition's own evidence says it began (it moves Since earlier, never before Clear and
// never after at).
func (c Clock) Observe(at time.Time, known, holds bool, began time.Time) Clock {
	if !known {
		return c
	}
	if !holds {
		return Clock{Clear: at}
	}
	start := c.Since
	if start.IsZero() || start.After(at) {
		start = at
	}
	if !began.IsZero() && began.Before(start) {
		start = began
	}
	return Clock{Since: c.Bound(start), Clear: c.Clear}
}

// Holding reports whether the condition held at the last round that could tell.
func (c Clock) Holding() bool { return !c.Since.IsZero() }

// Held is how long the condition has held at now: zero while it does not.
func (c Clock) Held(now time.Time) time.Duration {
	if c.Since.IsZero() {
		return 0
	}
	return max(now.Sub(c.Since), 0)
}

// Bound moves t to the last round that saw the condition clear when t is earlier: a
// measurement of the condition (a record's own timestamp) cannot predate it.
func (c Clock) Bound(t time.Time) time.Time {
	if !c.Clear.IsZero() && t.Before(c.Clear) {
		return c.Clear
	}
	return t
}
