package state_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

// TestDiagnosisQueue: every incident opened for a pipeline waits for its automatic diagnosis
// from its opening; a claim holds it for the lease (a second replica gets nothing), and when
// the claimant never says done it is handed out again after the lease; done takes it out.
// An incident of no pipeline and a second alert of an open incident queue nothing.
func TestDiagnosisQueue(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	record(t, s, alert("k1", "fp1"))
	record(t, s, alert("k1", "fp2")) // a new alert of the same incident: no second diagnosis
	noPipeline := alert("k2", "fp")
	noPipeline.Pipeline = ""
	record(t, s, noPipeline)
	other := alert("k3", "fp")
	other.Pipeline = "orders"
	record(t, s, other)

	claim := func(n int) []state.Waiting {
		t.Helper()
		w, err := s.ClaimDiagnoses(ctx, n, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	first := claim(1)
	if !slices.Equal(first, []state.Waiting{{Incident: "INC-1", Pipeline: "sms-replies"}}) {
		t.Fatalf("first claim %v, want INC-1 of sms-replies (the oldest)", first)
	}
	if got := claim(10); !slices.Equal(got, []state.Waiting{{Incident: "INC-3", Pipeline: "orders"}}) {
		t.Fatalf("second claim %v, want INC-3 alone: INC-1 is claimed, INC-2 has no pipeline", got)
	}
	if err := s.DoneDiagnosis(ctx, "INC-3"); err != nil {
		t.Fatal(err)
	}
	c.Add(59 * time.Second)
	if got := claim(10); len(got) != 0 {
		t.Fatalf("within the lease: %v, want nothing", got)
	}
	c.Add(2 * time.Second) // INC-1's claimant died: its lease ended
	if got := claim(10); !slices.Equal(got, first) {
		t.Fatalf("after the lease: %v, want INC-1 again", got)
	}
	if err := s.DoneDiagnosis(ctx, "INC-1"); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	if got := claim(10); len(got) != 0 {
		t.Fatalf("after done: %v, want nothing", got)
	}
	if got, err := s.ClaimDiagnoses(ctx, 0, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("a claim of none: %v %v", got, err)
	}
}
