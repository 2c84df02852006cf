package state_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// labelled is an alert with labels and annotations, as Alertmanager sends them.
func labelled(key, fp, summary string, labels map[string]string) state.AlertRecord {
	a := alert(key, fp)
	a.Title = summary
	a.Detail = summary
	a.Labels = labels
	a.Annotations = map[string]string{"summary": summary}
	return a
}

// drain reads what the outbox holds (everything not yet read) and acknowledges it.
func drain(t *testing.T, s *state.Store) []state.Delivery {
	t.Helper()
	ctx := context.Background()
	ds, err := s.ReadOutbox(ctx, "r", false, 1000, -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if err := s.Complete(ctx, d, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	return ds
}

// pumped moves what is due (a window on) into the outbox and returns it.
func pumped(t *testing.T, s *state.Store, c *clock) []state.Delivery {
	t.Helper()
	c.Add(s.Coalesce)
	if _, err := s.Pump(context.Background()); err != nil {
		t.Fatal(err)
	}
	return drain(t, s)
}

func newsOf(ds []state.Delivery) []string {
	var out []string
	for _, d := range ds {
		if d.Kind == state.KindFlush && d.Name == "news" {
			for _, n := range d.News {
				out = append(out, n.Kind+": "+n.Detail)
			}
		}
	}
	return out
}

// TestReSendsAreNotNews: Alertmanager's group re-sends (the same alerts again) only count;
// a new alert, a changed one, one that resolves while others fire and one that fires again
// are news, each once.
func TestReSendsAreNotNews(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	a := labelled("k", "fp-a", "lag on p0", map[string]string{"alertname": "Lag", "partition": "0"})
	b := labelled("k", "fp-b", "lag on p1", map[string]string{"alertname": "Lag", "partition": "1"})
	record(t, s, a)
	drain(t, s) // the root
	for range 3 {
		record(t, s, a) // a group re-send
	}
	ds := pumped(t, s, c)
	if len(ds) != 1 || ds[0].Kind != state.KindFlush || ds[0].Name != "" || ds[0].Count != 3 {
		t.Fatalf("re-sends: %+v, want one flush without news", ds)
	}
	record(t, s, a, b) // the group with a new alert
	record(t, s, a, b)
	if got := newsOf(pumped(t, s, c)); len(got) != 1 || got[0] != "joined: lag on p1" {
		t.Fatalf("news of a new alert: %q", got)
	}
	changed := a
	changed.Title, changed.Detail, changed.Annotations = "lag on p0 rising", "lag on p0 rising", map[string]string{"summary": "lag on p0 rising"}
	relabelled := b
	relabelled.Labels = map[string]string{"alertname": "Lag", "partition": "1", "broker": "b2"}
	record(t, s, changed, relabelled)
	record(t, s, changed, relabelled)
	if got := newsOf(pumped(t, s, c)); len(got) != 2 || got[0] != "annotations: lag on p0 rising" || got[1] != "labels: lag on p1" {
		t.Fatalf("news of changed alerts: %q", got)
	}
	gone := changed
	gone.Resolved = true
	record(t, s, gone)
	record(t, s, gone) // Alertmanager repeats resolved alerts too
	if got := newsOf(pumped(t, s, c)); len(got) != 1 || got[0] != "resolved: lag on p0 rising" {
		t.Fatalf("news of a resolved alert: %q", got)
	}
	record(t, s, changed)
	if got := newsOf(pumped(t, s, c)); len(got) != 1 || got[0] != "again: lag on p0 rising" {
		t.Fatalf("news of an alert firing again: %q", got)
	}
	tl, dropped, err := s.FullTimeline(ctx, "INC-1")
	if err != nil || dropped != 0 {
		t.Fatal(err, dropped)
	}
	var evs []string
	for _, e := range tl {
		evs = append(evs, e.Name)
	}
	want := "opened alert_joined alert_changed alert_changed alert_resolved alert_firing_again"
	if strings.Join(evs, " ") != want {
		t.Fatalf("timeline %q, want %q", strings.Join(evs, " "), want)
	}
	ctxs, err := s.AlertContexts(ctx, "INC-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := ctxs["fp-b"]; got.Labels["broker"] != "b2" || got.Annotations["summary"] != "lag on p1" {
		t.Fatalf("context of fp-b: %+v", got)
	}
	if got := ctxs["fp-a"]; got.Title != "lag on p0 rising" {
		t.Fatalf("context of fp-a: %+v", got)
	}
}

// TestOpeningGroupIsNoNews: the alerts of the webhook that opens an incident are its opening
// (the root), not news; their labels are kept all the same.
func TestOpeningGroupIsNoNews(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	a := labelled("k", "fp-a", "lag on p0", map[string]string{"alertname": "Lag", "partition": "0"})
	b := labelled("k", "fp-b", "lag on p1", map[string]string{"alertname": "Lag", "partition": "1"})
	if out := record(t, s, a, b); out[0].Result != state.ResultOpened || out[1].Result != state.ResultDuplicate {
		t.Fatalf("the opening group: %+v", out)
	}
	drain(t, s)
	if ds := pumped(t, s, c); len(newsOf(ds)) != 0 {
		t.Fatalf("news of the opening group: %+v", ds)
	}
	if cs, _ := s.AlertContexts(ctx, "INC-1"); cs["fp-b"].Labels["partition"] != "1" {
		t.Fatalf("contexts %+v", cs)
	}
}

// TestAcknowledgedIncidentStaysQuiet: after ack, 100 identical duplicates make root updates
// only (flushes without news).
func TestAcknowledgedIncidentStaysQuiet(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	record(t, s, alert("k", "fp"))
	if err := s.Acknowledge(ctx, "INC-1", "alice"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	for range 100 {
		record(t, s, alert("k", "fp"))
	}
	ds := pumped(t, s, c)
	if len(ds) != 1 || ds[0].Name != "" || len(newsOf(ds)) != 0 {
		t.Fatalf("after ack: %+v", ds)
	}
}

// TestIncidentSilenceHoldsUpdatesUntilItEnds: nothing leaves for Slack while the incident is
// silenced; at the end the thread says so, with the count, and the news that waited follows.
func TestIncidentSilenceHoldsUpdatesUntilItEnds(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.Retention = time.Hour
	record(t, s, labelled("k", "fp-a", "a", map[string]string{"alertname": "A"}))
	drain(t, s)
	c.Add(time.Second)
	sid, err := s.SilenceIncident(ctx, "INC-1", c.Now().Add(time.Minute), state.Maker{Name: "alice", ID: "U0ALICE"}, "known: deploy")
	if err != nil {
		t.Fatal(err)
	}
	if ds := drain(t, s); len(ds) != 1 || ds[0].Name != "silenced" || ds[0].Silence != sid || ds[0].Reason != "known: deploy" || !ds[0].Until.Equal(c.Now().Add(time.Minute)) {
		t.Fatalf("silencing: %+v", ds)
	}
	inc, _ := s.Get(ctx, "INC-1")
	if inc.Silence == nil || inc.Silence.ID != sid || inc.Silence.By != "alice" {
		t.Fatalf("silence on the incident: %+v", inc.Silence)
	}
	for range 5 {
		record(t, s, labelled("k", "fp-a", "a", map[string]string{"alertname": "A"}))
	}
	record(t, s, labelled("k", "fp-b", "b", map[string]string{"alertname": "B"}))
	if ds := pumped(t, s, c); len(ds) != 0 {
		t.Fatalf("posted while silenced: %+v", ds)
	}
	if ids, _ := s.ExpireSilences(ctx); len(ids) != 0 {
		t.Fatalf("expired early: %v", ids)
	}
	c.Add(time.Minute)
	if ids, err := s.ExpireSilences(ctx); err != nil || len(ids) != 1 || ids[0] != sid {
		t.Fatalf("expiry: %v %v", ids, err)
	}
	if ids, _ := s.ExpireSilences(ctx); len(ids) != 0 {
		t.Fatalf("expired twice: %v", ids)
	}
	ds := drain(t, s)
	if len(ds) != 1 || ds[0].Name != "silence_expired" || ds[0].Count != 6 || ds[0].Silence != sid || ds[0].By != "alice" {
		t.Fatalf("expiry note: %+v", ds)
	}
	if got := newsOf(pumped(t, s, c)); len(got) != 1 || got[0] != "joined: b" {
		t.Fatalf("news after the silence: %q", got)
	}
	if inc, _ := s.Get(ctx, "INC-1"); inc.Silence != nil || inc.Count != 7 {
		t.Fatalf("after the silence: %+v count %d", inc.Silence, inc.Count)
	}
	sil, err := s.GetSilence(ctx, sid)
	if err != nil || sil.Ended.IsZero() || sil.Incident != "INC-1" || sil.Reason != "known: deploy" {
		t.Fatalf("the silence after it ended: %+v %v", sil, err)
	}
}

// TestLabelSilenceAcrossReplicas: a silence one replica makes holds on another at its next
// alert; a matching alert opens nothing and is listed under the silence; ending it early lets
// alerts open incidents again.
func TestLabelSilenceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	rdb1, prefix := testredis.Client(t)
	rdb2, _ := testredis.Client(t)
	s1, s2 := state.New(rdb1, prefix), state.New(rdb2, prefix)
	s1.Retention = time.Hour
	match := labelled("k1", "fp1", "lag", map[string]string{"alertname": "KafkaLag", "pipeline": "sms-replies"})
	other := labelled("k2", "fp2", "lag", map[string]string{"alertname": "KafkaLag", "pipeline": "orders"})
	// s2 reads the (empty) silences before s1 makes one.
	if o := record(t, s2, other)[0]; o.Result != state.ResultOpened {
		t.Fatalf("before the silence: %+v", o)
	}
	ms, err := state.ParseMatchers("alertname=KafkaLag,pipeline=~sms-.*")
	if err != nil {
		t.Fatal(err)
	}
	sid, err := s1.CreateSilence(ctx, ms, time.Now().Add(time.Hour), state.Maker{Name: "alice", ID: "U0ALICE"}, "maintenance")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		o := record(t, s2, match)[0]
		if o.Result != state.ResultSilenced || o.Incident != "" || o.Silence != sid {
			t.Fatalf("matching alert on the other replica: %+v", o)
		}
	}
	if o := record(t, s2, other)[0]; o.Result != state.ResultDuplicate {
		t.Fatalf("alert the silence does not match: %+v", o)
	}
	resolved := match
	resolved.Resolved = true
	if o := record(t, s2, resolved)[0]; o.Result != state.ResultIgnored {
		t.Fatalf("a resolved alert is not silenced: %+v", o)
	}
	list, err := s1.ActiveSilences(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("active silences %+v %v", list, err)
	}
	sil := list[0]
	if sil.ID != sid || sil.Kind != state.SilenceLabels || sil.Matchers != "alertname=KafkaLag,pipeline=~sms-.*" || sil.By != "alice" ||
		sil.Reason != "maintenance" || sil.Hits != 3 || len(sil.Alerts) != 1 || sil.Alerts[0].Count != 3 || sil.Alerts[0].Key != "k1" {
		t.Fatalf("silence %+v alerts %+v", sil, sil.Alerts)
	}
	if open, _ := s1.ListOpen(ctx, ""); len(open) != 1 {
		t.Fatalf("open incidents %d, want only the other alert's", len(open))
	}
	if _, _, err := s1.ExpireSilence(ctx, sid, "bob"); err != nil {
		t.Fatal(err)
	}
	var se *state.SilenceError
	if _, _, err := s1.ExpireSilence(ctx, sid, "bob"); !errors.As(err, &se) || se.Reason != "expired" {
		t.Fatalf("ending it twice: %v", err)
	}
	if o := record(t, s2, match)[0]; o.Result != state.ResultOpened {
		t.Fatalf("after the silence ended: %+v", o)
	}
	if ttl, _ := rdb1.PTTL(ctx, "{"+prefix+"}:silence:"+sid).Result(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("an ended silence's TTL %v, want the retention", ttl)
	}
	if ttl, _ := rdb1.PTTL(ctx, "{"+prefix+"}:silence:"+sid+":alerts").Result(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("its silenced alerts' TTL %v, want the retention", ttl)
	}
}

func TestParseMatchers(t *testing.T) {
	for text, want := range map[string]string{
		"alertname=KafkaLag":                         "alertname=KafkaLag",
		"alertname=KafkaLag, pipeline=~sms-.*":       "alertname=KafkaLag,pipeline=~sms-.*",
		`alertname="client replied sms",severity=3`:  "alertname=client replied sms,severity=3",
		"partition=~[0-9]{1,3},topic=client.replies": "partition=~[0-9]{1,3},topic=client.replies",
	} {
		ms, err := state.ParseMatchers(text)
		if err != nil || state.MatchersText(ms) != want {
			t.Errorf("ParseMatchers(%q) = %q, %v; want %q", text, state.MatchersText(ms), err, want)
		}
	}
	for _, bad := range []string{"", "KafkaLag", "=x", "a=", "a=~(", "a=1,a=2", "x a=1"} {
		if _, err := state.ParseMatchers(bad); err == nil {
			t.Errorf("ParseMatchers(%q) accepted", bad)
		}
	}
}

// TestEscalationOnceForUnacknowledged: after `after`, an open incident of an escalating
// severity is escalated once; acknowledged, silenced and other severities never are.
func TestEscalationOnceForUnacknowledged(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	for i, sev := range []int{1, 1, 3, 1} {
		a := alert(fmt.Sprint("k", i), "fp")
		a.Severity = sev
		record(t, s, a)
	}
	if err := s.Acknowledge(ctx, "INC-2", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SilenceIncident(ctx, "INC-4", c.Now().Add(time.Hour), state.Maker{Name: "bob"}, ""); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	e := state.Escalation{Levels: []state.EscalationLevel{{After: 15 * time.Minute, Mention: []string{"S0ONCALL", "U0LEAD"}}}, Severities: []int{1, 2}}
	c.Add(14 * time.Minute)
	if ids, _ := s.Escalate(ctx, e); len(ids) != 0 {
		t.Fatalf("escalated before after: %v", ids)
	}
	c.Add(time.Minute)
	ids, err := s.Escalate(ctx, e)
	if err != nil || len(ids) != 1 || ids[0] != (state.Escalated{Incident: "INC-1", Level: 1}) {
		t.Fatalf("escalated %v %v, want INC-1", ids, err)
	}
	if ids, _ := s.Escalate(ctx, e); len(ids) != 0 {
		t.Fatalf("escalated twice: %v", ids)
	}
	ds := drain(t, s)
	if len(ds) != 1 || ds[0].Name != "escalated" || strings.Join(ds[0].Mention, ",") != "S0ONCALL,U0LEAD" || ds[0].After != 15*time.Minute || ds[0].Incident != "INC-1" {
		t.Fatalf("escalation delivery %+v", ds)
	}
	inc, _ := s.Get(ctx, "INC-1")
	if inc.EscalatedAt.IsZero() || strings.Join(inc.EscalatedTo, ",") != "S0ONCALL,U0LEAD" {
		t.Fatalf("incident after escalation: %v %v", inc.EscalatedAt, inc.EscalatedTo)
	}
	// A severity raised by hand later escalates at the next pass.
	if err := s.SetSeverity(ctx, "INC-3", 2, "alice"); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.Escalate(ctx, e); len(ids) != 1 || ids[0].Incident != "INC-3" {
		t.Fatalf("after raising INC-3: %v", ids)
	}
}

// TestEscalationCountsOnlyUnsilencedTime: escalation's clock counts the time an incident was
// open, unacknowledged and not silenced: an incident silenced for an hour 5 minutes after it
// opened escalates 10 minutes after the silence ends, not at once.
func TestEscalationCountsOnlyUnsilencedTime(t *testing.T) {
	ctx := context.Background()
	e := state.Escalation{Levels: []state.EscalationLevel{{After: 15 * time.Minute, Mention: []string{"S0ONCALL"}}}, Severities: []int{1}}
	cases := []struct {
		name   string
		end    func(s *state.Store, sid string) // ends the silence (nil: it runs out)
		silent time.Duration
	}{
		{"the silence runs out", nil, time.Hour},
		{"ended early by a person", func(s *state.Store, sid string) {
			if _, _, err := s.ExpireSilence(ctx, sid, "bob"); err != nil {
				t.Fatal(err)
			}
		}, 20 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c, _, _ := newStore(t)
			a := alert("k", "fp")
			a.Severity = 1
			record(t, s, a)
			c.Add(5 * time.Minute)
			sid, err := s.SilenceIncident(ctx, "INC-1", c.Now().Add(time.Hour), state.Maker{Name: "bob"}, "deploy")
			if err != nil {
				t.Fatal(err)
			}
			c.Add(tc.silent)
			if tc.end != nil {
				tc.end(s, sid)
			} else if _, err := s.ExpireSilences(ctx); err != nil {
				t.Fatal(err)
			}
			c.Add(9 * time.Minute) // 14 minutes open and not silenced
			if ids, _ := s.Escalate(ctx, e); len(ids) != 0 {
				t.Fatalf("escalated after 14 unsilenced minutes (%s silenced): %v", tc.silent, ids)
			}
			c.Add(time.Minute)
			if ids, err := s.Escalate(ctx, e); err != nil || len(ids) != 1 {
				t.Fatalf("not escalated after 15 unsilenced minutes: %v %v", ids, err)
			}
		})
	}
}

// TestSeverityAndOwner: a severity set by hand stays (alerts no longer raise it); assigning
// and unassigning are in the incident, its timeline and its thread.
func TestSeverityAndOwner(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	record(t, s, alert("k", "fp"))
	drain(t, s)
	if err := s.SetSeverity(ctx, "INC-1", 4, "alice"); err != nil {
		t.Fatal(err)
	}
	a := alert("k", "fp")
	a.Severity = 1
	record(t, s, a)
	inc, _ := s.Get(ctx, "INC-1")
	if inc.Severity != 4 || inc.SeverityBy != "alice" {
		t.Fatalf("severity %d by %q, want 4 by alice", inc.Severity, inc.SeverityBy)
	}
	if err := s.Assign(ctx, "INC-1", "U0BOB", "bob", "alice"); err != nil {
		t.Fatal(err)
	}
	inc, _ = s.Get(ctx, "INC-1")
	if inc.Owner != "U0BOB" || inc.OwnerName != "bob" || inc.OwnerBy != "alice" {
		t.Fatalf("owner %+v", inc)
	}
	if err := s.Assign(ctx, "INC-1", "", "", "bob"); err != nil {
		t.Fatal(err)
	}
	if inc, _ = s.Get(ctx, "INC-1"); inc.Owner != "" {
		t.Fatalf("still owned by %q", inc.Owner)
	}
	var evs []string
	for _, d := range drain(t, s) {
		evs = append(evs, fmt.Sprintf("%s=%d/%d%s/%s", d.Name, d.Severity, d.Was, d.Owner, d.OwnerName))
	}
	if got := strings.Join(evs, " "); got != "severity=4/3/ assigned=0/0U0BOB/bob assigned=0/0/" {
		t.Fatalf("deliveries %q", got)
	}
	s.Resolve(ctx, "INC-1", "alice", "")
	var ce *state.ChangeError
	if err := s.SetSeverity(ctx, "INC-1", 2, "alice"); !errors.As(err, &ce) || ce.Reason != "resolved" {
		t.Fatalf("severity of a resolved incident: %v", err)
	}
	if err := s.Assign(ctx, "INC-9", "U1", "", "alice"); !errors.As(err, &ce) || ce.Reason != "notfound" {
		t.Fatalf("assigning a missing incident: %v", err)
	}
}

// TestFullTimelineIsNotCapped: an incident's timeline keeps far more than a message shows.
func TestFullTimelineIsNotCapped(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	record(t, s, alert("k", "fp"))
	for i := range 1500 {
		if _, err := s.Note(ctx, "INC-1", "note", "streamwatch", fmt.Sprint("note ", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	tl, dropped, err := s.FullTimeline(ctx, "INC-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(tl) != 1501 || dropped != 0 || tl[0].Name != "opened" || tl[1500].Detail != "note 1499" {
		t.Fatalf("%d events (%d dropped), first %+v", len(tl), dropped, tl[0])
	}
}

// TestEscalationLevels: two levels fire in order, each once its after has passed
// unacknowledged; the second repeats until acknowledged; unack resumes at the next level (the
// acknowledged time does not count); an acknowledgement nobody touched for ack_timeout expires
// and escalates one level up at once.
func TestEscalationLevels(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	e := state.Escalation{Severities: []int{1}, AckTimeout: time.Hour, Levels: []state.EscalationLevel{
		{After: 10 * time.Minute, Mention: []string{"S0ONCALL"}},
		{After: 30 * time.Minute, Mention: []string{"S0LEADS"}, Repeat: 15 * time.Minute},
		{After: 90 * time.Minute, Mention: []string{"U0CTO"}},
	}}
	a := alert("k", "fp")
	a.Severity = 1
	record(t, s, a)
	drain(t, s)
	esc := func(want ...state.Escalated) {
		t.Helper()
		got, err := s.Escalate(ctx, e)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("at +%s: escalated %v %v, want %v", c.Now().Sub(time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)), got, err, want)
		}
	}
	c.Add(9 * time.Minute)
	esc()
	c.Add(time.Minute)
	esc(state.Escalated{Incident: "INC-1", Level: 1})
	c.Add(19 * time.Minute)
	esc()
	c.Add(time.Minute) // 30 minutes unacknowledged
	esc(state.Escalated{Incident: "INC-1", Level: 2})
	c.Add(14 * time.Minute)
	esc()
	c.Add(time.Minute)
	esc(state.Escalated{Incident: "INC-1", Level: 2, Repeat: true})
	ds := drain(t, s)
	if len(ds) != 3 || strings.Join(ds[1].Mention, ",") != "S0LEADS" || ds[1].Level != 2 || ds[2].Repeat != true {
		t.Fatalf("deliveries %+v", ds)
	}
	// 45 minutes unacknowledged: acknowledged for 2 hours... but the acknowledgement expires
	// after one with nobody touching it: level 3 at once.
	if err := s.Acknowledge(ctx, "INC-1", "bob"); err != nil {
		t.Fatal(err)
	}
	c.Add(59 * time.Minute)
	esc()
	c.Add(time.Minute)
	esc(state.Escalated{Incident: "INC-1", Level: 3})
	inc, _ := s.Get(ctx, "INC-1")
	if inc.Status != state.StatusOpen {
		t.Fatalf("after the acknowledgement expired: %s", inc.Status)
	}
	ds = drain(t, s)
	if len(ds) != 3 || ds[1].Name != "ack_expired" || ds[2].Name != "escalated" || ds[2].Level != 3 {
		t.Fatalf("deliveries %+v", ds)
	}
	// Unack: acknowledged, then taken back; the acknowledged time does not count.
	s2, c2, _, _ := newStore(t)
	record(t, s2, a)
	c2.Add(11 * time.Minute)
	if got, _ := s2.Escalate(ctx, e); len(got) != 1 {
		t.Fatalf("level 1: %v", got)
	}
	if err := s2.Acknowledge(ctx, "INC-1", "bob"); err != nil {
		t.Fatal(err)
	}
	c2.Add(40 * time.Minute)
	if err := s2.Unacknowledge(ctx, "INC-1", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := s2.Unacknowledge(ctx, "INC-1", "bob"); err == nil || !strings.Contains(err.Error(), "already open") {
		t.Fatalf("unack of an open incident: %v", err)
	}
	c2.Add(18 * time.Minute) // 29 minutes unacknowledged
	if got, _ := s2.Escalate(ctx, e); len(got) != 0 {
		t.Fatalf("escalated after 29 unacknowledged minutes: %v", got)
	}
	c2.Add(time.Minute)
	if got, _ := s2.Escalate(ctx, e); len(got) != 1 || got[0].Level != 2 {
		t.Fatalf("after unack: %v, want level 2", got)
	}
}

// TestReopenAndUnmerge: a resolved incident reopens with its keys and its thread; an unmerged
// incident gets back its keys, alerts and count, and the other gives them up.
func TestReopenAndUnmerge(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	record(t, s, alert("k1", "fp1"))
	record(t, s, alert("k2", "fp2"))
	record(t, s, alert("k2", "fp2"))
	if err := s.Resolve(ctx, "INC-1", "bob", "false alarm"); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	if err := s.Reopen(ctx, "INC-1", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reopen(ctx, "INC-1", "bob"); err == nil || !strings.Contains(err.Error(), "already open") {
		t.Fatalf("reopen twice: %v", err)
	}
	if out := record(t, s, alert("k1", "fp1"))[0]; out.Incident != "INC-1" || out.Result != state.ResultDuplicate {
		t.Fatalf("k1 after the reopen: %+v", out)
	}
	page, _ := s.ListPage(ctx, "C0PIPE", state.ListFilter{}, "", 10)
	if len(page.Incidents) != 2 {
		t.Fatalf("listed after reopen: %d", len(page.Incidents))
	}
	if err := s.Merge(ctx, "INC-2", "INC-1", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reopen(ctx, "INC-2", "bob"); err == nil || !strings.Contains(err.Error(), "unmerge it instead") {
		t.Fatalf("reopen of a merged incident: %v", err)
	}
	if out := record(t, s, alert("k2", "fp2"))[0]; out.Incident != "INC-1" {
		t.Fatalf("k2 after the merge: %+v", out)
	}
	if err := s.Unmerge(ctx, "INC-2", "bob"); err != nil {
		t.Fatal(err)
	}
	if out := record(t, s, alert("k2", "fp2"))[0]; out.Incident != "INC-2" || out.Result != state.ResultDuplicate {
		t.Fatalf("k2 after the unmerge: %+v", out)
	}
	one, _ := s.Get(ctx, "INC-1")
	two, _ := s.Get(ctx, "INC-2")
	if two.Status != state.StatusOpen || two.MergedInto != "" || two.Count != 3 || len(two.Alerts) != 1 {
		t.Fatalf("INC-2 after the unmerge: %+v", two)
	}
	// INC-1 keeps what it counted while merged (k2 once): nobody can tell those apart.
	if one.Count != 3 || len(one.MergedFrom) != 0 || len(one.Alerts) != 1 || one.Firing != 1 {
		t.Fatalf("INC-1 after the unmerge: count %d, merged from %v, alerts %v, firing %d", one.Count, one.MergedFrom, one.Alerts, one.Firing)
	}
	if err := s.Unmerge(ctx, "INC-2", "bob"); err == nil || !strings.Contains(err.Error(), "was not merged") {
		t.Fatalf("unmerge twice: %v", err)
	}
}
