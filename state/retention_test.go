package state_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// keysOf lists every key under prefix (a real SCAN of the server).
func keysOf(t *testing.T, rdb *redis.Client, prefix string) []string {
	t.Helper()
	var out []string
	iter := rdb.Scan(context.Background(), 0, "{"+prefix+"}:*", 1000).Iterator()
	for iter.Next(context.Background()) {
		out = append(out, strings.TrimPrefix(iter.Val(), "{"+prefix+"}:"))
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// deliverAll delivers every outbox entry, roots with a made-up ts.
func deliverAll(t *testing.T, s *state.Store) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for {
		ds, err := s.ReadOutbox(ctx, "r", false, 200, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			return n
		}
		for _, d := range ds {
			ts := ""
			if d.Kind == state.KindRoot {
				ts = fmt.Sprintf("1700000000.%06d", n)
			}
			if err := s.Complete(ctx, d, ts, d.Channel); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
}

// TestClosedIncidentsExpire: with a short retention, a resolved incident, a merged one and a
// resolved flood incident leave nothing under their keys (a SCAN of the server finds none),
// while an open incident keeps everything.
func TestClosedIncidentsExpire(t *testing.T) {
	ctx := context.Background()
	s, _, rdb, prefix := newStore(t)
	s.Retention = 1500 * time.Millisecond
	s.FloodLimit = 3
	record(t, s, alert("resolved", "a"), alert("merged", "b"), alert("open", "c"))
	record(t, s, distinct(1), distinct(2), distinct(3)) // INC-4 is a flood
	r := alert("resolved", "a")
	r.Resolved = true
	record(t, s, r)
	deliverAll(t, s)
	if _, err := s.Note(ctx, "INC-1", "note", "U1", "looked at it", ""); err != nil {
		t.Fatal(err)
	}
	before := keysOf(t, rdb, prefix)
	for _, want := range []string{"inc:INC-1", "inc:INC-1:timeline", "inc:INC-1:alerts", "inc:INC-4:flood:keys", "inc:INC-4:flood:labels"} {
		if !slices.Contains(before, want) {
			t.Fatalf("no %s before closing: %v", want, before)
		}
	}
	if err := s.Resolve(ctx, "INC-1", "U1", "fixed"); err != nil {
		t.Fatal(err)
	}
	if err := s.Merge(ctx, "INC-2", "INC-3", "U1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(ctx, "INC-4", "U1", "noise"); err != nil {
		t.Fatal(err)
	}
	deliverAll(t, s) // the closing events, delivered after the close
	// Every key of the closed incidents has a TTL now; wait until they are gone.
	closed := func(k string) bool {
		ref := ""
		if strings.HasPrefix(k, "ts:") || strings.HasPrefix(k, "last:") || strings.HasPrefix(k, "dedup:") {
			ref, _ = rdb.Get(ctx, "{"+prefix+"}:"+k).Result() // root lookups, key links
		}
		for _, id := range []string{"INC-1", "INC-2", "INC-4"} {
			if k == "inc:"+id || strings.HasPrefix(k, "inc:"+id+":") || ref == id {
				return true
			}
		}
		return false
	}
	var left []string
	if err := wait.Until(context.Background(), 15*time.Second, "the keys of closed incidents expiring", func() bool {
		left = left[:0]
		for _, k := range keysOf(t, rdb, prefix) {
			if closed(k) {
				left = append(left, k)
			}
		}
		return len(left) == 0
	}); err != nil {
		t.Fatalf("keys of closed incidents still there after the retention: %v", left)
	}
	after := keysOf(t, rdb, prefix)
	for _, want := range []string{"inc:INC-3", "inc:INC-3:alerts", "inc:INC-3:timeline"} {
		if !slices.Contains(after, want) {
			t.Fatalf("the open incident lost %s: %v", want, after)
		}
	}
	if ttl, _ := rdb.PTTL(ctx, "{"+prefix+"}:inc:INC-3").Result(); ttl != -1 {
		t.Fatalf("open incident has a TTL: %v", ttl)
	}
	// A due thread update of an expired incident brings nothing back.
	if _, err := s.Pump(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range keysOf(t, rdb, prefix) {
		if closed(k) {
			t.Fatalf("the pump brought back %s", k)
		}
	}
	// The key of an expired incident opens a new one, linked to nothing.
	s.FloodLimit = 0
	if o := record(t, s, alert("resolved", "a"))[0]; o.Result != state.ResultOpened || o.Previous != "" {
		t.Fatalf("after expiry: %+v", o)
	}
	if _, err := s.Get(ctx, "INC-1"); err == nil {
		t.Fatal("INC-1 still readable")
	}
}

// TestDeliveryOfAnExpiredIncidentLeavesNothing: completing an outbox entry of an incident
// that expired meanwhile writes nothing back.
func TestDeliveryOfAnExpiredIncidentLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s, _, rdb, prefix := newStore(t)
	record(t, s, alert("k", "a"))
	ds, _ := s.ReadOutbox(ctx, "r", false, 10, 0)
	rdb.Del(ctx, "{"+prefix+"}:inc:INC-1", "{"+prefix+"}:inc:INC-1:alerts", "{"+prefix+"}:inc:INC-1:context")
	if err := s.Complete(ctx, ds[0], "1.2", "C0PIPE"); err != nil {
		t.Fatal(err)
	}
	for _, k := range keysOf(t, rdb, prefix) {
		if strings.HasPrefix(k, "inc:") || strings.HasPrefix(k, "ts:") {
			t.Fatalf("completing the delivery of a gone incident wrote %s", k)
		}
	}
	if n, _ := s.OutboxDepth(ctx); n != 0 {
		t.Fatalf("outbox depth %d", n)
	}
}

// TestOutboxStaysBounded: 10,000 delivered messages leave an empty outbox of a few hundred
// bytes; undelivered ones are all it ever holds.
func TestOutboxStaysBounded(t *testing.T) {
	ctx := context.Background()
	s, _, rdb, prefix := newStore(t)
	var as []state.AlertRecord
	for i := range 100 {
		as = append(as, alert(fmt.Sprint("k", i), "fp"))
	}
	record(t, s, as...)
	for i := range 100 {
		for j := range 99 {
			if _, err := s.Note(ctx, fmt.Sprint("INC-", i+1), "note", "U1", fmt.Sprint("note ", j), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, _ := s.OutboxDepth(ctx); n != 10000 {
		t.Fatalf("queued %d, want 10,000", n)
	}
	if n := deliverAll(t, s); n != 10000 {
		t.Fatalf("delivered %d", n)
	}
	stream := "{" + prefix + "}:outbox"
	n, _ := rdb.XLen(ctx, stream).Result()
	mem, _ := rdb.MemoryUsage(ctx, stream).Result()
	pending, _ := rdb.XPending(ctx, stream, "deliver").Result()
	if n != 0 || pending.Count != 0 || mem > 4096 {
		t.Fatalf("after 10,000 deliveries the outbox holds %d entries (%d pending) in %d bytes", n, pending.Count, mem)
	}
}

// TestSweepGivesOldClosedIncidentsTheirTTL: incidents an older version closed without a TTL
// get one (retention after they closed); open ones keep none.
func TestSweepGivesOldClosedIncidentsTheirTTL(t *testing.T) {
	ctx := context.Background()
	s, c, rdb, prefix := newStore(t)
	record(t, s, alert("old", "a"), alert("open", "b"))
	deliverAll(t, s)
	if err := s.Resolve(ctx, "INC-1", "U1", ""); err != nil { // Retention 0: no TTL, as before
		t.Fatal(err)
	}
	key := func(k string) string { return "{" + prefix + "}:" + k }
	if ttl, _ := rdb.PTTL(ctx, key("inc:INC-1")).Result(); ttl != -1 {
		t.Fatalf("TTL %v without retention", ttl)
	}
	c.Add(time.Hour)
	s.Retention = 3 * time.Hour
	for i := 0; ; i++ {
		done, err := s.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if i > 1000 {
			t.Fatal("the sweep does not finish")
		}
	}
	for _, k := range []string{"inc:INC-1", "inc:INC-1:alerts", "inc:INC-1:timeline"} {
		ttl, _ := rdb.PTTL(ctx, key(k)).Result()
		if ttl < 119*time.Minute || ttl > 2*time.Hour {
			t.Fatalf("%s: TTL %v, want about 2h (3h after it closed an hour ago)", k, ttl)
		}
	}
	for _, k := range keysOf(t, rdb, prefix) {
		if strings.HasPrefix(k, "ts:") || strings.HasPrefix(k, "last:") {
			inc, _ := rdb.Get(ctx, key(k)).Result()
			ttl, _ := rdb.PTTL(ctx, key(k)).Result()
			if (inc == "INC-1") != (ttl > 0) {
				t.Fatalf("%s → %s: TTL %v", k, inc, ttl)
			}
		}
	}
	if ttl, _ := rdb.PTTL(ctx, key("inc:INC-2")).Result(); ttl != -1 {
		t.Fatalf("open incident got TTL %v", ttl)
	}
	if done, _ := s.Sweep(ctx); !done {
		t.Fatal("a finished sweep runs again")
	}
}

// TestAuditKeepsTwiceTheRetention: entries older than twice the retention are trimmed as new
// ones arrive.
func TestAuditKeepsTwiceTheRetention(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	s.SetClock(time.Now)
	s.Retention = 300 * time.Millisecond
	for i := range 3 {
		if err := s.Audit(ctx, state.AuditEntry{Actor: "U1", Action: "resolve", Target: fmt.Sprint("INC-", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var log []state.AuditEntry
	// Each new entry trims the old ones: the first ones go once older than twice the retention.
	if err := wait.Until(ctx, 10*time.Second, "the oldest audit entries trimmed", func() bool {
		if err := s.Audit(ctx, state.AuditEntry{Actor: "U1", Action: "resolve", Target: "INC-9"}); err != nil {
			t.Fatal(err)
		}
		log, _ = s.AuditLog(ctx, 100)
		return log[0].Target != "INC-0"
	}); err != nil {
		t.Fatalf("audit entries older than twice the retention are kept: %d entries", len(log))
	}
	// What each write trims is measured from that write: the entries kept span at most twice
	// the retention (a millisecond for the stream ids' rounding).
	if span := log[len(log)-1].At.Sub(log[0].At); span > 2*s.Retention+time.Millisecond {
		t.Fatalf("kept entries spanning %v, more than twice the retention", span)
	}
}
