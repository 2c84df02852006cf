package state_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// TestMixedBatchKeepsEveryNewAlertsContext: a batch where a resolved and a silenced alert come
// before new ones (the group commit merges concurrent webhooks; Alertmanager sends firing and
// resolved alerts together): each new or changed alert's labels and annotations are kept for
// its own incident, and nothing is kept for the others.
func TestMixedBatchKeepsEveryNewAlertsContext(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	old := labelled("k-old", "fp-old", "old alert", map[string]string{"alertname": "old"})
	record(t, s, old)
	if _, err := s.CreateSilence(ctx, mustMatchers(t, "alertname=muted"), c.Now().Add(time.Hour), state.Maker{Name: "bob"}, ""); err != nil {
		t.Fatal(err)
	}
	resolved := old
	resolved.Resolved = true
	muted := labelled("k-muted", "fp-muted", "muted alert", map[string]string{"alertname": "muted"})
	fresh := labelled("k-new", "fp-new", "new alert", map[string]string{"alertname": "new", "team": "sms"})
	other := labelled("k-other", "fp-other", "other alert", map[string]string{"alertname": "other"})
	out := record(t, s, resolved, muted, fresh, resolved, other)
	if got := fmt.Sprint(results(out)); got != "map[ignored:0 opened:2 resolved:2 silenced:1]" && got != "map[opened:2 resolved:2 silenced:1]" {
		t.Fatalf("outcomes %v", out)
	}
	for _, a := range []state.AlertRecord{fresh, other} {
		var id string
		for i, o := range out {
			if o.Result == state.ResultOpened && []state.AlertRecord{resolved, muted, fresh, resolved, other}[i].Key == a.Key {
				id = o.Incident
			}
		}
		cs, err := s.AlertContexts(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := cs[a.Fingerprint]; got.Title != a.Title || got.Labels["alertname"] != a.Labels["alertname"] || got.Annotations["summary"] != a.Title {
			t.Errorf("%s (%s): context %+v, want its labels and annotations", a.Key, id, cs)
		}
		if len(cs) != 1 {
			t.Errorf("%s (%s) keeps contexts of other alerts: %+v", a.Key, id, cs)
		}
	}
	// The resolved alert's incident keeps only what it kept when it opened.
	if cs, _ := s.AlertContexts(ctx, out[0].Incident); len(cs) != 1 || cs["fp-old"].Title != "old alert" {
		t.Errorf("the resolved alert's incident: %+v", cs)
	}
}

func mustMatchers(t *testing.T, text string) []state.Matcher {
	t.Helper()
	m, err := state.ParseMatchers(text)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLabelsAndDigest: the labels a flood ranks are sorted "name=value" pairs, the separator
// dropped from names and values, at most 16 of them, each cut to 120 bytes; the digest is the
// one news compares, computed from the same sorted labels.
func TestLabelsAndDigest(t *testing.T) {
	long := strings.Repeat("é", 100)
	a := state.AlertRecord{Title: "t", Labels: map[string]string{"b": "2", "a": "1\x1fx", "c": long},
		Annotations: map[string]string{"summary": "s"}}
	labels, digest := state.LabelsAndDigest(a)
	want := "a=1x\x1fb=2\x1fc=" + strings.ToValidUTF8(long[:118], "")
	if labels != want {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if d := state.AlertDigest(a); digest != d || len(digest) != 16 {
		t.Errorf("digest %q, want %q", digest, d)
	}
	many := map[string]string{}
	for i := range 20 {
		many[fmt.Sprintf("l%02d", i)] = "v"
	}
	if labels, _ := state.LabelsAndDigest(state.AlertRecord{Labels: many}); strings.Count(labels, "\x1f") != 15 {
		t.Errorf("%d labels listed, want 16", strings.Count(labels, "\x1f")+1)
	}
}
