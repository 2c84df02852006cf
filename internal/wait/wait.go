// Package wait is how streamwatch's tests (and the demo) wait: a condition is polled, with a
// pause that grows from 5 ms to 100 ms, until it holds or the time given is up. Never a sleep
// of a guessed length; one loop for everyone.
package wait

import (
	"context"
	"fmt"
	"time"
)

// Until polls cond until it holds, ctx ends, or within passes. The error names what did not
// happen (or is ctx's error when ctx ended first).
func Until(ctx context.Context, within time.Duration, what string, cond func() bool) error {
	deadline, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	pause := 5 * time.Millisecond
	for !cond() {
		t := time.NewTimer(pause)
		select {
		case <-deadline.Done():
			t.Stop()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if cond() {
				return nil
			}
			return fmt.Errorf("%s did not happen within %s", what, within)
		case <-t.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
	return nil
}

// TB is the part of testing.TB that For uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// For fails t unless cond holds within the time given.
func For(t TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := Until(context.Background(), within, what, cond); err != nil {
		t.Fatalf("waiting: %v", err)
	}
}
