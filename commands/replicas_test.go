package commands_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// fakeReplication answers Confirm with err and counts the calls.
type fakeReplication struct {
	on              bool
	err             error
	marks, confirms int
}

func (f *fakeReplication) Replicated() bool { return f.on }
func (f *fakeReplication) Mark(context.Context) (state.ReplicationMark, error) {
	f.marks++
	return state.ReplicationMark{}, nil
}
func (f *fakeReplication) Confirm(context.Context, string, state.ReplicationMark) error {
	f.confirms++
	return f.err
}

// TestCommandSaysWhenAChangeIsNotYetSafe: with min_replicas_acked, a command that changed
// something confirms it on the replicas, and its reply says so when they did not confirm it;
// a command that changed nothing asks nothing.
func TestCommandSaysWhenAChangeIsNotYetSafe(t *testing.T) {
	ctx := context.Background()
	h, st := newHandler(t)
	if _, err := st.RecordAlert(ctx, state.AlertRecord{Key: "k", Fingerprint: "f", Title: "client replied sms", Severity: 3, Channel: "C1"}); err != nil {
		t.Fatal(err)
	}
	rep := &fakeReplication{on: true, err: &state.NotReplicatedError{Acked: 0, Want: 1, Within: time.Second}}
	h.Replication = rep
	notSafe := func(r commands.Reply) string {
		for _, s := range r.Sections {
			if s.Title == "Not yet safe" {
				return strings.Join(s.Lines, "\n")
			}
		}
		return ""
	}

	r := h.Handle(ctx, commands.Request{UserID: "U1", ChannelID: "C1", Text: "incident ack INC-1"})
	want := "Redis has this change, but only 0 of 1 Redis replicas confirmed it within 1s.\n" +
		"If the Redis primary fails before they have it, the change may be lost: check it in a minute, and repeat it if it is gone."
	if got := notSafe(r); got != want || rep.confirms != 1 {
		t.Fatalf("ack's reply %+v (%d confirms); want the section:\n%s", r, rep.confirms, want)
	}
	if inc, _ := st.Get(ctx, "INC-1"); inc.Status != "acknowledged" {
		t.Fatalf("INC-1 %s: the change itself must stand", inc.Status)
	}

	rep.err = nil
	if r := h.Handle(ctx, commands.Request{UserID: "U1", ChannelID: "C1", Text: "incident resolve INC-1 fixed"}); notSafe(r) != "" || rep.confirms != 2 {
		t.Fatalf("a confirmed change's reply %+v (%d confirms)", r, rep.confirms)
	}
	for _, text := range []string{"incident show INC-1", "help", "incident merge x y"} {
		if r := h.Handle(ctx, commands.Request{UserID: "U1", ChannelID: "C1", Text: text}); notSafe(r) != "" || rep.confirms != 2 {
			t.Fatalf("%q changed nothing but was confirmed (%d): %+v", text, rep.confirms, r)
		}
	}

	rep.on, rep.marks = false, 0
	h.Handle(ctx, commands.Request{UserID: "U1", ChannelID: "C1", Text: "incident ack INC-1"})
	if rep.marks != 0 || rep.confirms != 2 {
		t.Fatalf("without min_replicas_acked: %d marks, %d confirms", rep.marks, rep.confirms)
	}
}
