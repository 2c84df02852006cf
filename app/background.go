package app

import (
	"context"
	"sync"
)

// background runs work that outlives the request that asked for it (the automatic diagnosis of
// an incident a webhook opened), at most limit at a time, until its context ends; wait waits
// for all of it.
type background struct {
	limit int

	mu      sync.Mutex
	ctx     context.Context
	slots   chan struct{}
	running sync.WaitGroup
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
	b.mu.Unlock()
	if ctx == nil {
		return // not running: nothing may start that nobody waits for
	}
	b.running.Go(func() {
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
