package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// stormAlert is alert i of a storm of distinct alerts: one rule firing per partition, each
// with its own dedup key, routed to no pipeline (so to C0DEFAULT).
func stormAlert(i int) string {
	b, _ := json.Marshal(map[string]any{"source": "test", "title": "KafkaPartitionLag", "severity": "warning",
		"status": "firing", "dedup_key": fmt.Sprintf("lag-p%04d", i),
		"labels": map[string]string{"alertname": "KafkaPartitionLag", "partition": fmt.Sprint(i), "broker": fmt.Sprint("b", i%3)}})
	return string(b)
}

// answer is one alert's entry in a webhook's answer.
type answer struct {
	Incident string `json:"incident"`
	Result   string `json:"result"`
	Previous string `json:"previous"`
}

func answerOf(t *testing.T, body string) answer {
	t.Helper()
	var res struct{ Incidents []answer }
	if err := json.Unmarshal([]byte(body), &res); err != nil || len(res.Incidents) != 1 {
		t.Fatalf("webhook answer %q: %v", body, err)
	}
	return res.Incidents[0]
}

// storm sends alerts lo … hi-1 paced evenly over d, spread over the instances, and returns
// the answers by alert.
func storm(t *testing.T, lo, hi int, d time.Duration, ins ...*instance) map[int]answer {
	t.Helper()
	var mu sync.Mutex
	out := map[int]answer{}
	began := time.Now()
	concurrently(hi-lo, 16, func(k int) {
		time.Sleep(time.Until(began.Add(d * time.Duration(k) / time.Duration(hi-lo)))) // pacing, not waiting
		in := ins[k%len(ins)]
		code, body := in.post("/webhooks/generic", stormAlert(lo+k))
		if code != 200 {
			t.Errorf("alert %d answered %d: %s", lo+k, code, body)
			return
		}
		a := answerOf(t, body)
		mu.Lock()
		out[lo+k] = a
		mu.Unlock()
	})
	if t.Failed() {
		t.FailNow()
	}
	return out
}

