package state_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

// outbox reads the undelivered entries (and completes them, roots with a made-up ts).
func outbox(t *testing.T, s *state.Store) []state.Delivery {
	t.Helper()
	ctx := context.Background()
	var out []state.Delivery
	for {
		ds, err := s.ReadOutbox(ctx, "r", false, 200, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) == 0 {
			return out
		}
		for _, d := range ds {
			ts := ""
			if d.Kind == state.KindRoot {
				ts = fmt.Sprintf("1700000000.%06d", len(out))
			}
			if err := s.Complete(ctx, d, ts, d.Channel); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		}
	}
}

func detection(pipeline string) state.AlertRecord {
	return state.AlertRecord{Key: "detect:" + pipeline, Fingerprint: "detect:" + pipeline, Title: pipeline + ": checkpoint stale",
		Severity: 2, Pipeline: pipeline, Channel: "C0PIPE", Source: state.SourceDetect, Detail: "checkpoint stale"}
}

// TestCorrelationJoinsThePipelinesIncident: with correlation on, an alert of a pipeline joins
// the incident streamwatch opened for it (one root, the reason in the timeline and the thread,
// later duplicates and the resolution there too); streamwatch's own symptom joins an
// alert-opened incident; with correlation off each key opens its own.
func TestCorrelationJoinsThePipelinesIncident(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.CorrelatePipeline = true
	opened := record(t, s, detection("sms-replies"))[0]
	if opened.Result != state.ResultOpened {
		t.Fatalf("detection: %+v", opened)
	}
	outbox(t, s)
	c.Add(time.Minute)

	a := alert("client replied sms|sms-replies", "fp-am-1")
	a.Severity = 1
	joined := record(t, s, a)[0]
	if joined.Result != state.ResultCorrelated || joined.Incident != opened.Incident {
		t.Fatalf("alert of the same pipeline: %+v, want correlated into %s", joined, opened.Incident)
	}
	ds := outbox(t, s)
	if len(ds) != 1 || ds[0].Name != "correlated" || ds[0].Kind != state.KindEvent || ds[0].Title != "client replied sms" ||
		ds[0].Pipeline != "sms-replies" || !ds[0].Since.Equal(time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)) {
		t.Fatalf("outbox after the join: %+v", ds)
	}
	inc, err := s.Get(ctx, opened.Incident)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Count != 2 || inc.Severity != 1 || len(inc.Alerts) != 2 {
		t.Fatalf("incident after the join: count %d, severity %d, alerts %v", inc.Count, inc.Severity, inc.Alerts)
	}
	tl, _ := s.Timeline(ctx, opened.Incident, 10)
	if last := tl[len(tl)-1]; last.Name != "correlated" || last.Pipeline != "sms-replies" || last.Since.IsZero() {
		t.Fatalf("timeline: %+v", tl)
	}
	// A duplicate of the alert goes to the same incident; an alert of another pipeline does not.
	if d := record(t, s, a)[0]; d.Result != state.ResultDuplicate || d.Incident != opened.Incident {
		t.Fatalf("duplicate: %+v", d)
	}
	other := alert("lag|invoices", "fp-inv")
	other.Pipeline = "invoices"
	if o := record(t, s, other)[0]; o.Result != state.ResultOpened {
		t.Fatalf("another pipeline's alert: %+v", o)
	}
	// An alert without a pipeline opens its own.
	lone := alert("disk", "fp-disk")
	lone.Pipeline = ""
	if o := record(t, s, lone)[0]; o.Result != state.ResultOpened {
		t.Fatalf("an alert without a pipeline: %+v", o)
	}
	// The other pipeline's alert-opened incident absorbs that pipeline's probe failure.
	probe := state.AlertRecord{Key: "probe:invoices", Fingerprint: "probe:invoices", Title: "Checkpoint probe failed for invoices",
		Severity: 2, Pipeline: "invoices", Channel: "C0PIPE", Source: state.SourceProbe}
	if o := record(t, s, probe)[0]; o.Result != state.ResultCorrelated {
		t.Fatalf("probe failure of a pipeline with an alert-opened incident: %+v", o)
	}
	// …but a second alert of that pipeline opens its own: alerts only join streamwatch's.
	second := alert("other|invoices", "fp-inv-2")
	second.Pipeline = "invoices"
	if o := record(t, s, second)[0]; o.Result != state.ResultOpened {
		t.Fatalf("a second alert of a pipeline whose incident an alert opened: %+v", o)
	}

	// Once the detection incident is resolved, the pipeline's next alert opens a new one.
	if err := s.Resolve(ctx, opened.Incident, "U1", ""); err != nil {
		t.Fatal(err)
	}
	fresh := alert("other|sms-replies", "fp-am-2")
	if o := record(t, s, fresh)[0]; o.Result != state.ResultOpened {
		t.Fatalf("after the resolution: %+v", o)
	}

	// Off: every key opens its own.
	off, _, _, _ := newStore(t)
	record(t, off, detection("sms-replies"))
	if o := record(t, off, a)[0]; o.Result != state.ResultOpened {
		t.Fatalf("correlation off: %+v", o)
	}
}

