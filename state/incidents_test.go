package state_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/testclock"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// clock is the tests' settable clock; the alias keeps the state tests' short name.
type clock = testclock.Clock

func newStore(t *testing.T) (*state.Store, *clock, *redis.Client, string) {
	t.Helper()
	rdb, prefix := testredis.Client(t)
	s := state.New(rdb, prefix)
	c := testclock.New(time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC))
	s.SetClock(c.Now)
	s.Coalesce = 10 * time.Second
	if err := s.EnsureOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, c, rdb, prefix
}

func alert(key, fp string) state.AlertRecord {
	return state.AlertRecord{Key: key, Fingerprint: fp, Title: "client replied sms", Severity: 3,
		Pipeline: "sms-replies", Channel: "C0PIPE", Source: "alertmanager"}
}

func TestDuplicatesJoinOneIncident(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	first, err := s.RecordAlert(ctx, alert("k1", "fp1"))
	if err != nil {
		t.Fatal(err)
	}
	if first.Result != "opened" || first.Incident != "INC-1" {
		t.Fatalf("first alert: %+v, want opened INC-1", first)
	}
	a := alert("k1", "fp1")
	a.Severity = 1
	dup, err := s.RecordAlert(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if dup.Result != "duplicate" || dup.Incident != "INC-1" {
		t.Fatalf("duplicate: %+v", dup)
	}
	other, _ := s.RecordAlert(ctx, alert("k2", "fp2"))
	if other.Incident != "INC-2" || other.Result != "opened" {
		t.Fatalf("other key: %+v", other)
	}
	inc, err := s.Get(ctx, "inc-1")
	if err != nil {
		t.Fatal(err)
	}
	if inc.Count != 2 || inc.Severity != 1 || inc.Status != state.StatusOpen || inc.Channel != "C0PIPE" {
		t.Fatalf("incident: %+v", inc)
	}
	if _, err := s.Get(ctx, "INC-99"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("missing incident: err %v, want ErrNotFound", err)
	}
}

// TestOpeningIsAtomicAcrossProcesses uses two clients (two connection pools, as two replicas
// would) and 200 concurrent identical alerts.
func TestOpeningIsAtomicAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	rdb1, prefix := testredis.Client(t)
	rdb2, _ := testredis.Client(t)
	s1, s2 := state.New(rdb1, prefix), state.New(rdb2, prefix)
	var wg sync.WaitGroup
	ids := make(chan string, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := s1
			if i%2 == 1 {
				s = s2
			}
			out, err := s.RecordAlert(ctx, alert("storm", fmt.Sprintf("fp%d", i%7)))
			if err != nil {
				t.Error(err)
				return
			}
			ids <- out.Incident
		}(i)
	}
	wg.Wait()
	close(ids)
	seen := map[string]int{}
	for id := range ids {
		seen[id]++
	}
	if len(seen) != 1 || seen["INC-1"] != 200 {
		t.Fatalf("incidents opened: %v, want exactly INC-1 x200", seen)
	}
	open, _ := s1.ListOpen(ctx, "")
	if len(open) != 1 || open[0].Count != 200 {
		t.Fatalf("open incidents: %d (count %d), want 1 with 200", len(open), open[0].Count)
	}
}

func TestResolvedKeyReopensWithLink(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	s.RecordAlert(ctx, alert("k", "fp"))
	if err := s.Resolve(ctx, "INC-1", "U1", "fixed ACL"); err != nil {
		t.Fatal(err)
	}
	var ce *state.ChangeError
	if err := s.Resolve(ctx, "INC-1", "U1", ""); !errors.As(err, &ce) || ce.Reason != "resolved" {
		t.Fatalf("second resolve: %v", err)
	}
	out, _ := s.RecordAlert(ctx, alert("k", "fp"))
	if out.Incident != "INC-2" || out.Result != "opened" || out.Previous != "INC-1" {
		t.Fatalf("after resolve: %+v, want INC-2 opened with previous INC-1", out)
	}
	inc, _ := s.Get(ctx, "INC-2")
	if inc.Previous != "INC-1" {
		t.Fatalf("previous link: %q", inc.Previous)
	}
}

func TestAllAlertsResolvedKeepsIncidentOpenUntilAutoResolve(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.AutoResolveAfter = time.Minute
	s.RecordAlert(ctx, alert("k", "a"))
	s.RecordAlert(ctx, alert("k", "b"))
	r := alert("k", "a")
	r.Resolved = true
	s.RecordAlert(ctx, r)
	inc, _ := s.Get(ctx, "INC-1")
	if inc.AllResolved || inc.Alerts["a"].Status != "resolved" || inc.Alerts["b"].Status != "firing" {
		t.Fatalf("one of two resolved: %+v", inc)
	}
	r.Fingerprint = "b"
	s.RecordAlert(ctx, r)
	inc, _ = s.Get(ctx, "INC-1")
	if !inc.AllResolved || inc.Status != state.StatusOpen {
		t.Fatalf("all resolved: %+v", inc)
	}
	if done, _ := s.AutoResolveDue(ctx); len(done) != 0 {
		t.Fatalf("auto-resolved too early: %v", done)
	}
	c.Add(61 * time.Second)
	done, err := s.AutoResolveDue(ctx)
	if err != nil || len(done) != 1 || done[0] != "INC-1" {
		t.Fatalf("auto-resolve: %v %v", done, err)
	}
	inc, _ = s.Get(ctx, "INC-1")
	if inc.Status != state.StatusResolved {
		t.Fatalf("status after auto-resolve: %s", inc.Status)
	}
	// A resolved alert for a key with no open incident is ignored, not an error.
	out, err := s.RecordAlert(ctx, r)
	if err != nil || out.Result != "ignored" {
		t.Fatalf("resolved alert without incident: %+v %v", out, err)
	}
}

