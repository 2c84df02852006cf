package pagerduty

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/pagerduty/pdtest"
)

const routingKey = "R0123456789abcdef0123456789abcde"

func TestTriggerThenResolve(t *testing.T) {
	api := pdtest.Start()
	defer api.Close()
	c, err := New(api.URL+"?routing_key="+routingKey, api.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := time.Date(2026, 12, 5, 3, 12, 0, 0, time.UTC)
	long := strings.Repeat("lag ", 400)
	if err := c.Notify(ctx, Event{Action: Trigger, DedupKey: "streamwatch/INC-7", Summary: "INC-7: " + long, Severity: 1,
		Source: "sms-replies", Level: 2, Incident: "INC-7", Link: "https://streamwatch.slack.com/archives/C1/p1",
		LinkText: "The incident's Slack thread", At: at}); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(ctx, Event{Action: Resolve, DedupKey: "streamwatch/INC-7"}); err != nil {
		t.Fatal(err)
	}
	events, refused := api.Events()
	if len(events) != 2 || len(refused) > 0 {
		t.Fatalf("PagerDuty took %d events (refused %q), want trigger and resolve", len(events), refused)
	}
	trig, res := events[0], events[1]
	p := trig["payload"].(map[string]any)
	str := pdtest.Str
	for _, c := range []struct{ got, want any }{
		{trig["event_action"], "trigger"}, {trig["routing_key"], routingKey}, {trig["dedup_key"], "streamwatch/INC-7"},
		{p["severity"], "critical"}, {p["source"], "sms-replies"}, {p["timestamp"], "2026-12-05T03:12:00Z"},
		{len([]rune(str(p["summary"]))), 1024}, {p["custom_details"].(map[string]any)["escalation_level"], 2.0},
		{trig["client_url"], "https://streamwatch.slack.com/archives/C1/p1"},
		{pdtest.Str(trig["links"].([]any)[0].(map[string]any)["text"]), "The incident's Slack thread"},
		{res["event_action"], "resolve"}, {res["dedup_key"], "streamwatch/INC-7"}, {res["routing_key"], routingKey},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v (trigger %v, resolve %v)", c.got, c.want, trig, res)
		}
	}
}

func TestErrors(t *testing.T) {
	api := pdtest.Start()
	defer api.Close()
	ctx := context.Background()
	c, _ := New(api.URL+"?routing_key="+routingKey, api.Client())
	for _, tc := range []struct {
		answer int
		retry  bool
	}{{http.StatusTooManyRequests, true}, {http.StatusInternalServerError, true}, {http.StatusBadRequest, false}} {
		api.Answer(tc.answer)
		err := c.Notify(ctx, Event{Action: Trigger, DedupKey: "k", Summary: "s", Severity: 2})
		if err == nil || Retryable(err) != tc.retry {
			t.Errorf("HTTP %d: %v, retryable %v, want %v", tc.answer, err, Retryable(err), tc.retry)
		}
	}
	api.Answer(0)
	bad, _ := New(api.URL+"?routing_key=short", api.Client())
	if err := bad.Notify(ctx, Event{Action: Trigger, DedupKey: "k", Summary: "s", Severity: 2}); err == nil || Retryable(err) ||
		!strings.Contains(err.Error(), "routing_key must be 32 characters") {
		t.Errorf("a wrong routing key: %v, want PagerDuty's reason, not retryable", err)
	}
	api.Close()
	err := c.Notify(ctx, Event{Action: Resolve, DedupKey: "k"})
	if !Retryable(err) || strings.Contains(err.Error(), routingKey) {
		t.Errorf("PagerDuty unreachable: %v, want retryable and no routing key", err)
	}
	for _, raw := range []string{"ftp://x/v2/enqueue?routing_key=" + routingKey, "https://events.pagerduty.com/v2/enqueue", "::"} {
		if _, err := New(raw, nil); err == nil || strings.Contains(err.Error(), routingKey) {
			t.Errorf("New(%q): %v, want an error that quotes no key", raw, err)
		}
	}
}
