package state_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// TestRecordAlertsInOrderAsIfAlone: one call's alerts are recorded one after the other, each
// seeing what the ones before it did.
func TestRecordAlertsInOrderAsIfAlone(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	resolved := alert("k1", "a")
	resolved.Resolved = true
	out, err := s.RecordAlerts(ctx, []state.AlertRecord{
		alert("k1", "a"), alert("k1", "b"), resolved, alert("k2", "c"), alert("k2", "c"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []state.Outcome{
		{Incident: "INC-1", Result: "opened"}, {Incident: "INC-1", Result: "duplicate"},
		{Incident: "INC-1", Result: "resolved"}, {Incident: "INC-2", Result: "opened"},
		{Incident: "INC-2", Result: "duplicate"},
	}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Fatalf("outcomes\n%v\nwant\n%v", out, want)
	}
	inc, _ := s.Get(ctx, "INC-1")
	if inc.Count != 2 || inc.Alerts["a"].Status != "resolved" || inc.Alerts["b"].Status != "firing" || inc.AllResolved {
		t.Fatalf("INC-1: %+v", inc)
	}
	if _, err := s.RecordAlerts(ctx, []state.AlertRecord{alert("k3", "x"), alert("", "y")}); err == nil {
		t.Fatal("an alert without a dedup key was accepted")
	}
	if inc, err := s.Get(ctx, "INC-3"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a call with a bad alert recorded the others: %+v %v", inc, err)
	}
}

// TestConcurrentCallsShareOneRun: calls made while the runs in flight (two at most) go on wait
// for them and then go to Redis together, each getting its own outcomes; a caller that gives
// up does not hold the others back, and its alerts are recorded all the same.
func TestConcurrentCallsShareOneRun(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	if _, err := s.RecordAlert(ctx, alert("hot", "h")); err != nil { // INC-1; loads the script
		t.Fatal(err)
	}
	var runs atomic.Int32
	hold := make(chan struct{})
	s.SetBeforeRun(func() {
		if runs.Add(1) <= 2 {
			<-hold
		}
	})
	first := make(chan error, 2)
	for n := range int32(2) {
		go func() {
			_, err := s.RecordAlert(ctx, alert("hot", "h"))
			first <- err
		}()
		wait.For(t, 10*time.Second, "a run to start", func() bool { return runs.Load() == n+1 })
	}

	const callers = 20
	type result struct {
		out []state.Outcome
		err error
	}
	results := make([]result, callers)
	quitter, quit := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx := ctx
			if i == 0 {
				cctx = quitter
			}
			out, err := s.RecordAlerts(cctx, []state.AlertRecord{alert("hot", "h"), alert(fmt.Sprintf("new-%d", i), "n")})
			results[i] = result{out, err}
			if i == 0 {
				gaveUp <- err
			}
		}()
	}
	wait.For(t, 10*time.Second, "every caller to queue", func() bool { return s.Queued() == callers })
	quit()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller who gave up got %v", err)
	}
	close(hold)
	wg.Wait()
	for range 2 {
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	}
	if n := runs.Load(); n != 3 {
		t.Fatalf("%d script runs for 2 + %d calls made while two were in flight, want 3", n, callers)
	}
	opened := map[string]bool{}
	for i, r := range results[1:] {
		if r.err != nil || len(r.out) != 2 || r.out[0] != (state.Outcome{Incident: "INC-1", Result: "duplicate"}) || r.out[1].Result != "opened" {
			t.Fatalf("caller %d: %+v %v", i+1, r.out, r.err)
		}
		inc, err := s.Get(ctx, r.out[1].Incident)
		if err != nil || inc.Key != fmt.Sprintf("new-%d", i+1) {
			t.Fatalf("caller %d was answered with %s, which holds %+v (%v)", i+1, r.out[1].Incident, inc, err)
		}
		opened[r.out[1].Incident] = true
	}
	inc, _ := s.Get(ctx, "INC-1")
	if len(opened) != callers-1 || inc.Count != 3+callers {
		t.Fatalf("%d incidents opened, INC-1 counts %d; want %d and %d", len(opened), inc.Count, callers-1, 3+callers)
	}
}
