package app

import (
	"context"
	"sync"
)

// background runs work that outlives the job or the request that asked for it (the automatic
// diagnoses, the charts that follow them), at most limit at a time, until its context ends;
// wait waits for all of it.
type background struct {
	limit int

	mu      sync.Mutex
	ctx     context.Context
	closed  bool // wait was called: nothing more starts
	slots   chan struct{}
	pending int // started and not finished
	running sync.WaitGroup
}

// idle is how many more Go calls would run at once rather than wait for a slot.
func (b *background) idle() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(max(b.limit, 1)-b.pending, 0)
}

// start lets work run until ctx ends; work asked for before start waits for it.
func (b *background) start(ctx context.Context) {
	b.mu.Lock()
	b.ctx = ctx
	b.mu.Unlock()
}

// Go runs f in its own goroutine once a slot is free; f's context ends at shutdown. It never
// blocks: a webhook calls it. Once wait was called, or before start, f does not run (an
// automatic diagnosis it held stays queued in Redis for the next claim).
func (b *background) Go(f func(ctx context.Context)) {
	b.mu.Lock()
	if b.ctx == nil || b.closed {
		b.mu.Unlock()
		return // nothing may start that nobody waits for
	}
	if b.slots == nil {
		b.slots = make(chan struct{}, max(b.limit, 1))
	}
	ctx := b.ctx
	b.pending++
	// Added under the lock: wait, which closes under it too, never waits while one is added.
	b.running.Add(1)
	b.mu.Unlock()
	go func() {
		defer b.running.Done()
		defer func() {
			b.mu.Lock()
			b.pending--
			b.mu.Unlock()
		}()
		select {
		case b.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-b.slots }()
		f(ctx)
	}()
}

// wait stops new work from starting and waits for everything Go started.
func (b *background) wait() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.running.Wait()
}
