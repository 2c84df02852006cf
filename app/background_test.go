package app

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// TestBackgroundAfterWait: work asked for while shutdown waits (a scheduler job's last tick, a
// watch's recovery chart) either runs and is waited for, or does not start; it never races the
// wait (the race detector and WaitGroup's reuse check would say so), and nothing starts after.
func TestBackgroundAfterWait(t *testing.T) {
	for range 50 {
		ctx, cancel := context.WithCancel(context.Background())
		b := &background{limit: 2}
		b.start(ctx)
		var ran, finished atomic.Int64
		var askers sync.WaitGroup
		for range 8 {
			askers.Go(func() {
				for range 20 {
					b.Go(func(context.Context) { ran.Add(1); finished.Add(1) })
				}
			})
		}
		cancel()
		b.wait()
		if got := finished.Load(); got != ran.Load() {
			t.Fatalf("wait returned with %d of %d started runs unfinished", ran.Load()-got, ran.Load())
		}
		askers.Wait()
		before := ran.Load()
		b.Go(func(context.Context) { ran.Add(1) })
		if ran.Load() != before || b.idle() != 2 {
			t.Fatalf("work started after wait (%d runs, %d idle slots)", ran.Load()-before, b.idle())
		}
	}
}