func TestMergeRedirectsFutureDuplicates(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	s.RecordAlert(ctx, alert("first", "f1"))
	s.RecordAlert(ctx, alert("second", "s1"))
	s.RecordAlert(ctx, alert("second", "s1"))
	if err := s.Merge(ctx, "2", "1", "U1"); err != nil {
		t.Fatal(err)
	}
	from, _ := s.Get(ctx, "INC-2")
	into, _ := s.Get(ctx, "INC-1")
	if from.Status != state.StatusResolved || from.MergedInto != "INC-1" {
		t.Fatalf("merged incident: %+v", from)
	}
	if into.Count != 3 || len(into.MergedFrom) != 1 || into.MergedFrom[0] != "INC-2" || into.Alerts["s1"].Status != "firing" {
		t.Fatalf("target incident: %+v", into)
	}
	out, _ := s.RecordAlert(ctx, alert("second", "s1"))
	if out.Incident != "INC-1" || out.Result != "duplicate" {
		t.Fatalf("duplicate of merged: %+v, want INC-1 duplicate", out)
	}
	var ce *state.ChangeError
	if err := s.Merge(ctx, "INC-1", "INC-1", "U1"); !errors.As(err, &ce) || ce.Reason != "same" {
		t.Fatalf("self merge: %v", err)
	}
	if err := s.Merge(ctx, "INC-2", "INC-1", "U1"); !errors.As(err, &ce) || ce.Reason != "resolved" {
		t.Fatalf("merge of resolved: %v", err)
	}
	// Resolving INC-1 frees both keys.
	s.Resolve(ctx, "INC-1", "U1", "")
	out, _ = s.RecordAlert(ctx, alert("second", "s1"))
	if out.Result != "opened" || out.Previous != "INC-2" {
		t.Fatalf("after resolving the target: %+v", out)
	}
}

func TestAcknowledge(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	s.RecordAlert(ctx, alert("k", "fp"))
	if err := s.Acknowledge(ctx, "INC-1", "alice"); err != nil {
		t.Fatal(err)
	}
	var ce *state.ChangeError
	if err := s.Acknowledge(ctx, "INC-1", "bob"); !errors.As(err, &ce) || ce.Reason != "acknowledged" {
		t.Fatalf("second ack: %v", err)
	}
	if err := s.Acknowledge(ctx, "INC-7", "bob"); !errors.As(err, &ce) || ce.Reason != "notfound" {
		t.Fatalf("ack missing: %v", err)
	}
	// Still absorbs duplicates while acknowledged.
	out, _ := s.RecordAlert(ctx, alert("k", "fp"))
	if out.Incident != "INC-1" {
		t.Fatalf("duplicate while acknowledged: %+v", out)
	}
	tl, _ := s.Timeline(ctx, "INC-1", 10)
	if len(tl) != 2 || tl[0].Name != "opened" || tl[0].Title != "client replied sms" || tl[0].Actor != "alertmanager" ||
		tl[1].Name != "acknowledged" || tl[1].Actor != "alice" {
		t.Fatalf("timeline: %+v", tl)
	}
	if tl, _ := s.Timeline(ctx, "INC-1", 1); len(tl) != 1 || tl[0].Name != "acknowledged" {
		t.Fatalf("newest event: %+v", tl)
	}
}

// TestTimelineOfAnIncidentOpenedByAnOlderVersion: streamwatch before 2026-11-30 wrote "opened"
// into the timeline stream; such an incident shows it once.
func TestTimelineOfAnIncidentOpenedByAnOlderVersion(t *testing.T) {
	ctx := context.Background()
	s, _, rdb, prefix := newStore(t)
	s.RecordAlert(ctx, alert("k", "fp"))
	stream := "{" + prefix + "}:inc:INC-1:timeline"
	for _, ev := range []string{"opened", "acknowledged"} {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"at", 1, "event", ev, "actor", "a", "detail", ""}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	tl, _ := s.Timeline(ctx, "INC-1", 10)
	if len(tl) != 2 || tl[0].Name != "opened" || tl[1].Name != "acknowledged" {
		t.Fatalf("timeline: %+v", tl)
	}
}

func TestUnavailableRedis(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer rdb.Close()
	s := state.New(rdb, "x")
	_, err := s.RecordAlert(context.Background(), alert("k", "fp"))
	if !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}