func metricsOf(t *testing.T, in *instance) string {
	t.Helper()
	resp, err := http.Get(in.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitMetric polls /metrics (not a change of the fake) until it has line.
func waitMetric(t *testing.T, in *instance, line string) {
	t.Helper()
	if err := wait.Until(context.Background(), 20*time.Second, "/metrics showing "+line, func() bool {
		return strings.Contains(metricsOf(t, in), line)
	}); err != nil {
		t.Fatalf("%v:\n%s", err, grepLines(metricsOf(t, in), "streamwatch_"))
	}
}

// command runs a slash command in channel and returns the text of its reply.
func command(t *testing.T, s *slackfake.Server, channel, text string) string {
	t.Helper()
	p := askIn(t, s, "U0ALICE", channel, text)
	return p.Text + "\n" + string(p.Blocks)
}

var floodRoot = regexp.MustCompile(`^\S+ (INC-\d+): Alert flood in <#C0DEFAULT>`)

func floodRoots(s *slackfake.Server) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range roots(s, "C0DEFAULT") {
		if floodRoot.MatchString(m.Text) {
			out = append(out, m)
		}
	}
	return out
}

// TestE2EDistinctAlertStormFoldsIntoOneFlood: 2,000 distinct alerts in 10 s to one channel make
// the limit's worth of incidents and one flood incident that counts all the others, each under
// its own key; a key firing again during the flood joins it; after the flood (quiet_for 1s:
// once the storm's keys have left the minute) its thread says so, and a new key and a key
// that kept firing open their own incidents.
func TestE2EDistinctAlertStormFoldsIntoOneFlood(t *testing.T) {
	const total, limit = 2000, 20
	su := setup{prefix: testredis.Prefix(), alertsExtra: "  flood: {new_incidents_per_minute: 20, quiet_for: 1s}\n"}
	in := start(t, su)
	s := in.slack
	began := time.Now()
	answers := storm(t, 0, total, 10*time.Second, in)
	stormEnd := time.Now()
	t.Logf("%d alerts sent in %v", total, stormEnd.Sub(began).Round(time.Millisecond))

	results := map[string]int{}
	var flood string
	for i := range total {
		a := answers[i]
		results[a.Result]++
		if a.Result == "flooded" {
			if flood == "" {
				flood = a.Incident
			} else if a.Incident != flood {
				t.Fatalf("alert %d flooded into %s, others into %s", i, a.Incident, flood)
			}
		}
	}
	if results["opened"] != limit || results["flooded"] != total-limit || flood == "" {
		t.Fatalf("results %v, want %d opened and %d flooded into one incident", results, limit, total-limit)
	}
	// Slack: the limit's roots and the flood's, whose root ends up counting every flooded alert.
	wantText := fmt.Sprintf("%s: Alert flood in <#C0DEFAULT>: %d distinct alerts from 1 source since", flood, total-limit)
	waitFor(t, s, "the flood root to count every flooded alert", func(s *slackfake.Server) bool {
		f := floodRoots(s)
		return len(f) == 1 && strings.Contains(f[0].Text, wantText) && strings.Contains(f[0].Text, fmt.Sprintf("(SEV3 warning, open, %d occurrences)", total-limit))
	})
	if n := len(roots(s, "C0DEFAULT")); n > limit+1 {
		t.Fatalf("%d root messages, want at most %d", n, limit+1)
	}
	root := floodRoots(s)[0]
	// 1,980 new keys: the first 1,000 counted exactly, then one in ten, ten times.
	if !strings.Contains(string(root.Blocks), "Most common label values (estimated: counted 1 in 10 after the first 1,000):* ") ||
		!strings.Contains(string(root.Blocks), "`alertname=KafkaPartitionLag` 1980") || !strings.Contains(string(root.Blocks), "`broker=b1` ") {
		t.Fatalf("the flood root does not rank label values: %s", root.Blocks)
	}
	th := replies(s, "C0DEFAULT", root.TS)
	if len(th) == 0 || !strings.Contains(th[0].Text, "with a new key; newest: `lag-p") {
		t.Fatalf("flood thread %+v", th)
	}
	calls := len(s.CallsTo("chat.postMessage")) + len(s.CallsTo("chat.update"))
	t.Logf("%d Slack calls for the storm (%d roots); flood thread: %d replies", calls, len(roots(s, "C0DEFAULT")), len(th))

	// Every alert recorded under its own key and counted.
	rdb := redis.NewClient(mustParseURL(t, testredis.URL(t)))
	defer rdb.Close()
	st := state.New(rdb, su.prefix)
	inc, err := st.Get(context.Background(), flood)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Count != total-limit || inc.Flood.Listed != total-limit || inc.Flood.Distinct != total-limit {
		t.Fatalf("flood incident counts %d alerts, lists %d keys, %d distinct; want %d", inc.Count, inc.Flood.Listed, inc.Flood.Distinct, total-limit)
	}
	m := metricsOf(t, in)
	for _, want := range []string{
		`streamwatch_alerts_received_total{outcome="opened",source="generic"} 20`,
		`streamwatch_alerts_received_total{outcome="flooded",source="generic"} 1980`,
		`streamwatch_incidents_opened_total 21`,
		`streamwatch_incidents_open 21`,
		`streamwatch_flood_active{channel="C0DEFAULT"} 1`,
		`streamwatch_outbox_oldest_seconds `,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(m, "streamwatch_alerts", "streamwatch_incidents", "flood"))
		}
	}

	// A flooded key firing again joins the flood, and `incident show` lists it first.
	if a := answerOf(t, in.ok("/webhooks/generic", stormAlert(1500))); a.Result != "duplicate" || a.Incident != flood {
		t.Fatalf("a flooded key again during the flood: %+v", a)
	}
	show := command(t, s, "C0DEFAULT", "incident show "+flood)
	for _, want := range []string{"Alert flood in C0DEFAULT", "Occurrences: 1981", "Distinct alerts (keys): 1980",
		"Alerts by key (1980 keys, the 50 with the most occurrences shown)", "     2  lag-p1500", "     1  lag-p"} {
		if !strings.Contains(show, want) {
			t.Fatalf("incident show lacks %q:\n%s", want, show)
		}
	}

	// The flood ends quiet_for after the storm's last keys left the minute.
	waitForLong(t, s, 90*time.Second, "the flood's end in its thread", func(s *slackfake.Server) bool {
		for _, m := range replies(s, "C0DEFAULT", root.TS) {
			if strings.HasPrefix(m.Text, "The flood is over: at most 20 new alerts a minute for 1s") {
				return true
			}
		}
		return false
	})
	if d := time.Since(stormEnd); d < time.Minute {
		t.Fatalf("the flood ended %v after the storm, before its keys left the minute", d)
	}
	waitMetric(t, in, `streamwatch_flood_active{channel="C0DEFAULT"} 0`)
	fresh := answerOf(t, in.ok("/webhooks/generic", stormAlert(total+1)))
	again := answerOf(t, in.ok("/webhooks/generic", stormAlert(1500)))
	if fresh.Result != "opened" || again.Result != "opened" || fresh.Incident == again.Incident {
		t.Fatalf("after the flood: a new key %+v, a flooded key again %+v; want each its own incident", fresh, again)
	}
	waitFor(t, s, "their roots", func(s *slackfake.Server) bool {
		r := rootsByIncident(s, "C0DEFAULT")
		return r[fresh.Incident] == 1 && r[again.Incident] == 1
	})
	waitFor(t, s, "the flood root to say it is over", func(s *slackfake.Server) bool {
		m, _ := s.Message("C0DEFAULT", root.TS)
		return strings.Contains(m.Text, "Alert flood in <#C0DEFAULT> (over)")
	})
}

