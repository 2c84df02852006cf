package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

// Verdicts posts verdicts into incidents' threads as data: the automatic diagnosis of every
// incident opened for a pipeline, which waits in the state's queue from the moment the record
// script opens it (an alert, a failing probe or detection), and the verdicts asked for again
// (`incident diagnose`). The thread's message and the timeline's line are worded when they are
// shown (bot and commands), from the verdict as stored here.
type Verdicts struct {
	Diagnoser interface {
		Diagnose(ctx context.Context, pipeline string) (Verdict, error)
	}
	Store VerdictStore
	// Lease is how long a claimed diagnosis is held before another replica may take it over
	// (its claimant died); at least the time a diagnosis may take.
	Lease time.Duration
}

// VerdictStore is where verdicts wait and go (state.Store).
type VerdictStore interface {
	ClaimDiagnoses(ctx context.Context, n int, lease time.Duration) ([]state.Waiting, error)
	DoneDiagnosis(ctx context.Context, id string) error
	NoteWithSummary(ctx context.Context, id, ev, actor, summary, detail, once string) (bool, error)
}

// PostedVerdict is a verdict as it travels to the thread (an EventDiagnosis's Detail): Again
// marks one somebody asked for after the automatic one.
type PostedVerdict struct {
	Verdict Verdict `json:"verdict"`
	Again   bool    `json:"again,omitempty"`
}

// Headline is the verdict in brief, as the incident's timeline keeps it (an EventDiagnosis's
// Detail there): enough for its one line, without the evidence.
type Headline struct {
	Pipeline    string       `json:"pipeline"`
	Healthy     bool         `json:"healthy,omitempty"`
	Risks       int          `json:"risks,omitempty"`
	Symptoms    []string     `json:"symptoms,omitempty"` // IDs, as in the verdict
	Causes      []CauseBrief `json:"causes,omitempty"`
	Unexplained []string     `json:"unexplained,omitempty"`
	RuledOut    int          `json:"ruled_out,omitempty"`
	Next        NextStep     `json:"next,omitempty"`
}

// CauseBrief is a cause in a Headline.
type CauseBrief struct {
	ID         string     `json:"id"`
	Confidence Confidence `json:"confidence"`
}

// Headline is v in brief.
func (v Verdict) Headline() Headline {
	h := Headline{Pipeline: v.Pipeline, Healthy: v.Healthy, Risks: len(v.Risks), Unexplained: v.Unexplained, Next: v.Next}
	for _, s := range v.Symptoms {
		h.Symptoms = append(h.Symptoms, s.ID)
	}
	for _, c := range v.Causes {
		h.Causes = append(h.Causes, CauseBrief{ID: c.ID, Confidence: c.Confidence})
	}
	for _, c := range v.Checked {
		if c.Status == CheckRuledOut {
			h.RuledOut++
		}
	}
	return h
}

// Post diagnoses the pipeline and posts the verdict into the incident's thread: the automatic
// one once per incident, one asked for again (again set) every time.
func (vs *Verdicts) Post(ctx context.Context, incident, pipeline string, again bool) error {
	_, err := vs.post(ctx, incident, pipeline, again)
	return err
}

// post is Post, saying whether the diagnosis itself succeeded (an error then is the store's).
func (vs *Verdicts) post(ctx context.Context, incident, pipeline string, again bool) (bool, error) {
	v, err := vs.Diagnoser.Diagnose(ctx, pipeline)
	if err != nil {
		return false, err
	}
	detail, err := json.Marshal(PostedVerdict{Verdict: v, Again: again})
	if err != nil {
		return false, fmt.Errorf("encode the verdict: %w", err)
	}
	summary, err := json.Marshal(v.Headline())
	if err != nil {
		return false, fmt.Errorf("encode the verdict: %w", err)
	}
	once := "diagnosis"
	if again {
		once = ""
	}
	_, err = vs.Store.NoteWithSummary(ctx, incident, state.EventDiagnosis, "streamwatch", string(summary), string(detail), once)
	return true, err
}

// Due claims up to n incidents whose automatic diagnosis is due.
func (vs *Verdicts) Due(ctx context.Context, n int) ([]state.Waiting, error) {
	return vs.Store.ClaimDiagnoses(ctx, n, vs.Lease)
}

// Automatic posts the automatic diagnosis of an incident Due handed out and takes it out of
// the queue. A diagnosis that fails on its own (an unknown pipeline) is not tried again; one
// the store did not take, or that shutdown cut short, is, when its claim ends.
func (vs *Verdicts) Automatic(ctx context.Context, w state.Waiting) error {
	diagnosed, err := vs.post(ctx, w.Incident, w.Pipeline, false)
	if ctx.Err() != nil || (diagnosed && err != nil) {
		return err
	}
	return errors.Join(err, vs.Store.DoneDiagnosis(ctx, w.Incident))
}

// DecodeVerdict reads an EventDiagnosis's Detail as Post stored it.
func DecodeVerdict(detail string) (PostedVerdict, bool) {
	var p PostedVerdict
	if err := json.Unmarshal([]byte(detail), &p); err != nil || p.Verdict.Pipeline == "" {
		return PostedVerdict{}, false
	}
	return p, true
}

// DecodeHeadline reads an EventDiagnosis's Detail as the timeline keeps it.
func DecodeHeadline(detail string) (Headline, bool) {
	var h Headline
	if err := json.Unmarshal([]byte(detail), &h); err != nil || h.Pipeline == "" {
		return Headline{}, false
	}
	return h, true
}
