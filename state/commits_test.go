package state_test

import (
	"context"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

// TestCommitHistory: each batch once, oldest first, with its duration when a note had one; a
// batch noted again keeps its first time.
func TestCommitHistory(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for _, c := range []state.Commit{
		{Batch: 2, At: t0.Add(2 * time.Second), Took: 1500 * time.Millisecond},
		{Batch: 1, At: t0.Add(time.Second)}, // duration unknown
		{Batch: 1, At: t0.Add(5 * time.Second), Took: 800 * time.Millisecond},
		{Batch: 2, At: t0.Add(9 * time.Second), Took: 1500 * time.Millisecond},
		{Batch: 3, At: t0.Add(3 * time.Second), Took: 250 * time.Millisecond},
	} {
		if err := s.NoteCommit(ctx, "sms-replies", c); err != nil {
			t.Fatal(err)
		}
	}
	h, err := s.CommitHistory(ctx, "sms-replies")
	if err != nil {
		t.Fatal(err)
	}
	want := []state.Commit{
		{Batch: 1, At: t0.Add(time.Second), Took: 800 * time.Millisecond},
		{Batch: 2, At: t0.Add(2 * time.Second), Took: 1500 * time.Millisecond},
		{Batch: 3, At: t0.Add(3 * time.Second), Took: 250 * time.Millisecond},
	}
	if len(h) != len(want) {
		t.Fatalf("history %+v, want %+v", h, want)
	}
	for i := range want {
		if h[i].Batch != want[i].Batch || !h[i].At.Equal(want[i].At) || h[i].Took != want[i].Took {
			t.Errorf("commit %d: %+v, want %+v", i, h[i], want[i])
		}
	}
}
