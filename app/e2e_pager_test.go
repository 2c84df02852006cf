package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/pagerduty/pdtest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// TestE2EEscalationWebhook: slack.escalation.webhook in PagerDuty's Events API v2 form gets one
// trigger when an unacknowledged SEV1 escalates (two replicas), with the incident's dedup key,
// then one resolve under the same key when a person resolves it; an incident that never
// escalated sends nothing; the routing key never reaches the logs.
func TestE2EEscalationWebhook(t *testing.T) {
	pd := pdtest.Start() // checks each event as PagerDuty's Events API v2 does
	t.Cleanup(pd.Close)
	const key = "Rk3yOfTheIntegrati0n0123456789ab"
	sl := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: sl,
		slackExtra: "  escalation: {after: 2s, mention: [S0ONCALL], severities: [SEV1], webhook: {url_env: PAGERDUTY_EVENTS_URL}}\n",
		env:        map[string]string{"PAGERDUTY_EVENTS_URL": pd.URL + "?routing_key=" + key}}
	a, b := start(t, su), start(t, su)
	a.ok("/webhooks/generic", alertFor("primary down", "pd-1", ""))
	waitFor(t, sl, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	if r := askIn(t, sl, "U0BOB", "C0DEFAULT", "incident resolve INC-1 too early to page"); !strings.Contains(r.Text, "resolved") {
		t.Fatalf("resolve INC-1: %q", r.Text)
	}
	b.ok("/webhooks/generic", alertFor("replication broken", "pd-2", ""))
	wait.For(t, 30*time.Second, "INC-2's trigger", func() bool {
		ev, _ := pd.Events()
		return len(ev) == 1
	})
	if r := askIn(t, sl, "U0BOB", "C0DEFAULT", "incident resolve INC-2 failed over"); !strings.Contains(r.Text, "resolved") {
		t.Fatalf("resolve INC-2: %q", r.Text)
	}
	wait.For(t, 30*time.Second, "INC-2's resolve", func() bool {
		ev, _ := pd.Events()
		return len(ev) == 2
	})
	events, bad := pd.Events()
	if len(bad) > 0 {
		t.Fatalf("PagerDuty refused %q", bad)
	}
	s := pdtest.Str
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
