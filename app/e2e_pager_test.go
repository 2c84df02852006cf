package app_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// pagerDuty is an HTTP server that checks each event as PagerDuty's Events API v2 does
// (POST /v2/enqueue, JSON, a 32-character routing_key, event_action, dedup_key; a trigger's
// payload with summary, source and a severity PagerDuty knows), answers 202 to what it takes and
// 400 with the reason to the rest, and keeps what it took.
type pagerDuty struct {
	mu     sync.Mutex
	events []map[string]any
	bad    []string
}

func (p *pagerDuty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ev map[string]any
	reason := ""
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v2/enqueue" || r.Header.Get("Content-Type") != "application/json":
		reason = "want POST /v2/enqueue, application/json"
	case json.NewDecoder(r.Body).Decode(&ev) != nil:
		reason = "not JSON"
	case len(s(ev["routing_key"])) != 32 || r.URL.RawQuery != "":
		reason = "routing_key: 32 characters, in the body"
	case s(ev["dedup_key"]) == "":
		reason = "dedup_key required"
	case ev["event_action"] == "trigger":
		pl, _ := ev["payload"].(map[string]any)
		if pl == nil || s(pl["summary"]) == "" || s(pl["source"]) == "" ||
			!strings.Contains(" critical error warning info ", " "+s(pl["severity"])+" ") {
			reason = "payload.summary, payload.source and payload.severity required"
		}
	case ev["event_action"] != "resolve" && ev["event_action"] != "acknowledge":
		reason = "event_action: trigger, acknowledge or resolve"
	}
	if reason != "" {
		p.bad = append(p.bad, reason)
		http.Error(w, `{"status":"invalid event","message":"`+reason+`"}`, http.StatusBadRequest)
		return
	}
	p.events = append(p.events, ev)
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"status":"success","message":"Event processed","dedup_key":"` + s(ev["dedup_key"]) + `"}`))
}

func (p *pagerDuty) took() (events []map[string]any, bad []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.events...), append([]string(nil), p.bad...)
}

func s(v any) string { str, _ := v.(string); return str }

// TestE2EEscalationWebhook: slack.escalation.webhook in PagerDuty's Events API v2 form gets one
// trigger when an unacknowledged SEV1 escalates (two replicas), with the incident's dedup key,
// then one resolve under the same key when a person resolves it; an incident that never
// escalated sends nothing; the routing key never reaches the logs.
func TestE2EEscalationWebhook(t *testing.T) {
	pd := &pagerDuty{}
	srv := httptest.NewServer(pd)
	t.Cleanup(srv.Close)
	const key = "Rk3yOfTheIntegrati0n0123456789ab"
	sl := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: sl,
		slackExtra: "  escalation: {after: 2s, mention: [S0ONCALL], severities: [SEV1], webhook: {url_env: PAGERDUTY_EVENTS_URL}}\n",
		env:        map[string]string{"PAGERDUTY_EVENTS_URL": srv.URL + "/v2/enqueue?routing_key=" + key}}
	a, b := start(t, su), start(t, su)
	a.ok("/webhooks/generic", alertFor("primary down", "pd-1", ""))
	waitFor(t, sl, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	if r := askIn(t, sl, "U0BOB", "C0DEFAULT", "incident resolve INC-1 too early to page"); !strings.Contains(r.Text, "resolved") {
		t.Fatalf("resolve INC-1: %q", r.Text)
	}
	b.ok("/webhooks/generic", alertFor("replication broken", "pd-2", ""))
	wait.For(t, 30*time.Second, "INC-2's trigger", func() bool {
		ev, _ := pd.took()
		return len(ev) == 1
	})
	if r := askIn(t, sl, "U0BOB", "C0DEFAULT", "incident resolve INC-2 failed over"); !strings.Contains(r.Text, "resolved") {
		t.Fatalf("resolve INC-2: %q", r.Text)
	}
	wait.For(t, 30*time.Second, "INC-2's resolve", func() bool {
		ev, _ := pd.took()
		return len(ev) == 2
	})
	events, bad := pd.took()
	if len(bad) > 0 {
		t.Fatalf("PagerDuty refused %q", bad)
	}
	trig, res := events[0], events[1]
	dedup := su.prefix + "/INC-2"
	pl, _ := trig["payload"].(map[string]any)
	for _, c := range []struct{ what, got, want string }{
		{"trigger action", s(trig["event_action"]), "trigger"}, {"trigger dedup_key", s(trig["dedup_key"]), dedup},
		{"routing_key", s(trig["routing_key"]), key}, {"severity", s(pl["severity"]), "critical"},
		{"summary", s(pl["summary"]), "INC-2: replication broken"},
		{"resolve action", s(res["event_action"]), "resolve"}, {"resolve dedup_key", s(res["dedup_key"]), dedup},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q (trigger %v, resolve %v)", c.what, c.got, c.want, trig, res)
		}
	}
	for _, in := range []*instance{a, b} {
		if strings.Contains(in.logs.String(), key) {
			t.Error("the routing key reached the logs")
		}
	}
}
