package pipeline

import "time"

// HeldClock counts how long a condition has held across sampling rounds, and nothing else: a
// stall clock that counted the quiet hours before the condition began would page someone for
// a topic's first records. Since is when the condition began to hold (zero while it does not);
// Clear is the last round that saw it not holding: it cannot have begun before then.
type HeldClock struct {
	Since time.Time `json:"since,omitzero"`
	Clear time.Time `json:"clear,omitzero"`
}

// Observe is the clock after a round at now that saw the condition hold, or not. began is
// evidence of when it began (the timestamp of the oldest waiting record; zero: none): it moves
// Since back, but never before the last clear round nor after now.
func (c HeldClock) Observe(now time.Time, holds bool, began time.Time) HeldClock {
	if !holds {
		return HeldClock{Clear: now}
	}
	since := c.Since
	if since.IsZero() || since.After(now) {
		since = now
	}
	if !began.IsZero() && began.Before(since) {
		since = began
	}
	if since.Before(c.Clear) {
		since = c.Clear
	}
	return HeldClock{Since: since, Clear: c.Clear}
}

// Held says whether the condition held at the last round.
func (c HeldClock) Held() bool { return !c.Since.IsZero() }

// For is how long the condition has held at now, counted from the later of Since and from
// (a reset such as the newest commit; zero: none); 0 when it does not hold.
func (c HeldClock) For(now, from time.Time) time.Duration {
	if c.Since.IsZero() {
		return 0
	}
	start := c.Since
	if from.After(start) {
		start = from
	}
	return max(now.Sub(start), 0)
}
