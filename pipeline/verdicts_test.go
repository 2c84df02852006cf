package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// judged diagnoses by judging fixed inputs: the brokers of every pipeline but "gone" are down.
type judged struct{ calls int }

func (j *judged) Diagnose(_ context.Context, name string) (pipeline.Verdict, error) {
	j.calls++
	if name == "gone" {
		return pipeline.Verdict{}, fmt.Errorf("unknown pipeline %q", name)
	}
	return pipeline.Judge(pipeline.Inputs{Pipeline: name, LagErr: fmt.Errorf("metadata: %w", kafka.ErrUnreachable)}), nil
}

// TestAutomaticDiagnosis: an incident opened for a pipeline is diagnosed from the queue, once,
// its verdict stored as data in its thread (the whole verdict in the outbox, its headline in
// the timeline); a claim taken over after its lease posts no second verdict; a verdict asked
// for again posts every time; a pipeline the diagnosis cannot judge is not tried again.
func TestAutomaticDiagnosis(t *testing.T) {
	ctx := context.Background()
	st, c := newStore(t)
	d := &judged{}
	vs := &pipeline.Verdicts{Diagnoser: d, Store: st, Lease: time.Minute}
	open := func(key, p string) string {
		t.Helper()
		out, err := st.RecordAlert(ctx, state.AlertRecord{Key: key, Fingerprint: key, Title: "client replied sms", Severity: 3,
			Pipeline: p, Channel: "C0PIPE", Source: "alertmanager"})
		if err != nil || out.Result != state.ResultOpened {
			t.Fatalf("record %s: %+v %v", key, out, err)
		}
		return out.Incident
	}
	id := open("k1", "sms-replies")
	outbox(t, st) // the root

	due, err := vs.Due(ctx, 4)
	if err != nil || len(due) != 1 || due[0] != (state.Waiting{Incident: id, Pipeline: "sms-replies"}) {
		t.Fatalf("due %v %v", due, err)
	}
	if err := vs.Automatic(ctx, due[0]); err != nil {
		t.Fatal(err)
	}
	ds, err := st.ReadOutbox(ctx, "test", false, 10, -1)
	if err != nil || len(ds) != 1 || ds[0].Name != state.EventDiagnosis {
		t.Fatalf("outbox %+v %v, want one diagnosis", ds, err)
	}
	posted, ok := pipeline.DecodeVerdict(ds[0].Detail)
	want := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", LagErr: fmt.Errorf("metadata: %w", kafka.ErrUnreachable)})
	if !ok || posted.Again || len(posted.Verdict.Causes) != 1 || posted.Verdict.Causes[0].ID != pipeline.CauseBrokerDown ||
		!reflect.DeepEqual(posted.Verdict.Headline(), want.Headline()) {
		t.Fatalf("the thread's verdict %+v (%v), want the judgment of brokers down", posted, ok)
	}
	tl, err := st.Timeline(ctx, id, 50)
	if err != nil {
		t.Fatal(err)
	}
	var heads []pipeline.Headline
	for _, e := range tl {
		if e.Name == state.EventDiagnosis {
			h, ok := pipeline.DecodeHeadline(e.Detail)
			if !ok {
				t.Fatalf("the timeline's diagnosis is no headline: %q", e.Detail)
			}
			heads = append(heads, h)
		}
	}
	if len(heads) != 1 || !reflect.DeepEqual(heads[0], want.Headline()) {
		t.Fatalf("the timeline keeps %+v, want the verdict's headline %+v", heads, want.Headline())
	}
	outbox(t, st)

	// Done: nothing is due any more, even after the lease.
	c.Add(2 * time.Minute)
	if due, err := vs.Due(ctx, 4); err != nil || len(due) != 0 {
		t.Fatalf("after the diagnosis, due %v %v", due, err)
	}
	// A replica that took the claim over after a lease (the first died after posting) posts
	// nothing more: the verdict is posted once per incident.
	if err := vs.Automatic(ctx, state.Waiting{Incident: id, Pipeline: "sms-replies"}); err != nil {
		t.Fatal(err)
	}
	if got := outbox(t, st); len(got) != 0 {
		t.Fatalf("a second automatic diagnosis posted %q", got)
	}
	// Asked for again: posted every time, marked as asked.
	for range 2 {
		if err := vs.Post(ctx, id, "sms-replies", true); err != nil {
			t.Fatal(err)
		}
	}
	ds, err = st.ReadOutbox(ctx, "test", false, 10, -1)
	if err != nil || len(ds) != 2 {
		t.Fatalf("asked twice: %d deliveries %v", len(ds), err)
	}
	if p, ok := pipeline.DecodeVerdict(ds[1].Detail); !ok || !p.Again {
		t.Fatalf("a verdict asked for again reads %+v", p)
	}
	outbox(t, st)

	// A pipeline the diagnosis cannot judge: the error is reported, and it is not tried again.
	gone := open("k2", "gone")
	outbox(t, st)
	due, err = vs.Due(ctx, 4)
	if err != nil || len(due) != 1 || due[0].Incident != gone {
		t.Fatalf("due %v %v", due, err)
	}
	if err := vs.Automatic(ctx, due[0]); err == nil {
		t.Fatal("the diagnosis of an unknown pipeline reported no error")
	}
	c.Add(2 * time.Minute)
	if due, err := vs.Due(ctx, 4); err != nil || len(due) != 0 {
		t.Fatalf("an undiagnosable incident is due again: %v %v", due, err)
	}
	if got := outbox(t, st); len(got) != 0 {
		t.Fatalf("a failed diagnosis posted %q", got)
	}

	// Shutdown cuts a diagnosis short: it stays in the queue for the next claim.
	cut := open("k3", "sms-replies")
	outbox(t, st)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	before := d.calls
	err = vs.Automatic(cancelled, state.Waiting{Incident: cut, Pipeline: "sms-replies"})
	if d.calls != before+1 || !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled diagnosis returned %v", err)
	}
	if due, err := vs.Due(ctx, 4); err != nil || len(due) != 1 || due[0].Incident != cut {
		t.Fatalf("a diagnosis shutdown cut short is not due: %v %v", due, err)
	}
}
