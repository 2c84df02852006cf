package state_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// distinct is an alert of its own key, as a storm of distinct alerts sends them.
func distinct(i int) state.AlertRecord {
	a := alert(fmt.Sprintf("storm-%04d", i), fmt.Sprintf("fp-%04d", i))
	a.Title = "KafkaPartitionLag"
	a.Labels = map[string]string{"alertname": "KafkaPartitionLag", "partition": fmt.Sprint(i), "broker": fmt.Sprint("b", i%3)}
	return a
}

func record(t *testing.T, s *state.Store, as ...state.AlertRecord) []state.Outcome {
	t.Helper()
	out, err := s.RecordAlerts(context.Background(), as)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func results(out []state.Outcome) map[string]int {
	m := map[string]int{}
	for _, o := range out {
		m[o.Result]++
	}
	return m
}

// TestFloodFoldsNewKeysIntoOneIncident walks a flood through its life with a clock the test
// sets: the limit's worth of incidents open, the next new key opens the flood incident and the
// later ones join it, each counted under its own key; the flood ends quiet_for after the rate
// fell to the limit, says so once, and new keys (a flooded one too) open their own incidents.
func TestFloodFoldsNewKeysIntoOneIncident(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.FloodLimit, s.FloodQuietFor = 5, 2*time.Minute
	start := c.Now()

	var as []state.AlertRecord
	for i := range 20 {
		as = append(as, distinct(i))
	}
	out := record(t, s, as...)
	for i := range 5 {
		if out[i].Result != state.ResultOpened || out[i].Incident != fmt.Sprint("INC-", i+1) {
			t.Fatalf("alert %d: %+v, want INC-%d opened", i, out[i], i+1)
		}
	}
	if o := out[5]; o.Result != state.ResultFlooded || !o.FloodOpened || o.Incident != "INC-6" {
		t.Fatalf("alert 5, the limit's next: %+v, want INC-6 flooded, opening the flood", o)
	}
	for i := 6; i < 20; i++ {
		if o := out[i]; o.Result != state.ResultFlooded || o.FloodOpened || o.Incident != "INC-6" {
			t.Fatalf("alert %d: %+v, want flooded into INC-6", i, o)
		}
	}
	c.Add(time.Second)
	again := record(t, s, distinct(7), distinct(0))
	if again[0].Result != state.ResultDuplicate || again[0].Incident != "INC-6" {
		t.Fatalf("a flooded key again: %+v, want a duplicate in INC-6", again[0])
	}
	if again[1].Result != state.ResultDuplicate || again[1].Incident != "INC-1" {
		t.Fatalf("a key with its own incident: %+v, want a duplicate in INC-1", again[1])
	}

	inc, err := s.Get(ctx, "INC-6")
	if err != nil {
		t.Fatal(err)
	}
	f := inc.Flood
	if f == nil {
		t.Fatalf("INC-6 is no flood incident: %+v", inc)
	}
	if inc.Count != 16 || f.Distinct != 15 || f.Listed != 15 || f.Unlisted != 0 || inc.Channel != "C0PIPE" ||
		inc.Severity != 3 || inc.Title != "" || f.Limit != 5 || f.QuietFor != 2*time.Minute {
		t.Fatalf("flood incident: count %d, detail %+v, %+v", inc.Count, f, inc)
	}
	if f.Keys[0] != (state.KeyCount{Value: "storm-0007", Count: 2}) || len(f.Keys) != 15 {
		t.Fatalf("keys: %+v, want storm-0007 first with 2 and 15 in all", f.Keys)
	}
	if f.Sources[0] != (state.KeyCount{Value: "KafkaPartitionLag", Count: 15}) || f.SourceCount != 1 {
		t.Fatalf("sources %+v (%d)", f.Sources, f.SourceCount)
	}
	if f.Labels[0] != (state.KeyCount{Value: "alertname=KafkaPartitionLag", Count: 15}) {
		t.Fatalf("top label values %+v", f.Labels)
	}
	if st, _ := s.Stats(ctx); !slices.Equal(st.Floods, []string{"C0PIPE"}) {
		t.Fatalf("floods %v", st.Floods)
	}

	// One root per incident: five own ones and the flood's.
	ds, _ := s.ReadOutbox(ctx, "r", false, 100, 0)
	var rootsOf []string
	for _, d := range ds {
		if d.Kind == state.KindRoot {
			rootsOf = append(rootsOf, d.Incident)
		}
	}
	if fmt.Sprint(rootsOf) != "[INC-1 INC-2 INC-3 INC-4 INC-5 INC-6]" || len(ds) != 6 {
		t.Fatalf("outbox %+v", ds)
	}
	// The flood's thread update comes a window after it opened, with the newest keys.
	c.Add(s.Coalesce)
	if _, err := s.Pump(ctx); err != nil {
		t.Fatal(err)
	}
	ds, _ = s.ReadOutbox(ctx, "r", false, 100, 0)
	// (INC-1's update reports its duplicate.)
	if len(ds) != 2 || ds[1].Incident != "INC-6" || ds[1].Name != "flood" || ds[1].Count != 16 || ds[1].Distinct != 15 ||
		strings.Join(ds[1].Keys, "\n") != "storm-0019\nstorm-0018\nstorm-0017\nstorm-0016\nstorm-0015" {
		t.Fatalf("flood update %+v", ds)
	}

	// The rate fell to the limit when the storm's alerts left the minute (start + 60 s); a
	// new key a while later still joins, without moving the end.
	c.Add(90 * time.Second)
	if o := record(t, s, distinct(100))[0]; o.Result != state.ResultFlooded || o.Incident != "INC-6" {
		t.Fatalf("a new key while the flood lasts: %+v", o)
	}
	if ended, _ := s.EndFloods(ctx); len(ended) != 0 {
		t.Fatalf("flood ended early, at %v: %v", c.Now().Sub(start), ended)
	}
	c.Add(start.Add(time.Minute + 2*time.Minute).Sub(c.Now()))
	ended, err := s.EndFloods(ctx)
	if err != nil || fmt.Sprint(ended) != "[C0PIPE]" {
		t.Fatalf("EndFloods at the end: %v %v", ended, err)
	}
	if ended, _ := s.EndFloods(ctx); len(ended) != 0 {
		t.Fatalf("flood ended twice: %v", ended)
	}
	tl, _ := s.Timeline(ctx, "INC-6", 10)
	if last := tl[len(tl)-1]; last.Name != "flood_over" || last.Limit != 5 || last.Quiet != 2*time.Minute {
		t.Fatalf("timeline %+v", tl)
	}
	ds, _ = s.ReadOutbox(ctx, "r", false, 100, 0)
	if len(ds) != 1 || ds[0].Name != "flood_over" || !ds[0].Since.Equal(start.Add(time.Minute)) {
		t.Fatalf("outbox after the flood %+v", ds)
	}
	if inc, _ := s.Get(ctx, "INC-6"); inc.Flood.Ended.IsZero() || inc.Status != state.StatusOpen {
		t.Fatalf("after the flood INC-6 is %s, ended %v; want open, ended", inc.Status, inc.Flood.Ended)
	}
	// Opening resumes, for a key that kept firing too.
	out = record(t, s, distinct(200), distinct(7))
	if out[0].Result != state.ResultOpened || out[0].Incident != "INC-7" || out[1].Result != state.ResultOpened || out[1].Incident != "INC-8" {
		t.Fatalf("after the flood: %+v", out)
	}
	if st, _ := s.Stats(ctx); len(st.Floods) != 0 {
		t.Fatalf("floods after the end: %v", st.Floods)
	}
}

// TestFloodEndsWhenAnAlertMeetsIt: no maintenance pass ran, the next new key finds the flood's
// time up; the flood incident's thread still says it ended, before the new incident's root.
func TestFloodEndsWhenAnAlertMeetsIt(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.FloodLimit, s.FloodQuietFor = 1, time.Second
	record(t, s, distinct(1), distinct(2), distinct(3))
	c.Add(time.Minute + time.Second)
	out := record(t, s, distinct(4))
	if out[0].Result != state.ResultOpened || out[0].Incident != "INC-3" {
		t.Fatalf("after the quiet time: %+v", out[0])
	}
	ds, _ := s.ReadOutbox(ctx, "r", false, 100, 0)
	var seen []string
	for _, d := range ds {
		seen = append(seen, d.Incident+":"+d.Kind+d.Name)
	}
	if fmt.Sprint(seen) != "[INC-1:root INC-2:root INC-2:eventflood_over INC-3:root]" {
		t.Fatalf("outbox order %v", seen)
	}
}

// TestFloodResolvedAlertsAndResolving: a resolved alert of a flooded key marks its alert in the
// flood incident; resolving the flood incident while alerts still pour in opens a new one,
// linked to it.
func TestFloodResolvedAlertsAndResolving(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	s.FloodLimit = 1
	record(t, s, distinct(1), distinct(2), distinct(3))
	r := distinct(3)
	r.Resolved = true
	if o := record(t, s, r)[0]; o.Result != state.ResultResolved || o.Incident != "INC-2" {
		t.Fatalf("resolved flooded alert: %+v", o)
	}
	if inc, _ := s.Get(ctx, "INC-2"); inc.Alerts["fp-0003"].Status != "resolved" || inc.Alerts["fp-0002"].Status != "firing" {
		t.Fatalf("flood alerts %+v", inc.Alerts)
	}
	if err := s.Resolve(ctx, "INC-2", "U1", "noise"); err != nil {
		t.Fatal(err)
	}
	out := record(t, s, distinct(4), distinct(5))
	if !out[0].FloodOpened || out[0].Incident != "INC-3" || out[0].Previous != "INC-2" || out[1].Incident != "INC-3" {
		t.Fatalf("after resolving the flood incident mid-flood: %+v", out)
	}
	r = distinct(2)
	r.Resolved = true
	if o := record(t, s, r)[0]; o.Result != state.ResultIgnored {
		t.Fatalf("resolved alert of a resolved flood: %+v", o)
	}
}

// TestFloodIsOneAcrossReplicas: 300 distinct alerts from two stores with their own connection
// pools (two replicas) make the limit's worth of incidents and one flood incident.
func TestFloodIsOneAcrossReplicas(t *testing.T) {
	rdb1, prefix := testredis.Client(t)
	rdb2, _ := testredis.Client(t)
	s1, s2 := state.New(rdb1, prefix), state.New(rdb2, prefix)
	stores := []*state.Store{s1, s2}
	for _, s := range stores {
		s.FloodLimit = 20
	}
	var mu sync.Mutex
	var all []state.Outcome
	var wg sync.WaitGroup
	for w := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 300; i += 10 {
				out, err := stores[i%2].RecordAlert(context.Background(), distinct(i))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				all = append(all, out)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	got := results(all)
	var floods []string
	for _, o := range all {
		if o.FloodOpened {
			floods = append(floods, o.Incident)
		}
	}
	if got[state.ResultOpened] != 20 || got[state.ResultFlooded] != 280 || len(floods) != 1 {
		t.Fatalf("results %v, floods opened %v; want 20 opened, 280 flooded into one flood", got, floods)
	}
	inc, err := s1.Get(context.Background(), floods[0])
	if err != nil || inc.Count != 280 || inc.Flood.Listed != 280 {
		t.Fatalf("flood incident %+v %v", inc, err)
	}
}

// TestFloodListsAreCapped: a flood beyond MaxListedFloodKeys keys lists that many and counts
// the rest; an incident beyond MaxListedAlerts alerts likewise. Counts keep everything.
func TestFloodListsAreCapped(t *testing.T) {
	ctx := context.Background()
	s, _, rdb, prefix := newStore(t)
	s.FloodLimit = 1
	n := 1 + state.MaxListedFloodKeys + 50
	var as []state.AlertRecord
	for i := range n {
		as = append(as, distinct(i))
		if len(as) == 1000 || i == n-1 {
			record(t, s, as...)
			as = as[:0]
		}
	}
	// An unlisted key again: the flood cannot tell it from a new one.
	if o := record(t, s, distinct(n-1))[0]; o.Result != state.ResultFlooded {
		t.Fatalf("an unlisted key again: %+v", o)
	}
	// INC-1 is key 0's; the flood INC-2 has the n-1 others and the repeat.
	inc, err := s.Get(ctx, "INC-2")
	if err != nil {
		t.Fatal(err)
	}
	f := inc.Flood
	if inc.Count != int64(n) || f.Listed != state.MaxListedFloodKeys || f.Unlisted != 51 {
		t.Fatalf("flood of %d keys: count %d, listed %d, unlisted occurrences %d", n-1, inc.Count, f.Listed, f.Unlisted)
	}
	// Estimated beyond the list: within a few of the truth.
	if f.Distinct < int64(n-1)-5 || f.Distinct > int64(n-1)+5 {
		t.Fatalf("distinct %d, want about %d", f.Distinct, n-1)
	}
	if len(inc.Alerts) != state.MaxListedAlerts || inc.UnlistedAlerts != int64(n-state.MaxListedAlerts) {
		t.Fatalf("alerts listed %d, unlisted %d", len(inc.Alerts), inc.UnlistedAlerts)
	}
	if nl, _ := rdb.ZCard(ctx, "{"+prefix+"}:inc:INC-2:flood:labels").Result(); nl > 200 {
		t.Fatalf("label ranking holds %d values: not bounded", nl)
	}
	// All listed alerts resolved, unlisted ones unknown: nobody can say all resolved.
	var res []state.AlertRecord
	for fp := range inc.Alerts {
		i := 0
		fmt.Sscanf(fp, "fp-%d", &i)
		r := distinct(i)
		r.Resolved = true
		res = append(res, r)
	}
	record(t, s, res...)
	if inc, _ := s.Get(ctx, "INC-2"); inc.AllResolved {
		t.Fatal("all resolved judged on a capped list")
	}
}

// TestFloodOff: a zero limit opens every key's incident.
func TestFloodOff(t *testing.T) {
	s, _, _, _ := newStore(t)
	var as []state.AlertRecord
	for i := range 100 {
		as = append(as, distinct(i))
	}
	if got := results(record(t, s, as...)); got[state.ResultOpened] != 100 {
		t.Fatalf("flood protection off: %v", got)
	}
}

func TestStats(t *testing.T) {
	ctx := context.Background()
	s, c, _, _ := newStore(t)
	s.FloodLimit = 2
	record(t, s, distinct(1), distinct(2), distinct(3), distinct(4))
	c.Add(time.Second)
	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.OpenIncidents != 3 || st.OutboxDepth != 3 || !slices.Equal(st.Floods, []string{"C0PIPE"}) ||
		st.OutboxOldest.IsZero() {
		t.Fatalf("stats %+v", st)
	}
	ds, _ := s.ReadOutbox(ctx, "r", false, 10, 0)
	for _, d := range ds {
		if err := s.Complete(ctx, d, "1.1", "C0PIPE"); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ = s.Stats(ctx); st.OutboxDepth != 0 || !st.OutboxOldest.IsZero() {
		t.Fatalf("stats after delivery %+v", st)
	}
	if !strings.HasPrefix(fmt.Sprint(st.Floods), "[C0PIPE") {
		t.Fatalf("floods %v", st.Floods)
	}
}
