package app

import (
	"context"
	"sync"
)

// background runs work that outlives the job or the request that asked for it (the automatic
// diagnoses, the charts that follow them), at most limit at a time, until its context ends; wait waits
// for all of it.
type background struct {
	limit int

	mu      sync.Mutex
	ctx     context.Context
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
// blocks: a webhook calls it.
func (b *background) Go(f func(ctx context.Context)) {
	b.mu.Lock()
	if b.slots == nil {
		b.slots = make(chan struct{}, max(b.limit, 1))
	}
	ctx := b.ctx
	if ctx != nil {
		b.pending++
	}
	b.mu.Unlock()
	if ctx == nil {
		return // not running: nothing may start that nobody waits for
	}
	b.running.Go(func() {
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
	})
}

// wait waits for everything Go started.
func (b *background) wait() { b.running.Wait() }
