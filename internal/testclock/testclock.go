// Package testclock is the clock tests set: it stands still until the test moves it.
package testclock

import (
	"sync"
	"time"
)

// Clock is a clock shared by goroutines; Now is what it says.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New is a clock standing at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