// TestOwnSymptomsAreNotFlooded: in a channel that floods, streamwatch's own symptom still opens
// its incident (and counts for nothing), and an alert of that pipeline then joins it rather
// than the flood.
func TestOwnSymptomsAreNotFlooded(t *testing.T) {
	s, _, _, _ := newStore(t)
	s.CorrelatePipeline = true
	s.FloodLimit, s.FloodQuietFor = 3, time.Minute
	var storm []state.AlertRecord
	for i := range 6 {
		a := distinct(i)
		a.Pipeline = ""
		storm = append(storm, a)
	}
	if r := results(record(t, s, storm...)); r[state.ResultFlooded] != 3 {
		t.Fatalf("storm: %v, want a flood", r)
	}
	d := record(t, s, detection("sms-replies"))[0]
	if d.Result != state.ResultOpened {
		t.Fatalf("detection during a flood: %+v, want its own incident", d)
	}
	if o := record(t, s, alert("client replied sms|sms-replies", "fp-1"))[0]; o.Result != state.ResultCorrelated || o.Incident != d.Incident {
		t.Fatalf("the pipeline's alert during a flood: %+v, want it in %s", o, d.Incident)
	}
}

// TestDetectionRecoveryResolves: updates edit the root only; recovery posts once, names what
// still fires and keeps the incident open; the alert's resolution then queues the incident's
// resolution at once. An acknowledged incident never resolves by itself.
func TestDetectionRecoveryResolves(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.CorrelatePipeline = true
	d := record(t, s, detection("sms-replies"))[0]
	if err := s.MarkQuiet(ctx, d.Incident); err != nil {
		t.Fatal(err)
	}
	outbox(t, s)
	u, err := s.UpdateDetected(ctx, d.Incident, "no checkpoint commit for 6m while 120 records wait", "sms-replies: no progress")
	if err != nil || u.Status != state.StatusOpen || !u.Edited {
		t.Fatalf("update: %+v %v", u, err)
	}
	if u, _ := s.UpdateDetected(ctx, d.Incident, "no checkpoint commit for 6m while 120 records wait", "sms-replies: no progress"); u.Edited {
		t.Fatal("an unchanged symptom edited the root again")
	}
	ds := outbox(t, s)
	if len(ds) != 1 || ds[0].Kind != state.KindUpdate {
		t.Fatalf("outbox after updates: %+v, want one root edit", ds)
	}
	inc, _ := s.Get(ctx, d.Incident)
	if inc.Title != "sms-replies: no progress" || inc.Detect != "no checkpoint commit for 6m while 120 records wait" || inc.DetectState != "active" {
		t.Fatalf("incident: %q %q %q", inc.Title, inc.Detect, inc.DetectState)
	}

	a := alert("client replied sms|sms-replies", "fp-am-1")
	record(t, s, a)
	outbox(t, s)
	c.Add(time.Minute)
	rec, err := s.RecoverDetected(ctx, d.Incident, "detect:sms-replies", "Recovered: the checkpoint committed batch 9")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Resolves || rec.Firing != 1 || len(rec.Names) != 1 || rec.Names[0] != "client replied sms" {
		t.Fatalf("recovery with an alert firing: %+v", rec)
	}
	ds = outbox(t, s)
	if len(ds) != 1 || ds[0].Name != "recovered" || ds[0].Detail != "Recovered: the checkpoint committed batch 9" ||
		ds[0].Firing != 1 || strings.Join(ds[0].Names, ",") != "client replied sms" {
		t.Fatalf("recovery note: %+v", ds)
	}
	if due, _ := s.AutoResolveDue(ctx); len(due) != 0 {
		t.Fatalf("resolved while an alert fires: %v", due)
	}
	a.Resolved = true
	record(t, s, a)
	due, err := s.AutoResolveDue(ctx)
	if err != nil || len(due) != 1 || due[0] != d.Incident {
		t.Fatalf("after the alert resolved: %v %v, want %s resolved", due, err, d.Incident)
	}

	// Acknowledged: recovery says so, nothing resolves.
	d2 := record(t, s, detection("invoices"))[0]
	if err := s.Acknowledge(ctx, d2.Incident, "U0ALICE"); err != nil {
		t.Fatal(err)
	}
	rec, _ = s.RecoverDetected(ctx, d2.Incident, "detect:invoices", "Recovered")
	if rec.Resolves || rec.Firing != 0 {
		t.Fatalf("acknowledged incident: %+v", rec)
	}
	if due, _ := s.AutoResolveDue(ctx); len(due) != 0 {
		t.Fatalf("an acknowledged incident resolved by itself: %v", due)
	}

	// No alert, nobody acknowledged: recovery resolves it.
	d3 := record(t, s, detection("payments"))[0]
	rec, _ = s.RecoverDetected(ctx, d3.Incident, "detect:payments", "Recovered")
	if !rec.Resolves {
		t.Fatalf("lone detection incident: %+v", rec)
	}
	if due, _ := s.AutoResolveDue(ctx); len(due) != 1 || due[0] != d3.Incident {
		t.Fatalf("lone detection incident: resolved %v", due)
	}
	if u, _ := s.UpdateDetected(ctx, d3.Incident, "x", ""); u.Status != state.StatusResolved {
		t.Fatalf("update of a resolved incident: %+v", u)
	}
}

