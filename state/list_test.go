package state_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/testclock"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// readHook records the incident hashes a client reads and counts the commands it sends.
type readHook struct {
	mu       sync.Mutex
	commands int
	read     map[string]bool
}

func (h *readHook) note(c redis.Cmder) {
	h.commands++
	if name := c.Name(); name == "hgetall" || name == "hmget" || name == "hget" {
		if k, ok := c.Args()[1].(string); ok {
			h.read[k] = true
		}
	}
}
func (h *readHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *readHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		h.mu.Lock()
		h.note(c)
		h.mu.Unlock()
		return next(ctx, c)
	}
}
func (h *readHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cs []redis.Cmder) error {
		h.mu.Lock()
		for _, c := range cs {
			h.note(c)
		}
		h.mu.Unlock()
		return next(ctx, cs)
	}
}
func (h *readHook) reset() (int, map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n, r := h.commands, h.read
	h.commands, h.read = 0, map[string]bool{}
	return n, r
}

// crowd opens n incidents in channel C-BIG and, one in every n/inC, one in C-SMALL (inC of
// them), each a millisecond after the last; it returns C-SMALL's ids, oldest first.
func crowd(t testing.TB, s *state.Store, c *clock, n, inC int) []string {
	t.Helper()
	ctx := context.Background()
	var small []string
	for lo := 0; lo < n; lo += 500 {
		var batch []state.AlertRecord
		for i := lo; i < min(lo+500, n); i++ {
			ch, sev := "C-BIG", 1+i%5
			if i%(n/inC) == n/inC-1 {
				ch, sev = "C-SMALL", 1+(i/(n/inC))%5
			}
			key := fmt.Sprintf("k%05d", i)
			batch = append(batch, state.AlertRecord{Key: key, Fingerprint: key, Title: "t " + key, Severity: sev, Channel: ch, Source: "test"})
		}
		out, err := s.RecordAlerts(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range out {
			if batch[i].Channel == "C-SMALL" {
				small = append(small, o.Incident)
			}
		}
		c.Add(time.Millisecond)
	}
	return small
}

// TestListReadsOnlyItsChannel: among 10,000 open incidents, incident list's page of a channel
// of 20 shows those 20, newest first, and reads no other incident; paging and the filters.
func TestListReadsOnlyItsChannel(t *testing.T) {
	ctx := context.Background()
	url := testredis.URL(t)
	opt, _ := redis.ParseURL(url)
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	hook := &readHook{read: map[string]bool{}}
	rdb.AddHook(hook)
	prefix := testredis.Prefix()
	s, c := newStoreAt(rdb, prefix)
	small := crowd(t, s, c, 10_000, 20)
	if len(small) != 20 {
		t.Fatalf("%d incidents in C-SMALL, want 20", len(small))
	}
	hook.reset()
	page, err := s.ListPage(ctx, "C-SMALL", state.ListFilter{}, "", 20)
	if err != nil {
		t.Fatal(err)
	}
	calls, read := hook.reset()
	var got []string
	for _, inc := range page.Incidents {
		got = append(got, inc.ID)
	}
	want := reversed(small)
	if strings.Join(got, " ") != strings.Join(want, " ") || page.More || page.Open != 20 {
		t.Fatalf("page %v (more %v, open %d), want %v", got, page.More, page.Open, want)
	}
	for k := range read {
		if !containsIncident(small, k) {
			t.Errorf("the list read %s, not an incident of the channel", k)
		}
	}
	t.Logf("a page of 20 among 10,000: %d Redis commands, %d incidents read", calls, len(read))
	if len(read) != 20 {
		t.Errorf("read %d incidents, want the 20 shown", len(read))
	}

	// Pages of 8: 8, 8, 4, each after the last one's last.
	var paged []string
	after := ""
	for range 3 {
		p, err := s.ListPage(ctx, "C-SMALL", state.ListFilter{}, after, 8)
		if err != nil {
			t.Fatal(err)
		}
		for _, inc := range p.Incidents {
			paged = append(paged, inc.ID)
		}
		after = p.Next
		if (len(paged) < 20) != p.More {
			t.Fatalf("after %d shown, More is %v", len(paged), p.More)
		}
	}
	if strings.Join(paged, " ") != strings.Join(want, " ") {
		t.Fatalf("pages %v, want %v", paged, want)
	}
	// A resolved incident leaves the list; a page after it still starts where it was.
	if err := s.Resolve(ctx, want[7], "U1", ""); err != nil {
		t.Fatal(err)
	}
	p, err := s.ListPage(ctx, "C-SMALL", state.ListFilter{}, want[7], 3)
	if err != nil || len(p.Incidents) != 3 || p.Incidents[0].ID != want[8] {
		t.Fatalf("a page after a resolved incident: %+v, %v; want from %s", p, err, want[8])
	}
	// Filters: severity, status, mine.
	if err := s.Acknowledge(ctx, want[0], "U0ME"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    state.ListFilter
		want func(*state.Incident) bool
	}{
		{"sev1", state.ListFilter{Severity: 1}, func(i *state.Incident) bool { return i.Severity == 1 }},
		{"acked", state.ListFilter{Status: state.StatusAcknowledged}, func(i *state.Incident) bool { return i.ID == want[0] }},
		{"mine", state.ListFilter{User: "U0ME"}, func(i *state.Incident) bool { return i.ID == want[0] }},
		{"open", state.ListFilter{Status: state.StatusOpen}, func(i *state.Incident) bool { return i.ID != want[0] }},
	} {
		p, err := s.ListPage(ctx, "C-SMALL", tc.f, "", 20)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, id := range want {
			if id == want[7] {
				continue
			}
			inc, _ := s.Get(ctx, id)
			if tc.want(inc) {
				n++
			}
		}
		if len(p.Incidents) != n || n == 0 {
			t.Errorf("%s: %d listed, want %d", tc.name, len(p.Incidents), n)
		}
		for _, inc := range p.Incidents {
			if !tc.want(inc) {
				t.Errorf("%s lists %s (%s, SEV%d)", tc.name, inc.ID, inc.Status, inc.Severity)
			}
		}
	}
}

// TestListIndexesWhatAnOlderVersionOpened: incidents open before channels had an index are
// listed all the same (the index is built once, from the open incidents).
func TestListIndexesWhatAnOlderVersionOpened(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testredis.Client(t)
	s, c := newStoreAt(rdb, prefix)
	small := crowd(t, s, c, 100, 5)
	// What an older version left: no channel index, no marker.
	if err := rdb.Del(ctx, "{"+prefix+"}:chan:C-SMALL", "{"+prefix+"}:chan:C-BIG", "{"+prefix+"}:chan-indexed").Err(); err != nil {
		t.Fatal(err)
	}
	fresh := state.New(rdb, prefix)
	p, err := fresh.ListPage(ctx, "C-SMALL", state.ListFilter{}, "", 10)
	if err != nil || len(p.Incidents) != 5 || p.Incidents[0].ID != small[4] {
		t.Fatalf("after an upgrade: %+v, %v; want %v newest first", p, err, small)
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func containsIncident(ids []string, key string) bool {
	for _, id := range ids {
		if strings.HasSuffix(key, ":inc:"+id) {
			return true
		}
	}
	return false
}

// BenchmarkIncidentList20Of10000 is incident list in a channel of 20 among 10,000 open
// incidents: the time of a page and the Redis commands it sends.
func BenchmarkIncidentList20Of10000(b *testing.B) {
	ctx := context.Background()
	opt, _ := redis.ParseURL(testredis.URL(b))
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	hook := &readHook{read: map[string]bool{}}
	rdb.AddHook(hook)
	s, c := newStoreAt(rdb, testredis.Prefix())
	crowd(b, s, c, 10_000, 20)
	if _, err := s.ListPage(ctx, "C-SMALL", state.ListFilter{}, "", 20); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		list func() error
	}{
		// What incident list did before the index: every open incident read, this channel's kept.
		{"scan", func() error { _, err := s.ListOpen(ctx, "C-SMALL"); return err }},
		{"index", func() error { _, err := s.ListPage(ctx, "C-SMALL", state.ListFilter{}, "", 20); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			hook.reset()
			for b.Loop() {
				if err := bc.list(); err != nil {
					b.Fatal(err)
				}
			}
			calls, read := hook.reset()
			b.ReportMetric(float64(calls)/float64(b.N), "redis-cmds/op")
			b.ReportMetric(float64(len(read)), "incidents-read")
		})
	}
}

// newStoreAt is a store of a new deployment (IndexChannels has run) on rdb.
func newStoreAt(rdb *redis.Client, prefix string) (*state.Store, *clock) {
	s := state.New(rdb, prefix)
	if err := s.IndexChannels(context.Background()); err != nil {
		panic(err)
	}
	c := testclock.New(time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC))
	s.SetClock(c.Now)
	return s, c
}

// BenchmarkIncidentListFiltered is a filtered incident list among 10,000 open incidents (9,980
// in C-BIG, a fifth of each severity; 20 of them acknowledged, all SEV1): a page of 20, its
// time, the Redis commands it sends and the incidents it reads.
func BenchmarkIncidentListFiltered(b *testing.B) {
	ctx := context.Background()
	opt, _ := redis.ParseURL(testredis.URL(b))
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	hook := &readHook{read: map[string]bool{}}
	rdb.AddHook(hook)
	s, c := newStoreAt(rdb, testredis.Prefix())
	crowd(b, s, c, 10_000, 20)
	for k := range 20 {
		if err := s.Acknowledge(ctx, fmt.Sprint("INC-", k*500+1), "U0ME"); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name    string
		channel string
		f       state.ListFilter
	}{
		{"sev1", "C-BIG", state.ListFilter{Severity: 1}},
		{"acked", "C-BIG", state.ListFilter{Status: state.StatusAcknowledged}},
		{"acked-sev2-all", "", state.ListFilter{Status: state.StatusAcknowledged, Severity: 2}},
		{"open-sev3", "C-BIG", state.ListFilter{Status: state.StatusOpen, Severity: 3}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			hook.reset()
			for b.Loop() {
				if _, err := s.ListPage(ctx, bc.channel, bc.f, "", 20); err != nil {
					b.Fatal(err)
				}
			}
			calls, read := hook.reset()
			b.ReportMetric(float64(calls)/float64(b.N), "redis-cmds/op")
			b.ReportMetric(float64(len(read)), "incidents-read")
		})
	}
}

