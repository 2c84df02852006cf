package state_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

func TestCoalescedFlushesAtMostOncePerWindow(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.RecordAlert(ctx, alert("k", "fp"))
	for i := 0; i < 500; i++ {
		a := alert("k", "fp")
		a.Detail = fmt.Sprintf("dup %d", i)
		s.RecordAlert(ctx, a)
	}
	// The first flush is due at once (no flush yet); later ones a window apart.
	if n, _ := s.Pump(ctx); n != 1 {
		t.Fatalf("first pump moved %d, want 1", n)
	}
	for i := 0; i < 100; i++ {
		s.RecordAlert(ctx, alert("k", "fp"))
	}
	c.Add(9 * time.Second)
	if n, _ := s.Pump(ctx); n != 0 {
		t.Fatalf("pump inside the window moved %d, want 0", n)
	}
	c.Add(time.Second)
	if n, _ := s.Pump(ctx); n != 1 {
		t.Fatalf("pump after the window moved %d, want 1", n)
	}
	ds, err := s.ReadOutbox(ctx, "r1", false, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 3 {
		t.Fatalf("outbox: %d entries, want root + 2 flushes: %+v", len(ds), ds)
	}
	if ds[0].Kind != state.KindRoot || ds[0].Seq != 1 {
		t.Fatalf("first entry %+v", ds[0])
	}
	if ds[1].Kind != state.KindFlush || ds[1].Count != 500 || ds[1].Detail != "dup 499" || ds[1].Seq != 2 {
		t.Fatalf("first flush %+v", ds[1])
	}
	if ds[2].Count != 100 || ds[2].Seq != 3 {
		t.Fatalf("second flush %+v", ds[2])
	}
}

func TestOutboxCompleteAndClaim(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	s.RecordAlert(ctx, alert("k", "fp"))
	s.Acknowledge(ctx, "INC-1", "alice")
	ds, _ := s.ReadOutbox(ctx, "dead", false, 10, 0)
	if len(ds) != 2 {
		t.Fatalf("read %d", len(ds))
	}
	// "dead" never completes; another replica claims its entries once they are idle.
	if got, _ := s.ClaimStale(ctx, "alive", time.Hour); len(got) != 0 {
		t.Fatalf("claimed fresh entries: %d", len(got))
	}
	got, err := s.ClaimStale(ctx, "alive", 0)
	if err != nil || len(got) != 2 || got[0].Kind != state.KindRoot || got[1].Name != "acknowledged" {
		t.Fatalf("claim: %+v %v", got, err)
	}
	if err := s.Complete(ctx, got[0], "1732970000.000100", "C0PIPE"); err != nil {
		t.Fatal(err)
	}
	inc, _ := s.Get(ctx, "INC-1")
	if p := inc.Delivery(); p.Delivered != 1 || p.RootTS != "1732970000.000100" || p.Channel != "C0PIPE" {
		t.Fatalf("progress %+v", inc.Delivery())
	}
	id, _ := s.ByThread(ctx, "C0PIPE", "1732970000.000100")
	if id != "INC-1" {
		t.Fatalf("by thread: %q", id)
	}
	if n, _ := s.OutboxDepth(ctx); n != 1 {
		t.Fatalf("depth %d, want 1", n)
	}
	pend, _ := s.ReadOutbox(ctx, "alive", true, 10, 0)
	if len(pend) != 1 || pend[0].Seq != 2 {
		t.Fatalf("pending for alive: %+v", pend)
	}
}

func TestEnvelopeDedupAndLocks(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	first, _ := s.FirstDelivery(ctx, "env-1")
	again, _ := s.FirstDelivery(ctx, "env-1")
	if !first || again {
		t.Fatalf("envelope dedup: first=%v again=%v", first, again)
	}
	a, _ := s.TryLock(ctx, "job:1", "r1", time.Minute)
	b, _ := s.TryLock(ctx, "job:1", "r2", time.Minute)
	if !a || b {
		t.Fatalf("lock: a=%v b=%v", a, b)
	}
	s.Audit(ctx, state.AuditEntry{Actor: "U1", Action: "merge", Target: "INC-2", Outcome: "refused", Detail: "not a remediator"})
	log, _ := s.AuditLog(ctx, 5)
	if len(log) != 1 || log[0].Outcome != "refused" || log[0].Actor != "U1" {
		t.Fatalf("audit: %+v", log)
	}
}