// TestE2ETwoReplicasShareOneFlood: distinct alerts split over two replicas make one flood.
func TestE2ETwoReplicasShareOneFlood(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s}
	a, b := start(t, su), start(t, su)
	const total = 400
	answers := storm(t, 0, total, 2*time.Second, a, b)
	results := map[string]int{}
	floods := map[string]bool{}
	for _, x := range answers {
		results[x.Result]++
		if x.Result == "flooded" {
			floods[x.Incident] = true
		}
	}
	if results["opened"] != 20 || results["flooded"] != total-20 || len(floods) != 1 {
		t.Fatalf("results %v, flood incidents %v; want 20 opened and one flood", results, floods)
	}
	waitFor(t, s, "21 roots, one of them the flood's counting 380", func(s *slackfake.Server) bool {
		f := floodRoots(s)
		return len(roots(s, "C0DEFAULT")) == 21 && len(f) == 1 && strings.Contains(f[0].Text, "380 distinct alerts")
	})
}

// TestE2EClosedIncidentExpires: with alerts.incident_retention 2s, a resolved incident leaves
// nothing in Redis (a SCAN finds no key naming it, no root lookup, no key link), while an open
// one keeps everything.
func TestE2EClosedIncidentExpires(t *testing.T) {
	su := setup{prefix: testredis.Prefix(), alertsExtra: "  incident_retention: 2s\n"}
	in := start(t, su)
	in.ok("/webhooks/generic", generic("disk almost full", "to-resolve"))
	in.ok("/webhooks/generic", generic("disk almost full", "stays-open"))
	s := in.slack
	waitFor(t, s, "two roots", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 2 })
	if reply := command(t, s, "C0DEFAULT", "incident resolve INC-1 done"); !strings.Contains(reply, "INC-1 resolved.") {
		t.Fatalf("resolve: %s", reply)
	}
	rdb := redis.NewClient(mustParseURL(t, testredis.URL(t)))
	defer rdb.Close()
	base := "{" + su.prefix + "}:"
	// What names INC-1: its keys, its root's lookup, its key's link.
	naming := func() []string {
		var out []string
		iter := rdb.Scan(context.Background(), 0, base+"*", 1000).Iterator()
		for iter.Next(context.Background()) {
			k := iter.Val()
			v := ""
			if rdb.Type(context.Background(), k).Val() == "string" {
				v = rdb.Get(context.Background(), k).Val()
			}
			if strings.Contains(k, "INC-1:") || strings.HasSuffix(k, "INC-1") || v == "INC-1" {
				out = append(out, k)
			}
		}
		return out
	}
	if n := naming(); len(n) < 4 {
		t.Fatalf("before expiry only %v name INC-1", n)
	}
	if err := wait.Until(context.Background(), 20*time.Second, "Redis forgetting INC-1", func() bool { return len(naming()) == 0 }); err != nil {
		t.Fatalf("20 s after resolving with a 2 s retention, Redis still holds %v", naming())
	}
	for _, k := range []string{"inc:INC-2", "inc:INC-2:alerts"} {
		if n, _ := rdb.Exists(context.Background(), base+k).Result(); n != 1 {
			t.Fatalf("the open incident lost %s", k)
		}
	}
	if reply := command(t, s, "C0DEFAULT", "incident show INC-1"); !strings.Contains(reply, "INC-1 does not exist") {
		t.Fatalf("show of the expired incident: %s", reply)
	}
}