// TestDetectRecordKeepsTheLaterRound: two replicas whose rounds overlap: the earlier round
// cannot overwrite the later one's record.
func TestDetectRecordKeepsTheLaterRound(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	if ok, err := s.SaveDetectRecord(ctx, "p", state.DetectRecord{Round: 2000, State: []byte(`{"n":2}`)}); !ok || err != nil {
		t.Fatalf("save: %v %v", ok, err)
	}
	if ok, _ := s.SaveDetectRecord(ctx, "p", state.DetectRecord{Round: 1000, State: []byte(`{"n":1}`)}); ok {
		t.Fatal("an earlier round overwrote a later one")
	}
	r, err := s.DetectRecord(ctx, "p")
	if err != nil || r.Round != 2000 || string(r.State) != `{"n":2}` {
		t.Fatalf("record: %+v %v", r, err)
	}
	if all, _ := s.DetectRecords(ctx, "p", "q"); len(all) != 1 {
		t.Fatalf("records: %v", all)
	}
}

// TestSilencedIncidentHoldsDetectionNews: while an incident streamwatch opened is silenced
// (issue 17), an alert that joins it, detection's news, its root edits and its recovery post
// nothing; when the silence ends, one update brings them, in order.
func TestSilencedIncidentHoldsDetectionNews(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.CorrelatePipeline = true
	id := record(t, s, detection("sms-replies"))[0].Incident
	outbox(t, s)
	if _, err := s.SilenceIncident(ctx, id, c.Now().Add(time.Hour), state.Maker{Name: "ana", ID: "U1"}, "maintenance"); err != nil {
		t.Fatal(err)
	}
	outbox(t, s) // the silence's own note
	c.Add(time.Minute)
	if got := record(t, s, alert("client replied sms|sms-replies", "fp-am-1"))[0]; got.Result != state.ResultCorrelated || got.Incident != id {
		t.Fatalf("alert while silenced: %+v", got)
	}
	if err := s.NoteDetected(ctx, id, "detected", "Now also lag over 15m"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateDetected(ctx, id, "checkpoint stale: 12 records wait", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecoverDetected(ctx, id, "detect:sms-replies", "Recovered: progress resumed"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pump(ctx); err != nil {
		t.Fatal(err)
	}
	if got := outbox(t, s); len(got) != 0 {
		t.Fatalf("%d deliveries while silenced, want none: %+v", len(got), got)
	}
	tl, err := s.Timeline(ctx, id, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(tl), "correlated") {
		t.Errorf("the join is not in the timeline: %+v", tl)
	}

	c.Add(2 * time.Hour)
	if _, err := s.ExpireSilences(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pump(ctx); err != nil {
		t.Fatal(err)
	}
	var news []state.News
	for _, d := range outbox(t, s) {
		if d.Kind == state.KindFlush && d.Name == "news" {
			news = d.News
		}
	}
	var kinds []string
	for _, n := range news {
		kinds = append(kinds, n.Kind)
	}
	if strings.Join(kinds, ",") != "correlated,detected,recovered" {
		t.Fatalf("news after the silence: %+v", news)
	}
}

// TestCorrelatedAlertKeepsSeveritySetByHand: a severity a person set stays when an alert of the
// pipeline joins the incident, as it does for the incident's own duplicates.
func TestCorrelatedAlertKeepsSeveritySetByHand(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	s.CorrelatePipeline = true
	opened := record(t, s, detection("sms-replies"))[0]
	if err := s.SetSeverity(ctx, opened.Incident, 4, "U0ALICE"); err != nil {
		t.Fatal(err)
	}
	a := alert("client replied sms|sms-replies", "fp-am-1")
	a.Severity = 1
	if joined := record(t, s, a)[0]; joined.Result != state.ResultCorrelated {
		t.Fatalf("alert of the same pipeline: %+v", joined)
	}
	inc, err := s.Get(ctx, opened.Incident)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Severity != 4 || inc.Count != 2 {
		t.Fatalf("after the join: severity %d (set by hand: 4), count %d", inc.Severity, inc.Count)
	}
}
