package state_test

import (
	"context"
	"testing"
	"time"
)

// TestRelocateMovesTheRootLookup: after the root is posted again elsewhere, the new message
// finds the incident (with the closed incident's expiry), the old one no longer does, and an
// incident that expired is left alone.
func TestRelocateMovesTheRootLookup(t *testing.T) {
	ctx := context.Background()
	s, _, rdb, prefix := newStore(t)
	s.Retention = time.Hour
	s.RecordAlert(ctx, alert("k", "fp"))
	outbox(t, s) // the root is posted as 1700000000.000000 in C0PIPE
	if id, _ := s.ByThread(ctx, "C0PIPE", "1700000000.000000"); id != "INC-1" {
		t.Fatalf("before: the root finds %q", id)
	}
	if err := s.Resolve(ctx, "INC-1", "alice", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Relocate(ctx, "inc-1", "C0NEW", "1700000100.000000"); err != nil {
		t.Fatal(err)
	}
	if id, _ := s.ByThread(ctx, "C0NEW", "1700000100.000000"); id != "INC-1" {
		t.Errorf("the new root finds %q, want INC-1", id)
	}
	if id, _ := s.ByThread(ctx, "C0PIPE", "1700000000.000000"); id != "" {
		t.Errorf("the old root still finds %q", id)
	}
	inc, err := s.Get(ctx, "INC-1")
	if err != nil {
		t.Fatal(err)
	}
	if inc.RootChannel != "C0NEW" || inc.RootTS != "1700000100.000000" {
		t.Errorf("root %s %s", inc.RootChannel, inc.RootTS)
	}
	if ttl := rdb.PTTL(ctx, "{"+prefix+"}:ts:C0NEW:1700000100.000000").Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("the new lookup expires in %v, want the closed incident's hour", ttl)
	}

	if err := s.Relocate(ctx, "INC-9", "C0NEW", "1700000200.000000"); err != nil {
		t.Fatalf("an incident that no longer exists: %v", err)
	}
	if id, _ := s.ByThread(ctx, "C0NEW", "1700000200.000000"); id != "" {
		t.Errorf("a gone incident got a lookup: %q", id)
	}
	if n := rdb.Exists(ctx, "{"+prefix+"}:inc:INC-9").Val(); n != 0 {
		t.Errorf("relocate brought back a gone incident")
	}
}