// indexesHold checks that the list indexes hold exactly the open incidents: each in the index
// of the channel its root is in (its channel until posted), of its status and of its severity;
// and that every filtered list, of each channel and of all, is what a scan finds, newest first.
func indexesHold(t *testing.T, s *state.Store, rdb *redis.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	open, err := s.ListOpen(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, inc := range open {
		for _, k := range []string{"chan:" + inc.ListedIn(), "status:" + inc.Status, fmt.Sprint("sev:", inc.Severity)} {
			want[k] = append(want[k], inc.ID)
		}
	}
	got := map[string][]string{}
	for _, pat := range []string{"chan:*", "status:*", "sev:*"} {
		keys, err := rdb.Keys(ctx, "{"+prefix+"}:"+pat).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			ids, err := rdb.ZRange(ctx, k, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) > 0 {
				got[strings.TrimPrefix(k, "{"+prefix+"}:")] = ids
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the indexes hold\n%v\nwant\n%v", got, want)
	}
	chans := map[string]bool{"": true}
	for _, inc := range open {
		chans[inc.ListedIn()] = true
	}
	for ch := range chans {
		for _, st := range []string{"", state.StatusOpen, state.StatusAcknowledged} {
			for sev := range 6 {
				f := state.ListFilter{Status: st, Severity: sev}
				var scan []string
				for i := len(open) - 1; i >= 0; i-- {
					inc := open[i]
					if (ch == "" || inc.ListedIn() == ch) && (st == "" || inc.Status == st) && (sev == 0 || inc.Severity == sev) {
						scan = append(scan, inc.ID)
					}
				}
				p, err := s.ListPage(ctx, ch, f, "", 100)
				if err != nil {
					t.Fatal(err)
				}
				var listed []string
				for _, inc := range p.Incidents {
					listed = append(listed, inc.ID)
				}
				if strings.Join(listed, " ") != strings.Join(scan, " ") || p.More {
					t.Fatalf("list of %q, %+v: %v (more %v), want %v", ch, f, listed, p.More, scan)
				}
			}
		}
	}
}

// TestListIndexesFollowTheIncidents: what changes an incident's status, severity or channel
// (an alert, ack, unack, severity, merge, unmerge, resolve, reopen, an acknowledgement that
// expires, a flood, a relocated root) keeps the list indexes exact.
func TestListIndexesFollowTheIncidents(t *testing.T) {
	ctx := context.Background()
	s, c, rdb, prefix := newStore(t)
	step := func(name string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		indexesHold(t, s, rdb, prefix)
	}
	sev := func(key string, n int, ch string) state.AlertRecord {
		a := alert(key, key)
		a.Severity, a.Channel = n, ch
		return a
	}
	record(t, s, sev("a", 3, "C1"), sev("b", 4, "C1"), sev("c", 2, "C2"), sev("d", 5, "C2"))
	step("open", nil)
	c.Add(time.Second)
	record(t, s, sev("a", 1, "C1"), sev("a", 5, "C1")) // a SEV1 alert raises INC-1; a SEV5 does not lower it
	step("an alert raises the severity", nil)
	step("ack", s.Acknowledge(ctx, "INC-2", "U1"))
	step("severity by hand", s.SetSeverity(ctx, "INC-2", 2, "U1"))
	step("unack", s.Unacknowledge(ctx, "INC-2", "U1"))
	step("merge", s.Merge(ctx, "INC-4", "INC-3", "U1"))
	step("unmerge", s.Unmerge(ctx, "INC-4", "U1"))
	step("resolve", s.Resolve(ctx, "INC-3", "U1", ""))
	step("reopen", s.Reopen(ctx, "INC-3", "U1"))
	step("relocate", s.Relocate(ctx, "INC-3", "C-DEFAULT", "1700000000.000200"))
	step("ack a relocated one", s.Acknowledge(ctx, "INC-3", "U1"))
	step("resolve a relocated one", s.Resolve(ctx, "INC-3", "U1", ""))
	step("reopen a relocated one", s.Reopen(ctx, "INC-3", "U1"))
	step("ack", s.Acknowledge(ctx, "INC-1", "U1"))
	c.Add(2 * time.Hour)
	_, err := s.Escalate(ctx, state.Escalation{Severities: []int{1}, AckTimeout: time.Hour,
		Levels: []state.EscalationLevel{{After: time.Minute, Mention: []string{"S0ONCALL"}}}})
	step("an acknowledgement expires", err)
	if inc, _ := s.Get(ctx, "INC-1"); inc.Status != state.StatusOpen {
		t.Fatalf("INC-1 is %s after its acknowledgement expired", inc.Status)
	}
	s.FloodLimit = 2
	c.Add(time.Second)
	record(t, s, sev("f1", 4, "C3"), sev("f2", 4, "C3"), sev("f3", 2, "C3"), sev("f4", 3, "C3"))
	step("a flood", nil)
}

// TestRelocatedIncidentIsListedWhereItsRootIs: an incident whose root moved to
// slack.default_channel (its channel archived) is listed there, and no longer in its old
// channel, whether the move came with a later update (Relocate) or with the root itself
// (Complete); a root posted again in its own channel leaves the lists as they were.
func TestRelocatedIncidentIsListedWhereItsRootIs(t *testing.T) {
	ctx := context.Background()
	s, _, _, _ := newStore(t)
	in := func(ch string, f state.ListFilter) string {
		t.Helper()
		p, err := s.ListPage(ctx, ch, f, "", 20)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, inc := range p.Incidents {
			ids = append(ids, inc.ID)
		}
		return strings.Join(ids, " ")
	}
	a, b := alert("a", "a"), alert("b", "b")
	a.Channel, b.Channel = "C-OLD", "C-GONE"
	record(t, s, a)
	// INC-1's root is posted in C-OLD; INC-2's channel is archived before its root goes out.
	ds, err := s.ReadOutbox(ctx, "r", false, 10, -1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("outbox %v, %v", ds, err)
	}
	if err := s.Complete(ctx, ds[0], "1700000000.000100", "C-OLD"); err != nil {
		t.Fatal(err)
	}
	record(t, s, b)
	ds, err = s.ReadOutbox(ctx, "r", false, 10, -1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("outbox %v, %v", ds, err)
	}
	if err := s.Complete(ctx, ds[0], "1700000000.000300", "C-DEFAULT"); err != nil {
		t.Fatal(err)
	}
	if in("C-GONE", state.ListFilter{}) != "" || in("C-DEFAULT", state.ListFilter{}) != "INC-2" {
		t.Fatalf("a root posted in the default channel: C-GONE lists %q, C-DEFAULT %q", in("C-GONE", state.ListFilter{}), in("C-DEFAULT", state.ListFilter{}))
	}
	// Deleted in Slack, posted again in C-OLD: still listed there.
	if err := s.Relocate(ctx, "INC-1", "C-OLD", "1700000000.000400"); err != nil {
		t.Fatal(err)
	}
	if in("C-OLD", state.ListFilter{}) != "INC-1" {
		t.Fatalf("re-posted in its channel: C-OLD lists %q", in("C-OLD", state.ListFilter{}))
	}
	// C-OLD archived: moved to C-DEFAULT, listed there, filters included, newest first.
	if err := s.Relocate(ctx, "INC-1", "C-DEFAULT", "1700000000.000500"); err != nil {
		t.Fatal(err)
	}
	if got := in("C-OLD", state.ListFilter{}); got != "" {
		t.Fatalf("C-OLD still lists %q", got)
	}
	if got := in("C-DEFAULT", state.ListFilter{}); got != "INC-2 INC-1" {
		t.Fatalf("C-DEFAULT lists %q, want INC-2 INC-1", got)
	}
	if err := s.Acknowledge(ctx, "INC-1", "U1"); err != nil {
		t.Fatal(err)
	}
	if got := in("C-DEFAULT", state.ListFilter{Status: state.StatusAcknowledged, Severity: 3}); got != "INC-1" {
		t.Fatalf("C-DEFAULT's acknowledged SEV3 %q", got)
	}
	if got := in("", state.ListFilter{Channels: map[string]bool{"C-DEFAULT": true}}); got != "INC-2 INC-1" {
		t.Fatalf("every channel, for a member of C-DEFAULT: %q", got)
	}
	if ids, n, err := s.OpenIn(ctx, "C-DEFAULT", 5); err != nil || n != 2 || strings.Join(ids, " ") != "INC-2 INC-1" {
		t.Fatalf("a command without an ID in C-DEFAULT finds %v (%d open), %v", ids, n, err)
	}
	// Its buttons find it on the new root; the old root's lookup is gone.
	if id, err := s.ByThread(ctx, "C-DEFAULT", "1700000000.000500"); err != nil || id != "INC-1" {
		t.Fatalf("the new root finds %q, %v", id, err)
	}
	if id, _ := s.ByThread(ctx, "C-OLD", "1700000000.000400"); id != "" {
		t.Fatalf("the old root still finds %q", id)
	}
	if err := s.Resolve(ctx, "INC-1", "U1", ""); err != nil {
		t.Fatal(err)
	}
	if got := in("C-DEFAULT", state.ListFilter{}) + "|" + in("C-OLD", state.ListFilter{}); got != "INC-2|" {
		t.Fatalf("after INC-1 resolved: %q", got)
	}
}
