package state_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

func TestPlansExpireAndAreDeleted(t *testing.T) {
	s, _, rdb, prefix := newStore(t)
	ctx := context.Background()
	a, err := s.NewPlanID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.NewPlanID(ctx)
	if a == b || a[:2] != "P-" {
		t.Fatalf("plan ids %q, %q", a, b)
	}
	if err := s.SavePlan(ctx, a, []byte(`{"id":"`+a+`"}`), 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := s.Plan(ctx, a)
	if err != nil || string(got) != `{"id":"`+a+`"}` {
		t.Fatalf("Plan = %q, %v", got, err)
	}
	ttl := rdb.PTTL(ctx, "{"+prefix+"}:plan:"+a).Val()
	if ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Fatalf("plan expires in %v, want repair.confirm_within (10m)", ttl)
	}
	if _, err := s.Plan(ctx, b); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a plan never saved: %v", err)
	}
	if err := s.DeletePlan(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Plan(ctx, a); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("a deleted plan: %v", err)
	}
}

func TestLocksBelongToTheirOwner(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	ok, err := s.TryLock(ctx, "remediate:p", "alice", time.Minute)
	if err != nil || !ok {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if ok, _ := s.TryLock(ctx, "remediate:p", "bob", time.Minute); ok {
		t.Fatal("bob took a held lock")
	}
	if ok, _ := s.RefreshLock(ctx, "remediate:p", "bob", time.Minute); ok {
		t.Fatal("bob refreshed alice's lock")
	}
	if err := s.Unlock(ctx, "remediate:p", "bob"); err != nil {
		t.Fatal(err)
	}
	if who, _ := s.LockHolder(ctx, "remediate:p"); who != "alice" {
		t.Fatalf("after bob's unlock the holder is %q", who)
	}
	if ok, _ := s.RefreshLock(ctx, "remediate:p", "alice", time.Minute); !ok {
		t.Fatal("alice could not refresh her lock")
	}
	s.Unlock(ctx, "remediate:p", "alice")
	if who, _ := s.LockHolder(ctx, "remediate:p"); who != "" {
		t.Fatalf("after alice's unlock the holder is %q", who)
	}
}

func TestAuditTrailSelects(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	for i := range 1200 {
		e := state.AuditEntry{Actor: "U1", Action: "incident ack", Outcome: "done", Incident: fmt.Sprintf("INC-%d", i)}
		if i%100 == 7 {
			e.Pipeline, e.Via, e.Channel = "sms-replies", "button", "C0PIPE"
		}
		if err := s.Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	sms := func(e state.AuditEntry) bool { return e.Pipeline == "sms-replies" }
	got, err := s.AuditTrail(ctx, sms, 5, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.Incident)
		if e.Via != "button" || e.Channel != "C0PIPE" {
			t.Fatalf("entry lost its fields: %+v", e)
		}
	}
	if fmt.Sprint(ids) != "[INC-707 INC-807 INC-907 INC-1007 INC-1107]" {
		t.Fatalf("newest 5, oldest first: %v", ids)
	}
	// Bounded: only the newest 250 entries (INC-950 … INC-1199) are read.
	got, _ = s.AuditTrail(ctx, sms, 50, 250)
	if len(got) != 2 || got[0].Incident != "INC-1007" {
		t.Fatalf("within the newest 250 entries: %+v, want INC-1007 and INC-1107", got)
	}
}