// TestE2EStoredAlertCountsAsStoredWhenTheAnswerIsCutOff: senders that hang up while Redis is
// paused get no answer, but their alerts are stored and counted as opened, not as unavailable
// (some of them wait for a script run that others started, and stop waiting when they hang up).
func TestE2EStoredAlertCountsAsStoredWhenTheAnswerIsCutOff(t *testing.T) {
	su := setup{prefix: testredis.Prefix()}
	in := start(t, su)
	rdb := redis.NewClient(mustParseURL(t, testredis.URL(t)))
	defer rdb.Close()
	// Redis holds every write for a second; the senders wait 300 ms.
	if err := rdb.Do(context.Background(), "CLIENT", "PAUSE", "1000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	const n = 6
	client := &http.Client{Timeout: 300 * time.Millisecond}
	concurrently(n, n, func(i int) {
		req, _ := http.NewRequest("POST", in.url+"/webhooks/generic", strings.NewReader(generic("disk almost full", fmt.Sprint("cut-off-", i))))
		req.Header.Set("Authorization", "Bearer "+webhookToken)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("answered %d while Redis was paused: the test proves nothing", resp.StatusCode)
		}
	})
	waitMetric(t, in, fmt.Sprintf(`streamwatch_alerts_received_total{outcome="opened",source="generic"} %d`, n))
	if m := metricsOf(t, in); strings.Contains(m, `outcome="unavailable"`) {
		t.Fatalf("stored alerts counted as unavailable:\n%s", grepLines(m, "alerts_received"))
	}
	open, err := state.New(rdb, su.prefix).ListOpen(context.Background(), "")
	if err != nil || len(open) != n {
		t.Fatalf("%d alerts in Redis, want %d (%v)", len(open), n, err)
	}
}

func mustParseURL(t *testing.T, u string) *redis.Options {
	t.Helper()
	o, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestE2ECriticalAlertSurvivesAFlood: amid a flood of 500 SEV4 keys, a SEV1 (at
// alerts.flood.exempt_severity) opens its own incident, gets its own root and escalates; the
// flood's root counts its alerts by severity.
func TestE2ECriticalAlertSurvivesAFlood(t *testing.T) {
	const total, limit = 500, 20
	low := func(i int) string {
		return strings.Replace(stormAlert(i), `"severity":"warning"`, `"severity":"low"`, 1)
	}
	su := setup{prefix: testredis.Prefix(),
		alertsExtra: "  flood: {new_incidents_per_minute: 20, quiet_for: 1m, exempt_severity: SEV1}\n",
		slackExtra:  "  escalation: {after: 1s, mention: [S0ONCALL], severities: [SEV1]}\n"}
	in := start(t, su)
	s := in.slack
	var mu sync.Mutex
	var flood string
	concurrently(total, 16, func(i int) {
		a := answerOf(t, in.ok("/webhooks/generic", low(i)))
		if a.Result == "flooded" {
			mu.Lock()
			flood = a.Incident // one flood: every flooded answer names it
			mu.Unlock()
		}
	})
	if flood == "" {
		t.Fatal("500 new keys in a second made no flood")
	}
	crit := answerOf(t, in.ok("/webhooks/generic", alertFor("primary down", "primary-down", "")))
	if crit.Result != "opened" || crit.Incident == flood {
		t.Fatalf("the SEV1 amid the flood: %+v, want its own incident (the flood is %s)", crit, flood)
	}
	// A warning-level new key still joins the flood.
	if a := answerOf(t, in.ok("/webhooks/generic", stormAlert(total+1))); a.Result != "flooded" || a.Incident != flood {
		t.Fatalf("a SEV3 new key during the flood: %+v", a)
	}
	var root slackfake.Message
	waitFor(t, s, "the SEV1's own root", func(s *slackfake.Server) bool {
		root = incidentRoot(s, "C0DEFAULT", crit.Incident)
		return root.TS != "" && strings.Contains(root.Text, "primary down")
	})
	waitFor(t, s, "the SEV1's escalation", func(s *slackfake.Server) bool {
		return len(escalations(s, "C0DEFAULT", root.TS)) == 1
	})
	want := fmt.Sprintf("*By severity:* SEV3 warning 1 · SEV4 low %d", total-limit)
	waitFor(t, s, "the flood root counting by severity", func(s *slackfake.Server) bool {
		f := floodRoots(s)
		return len(f) == 1 && strings.Contains(string(f[0].Blocks), want)
	})
}
