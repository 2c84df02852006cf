package pagerduty

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// eventsAPI is a test server that checks each request as PagerDuty's Events API v2 does
// (https://developer.pagerduty.com/api-reference/368ae3d938c9e-send-an-event-to-pager-duty)
// and keeps the events it accepted.
type eventsAPI struct {
	mu       sync.Mutex
	accepted []map[string]any
	answer   int // a forced status, 0: check and answer 202
}

func (a *eventsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	refuse := func(msg string) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"invalid event","message":"Event object is invalid","errors":["` + msg + `"]}`))
	}
	if a.answer != 0 {
		w.WriteHeader(a.answer)
		_, _ = w.Write([]byte(`{"status":"throttle","message":"Requests for this service are arriving too quickly."}`))
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v2/enqueue" || r.Header.Get("Content-Type") != "application/json" {
		refuse("want POST /v2/enqueue with application/json")
		return
	}
	var ev map[string]any
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		refuse("body is not JSON")
		return
	}
	if r.URL.Query().Has("routing_key") {
		refuse("the routing key belongs in the body, not the URL")
		return
	}
	if len(str(ev["routing_key"])) != 32 {
		refuse("routing_key must be 32 characters")
		return
	}
	dedup := str(ev["dedup_key"])
	if dedup == "" || len(dedup) > 255 {
		refuse("dedup_key is required for trigger and resolve, at most 255 characters")
		return
	}
	switch ev["event_action"] {
	case "trigger":
		p, _ := ev["payload"].(map[string]any)
		if p == nil {
			refuse("payload is required for trigger")
			return
		}
		sum := str(p["summary"])
		if sum == "" || len([]rune(sum)) > 1024 || str(p["source"]) == "" {
			refuse("payload.summary (at most 1024) and payload.source are required")
			return
		}
		switch p["severity"] {
		case "critical", "error", "warning", "info":
		default:
			refuse("payload.severity must be critical, error, warning or info")
			return
		}
		if ts, ok := p["timestamp"]; ok {
			if _, err := time.Parse(time.RFC3339, str(ts)); err != nil {
				refuse("payload.timestamp must be ISO 8601")
				return
			}
		}
	case "resolve", "acknowledge":
	default:
		refuse("event_action must be trigger, acknowledge or resolve")
		return
	}
	a.accepted = append(a.accepted, ev)
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"status":"success","message":"Event processed","dedup_key":"` + dedup + `"}`))
}

func str(v any) string { s, _ := v.(string); return s }

const routingKey = "R0123456789abcdef0123456789abcde"

func TestTriggerThenResolve(t *testing.T) {
	api := &eventsAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	c, err := New(srv.URL+"/v2/enqueue?routing_key="+routingKey, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := time.Date(2026, 12, 5, 3, 12, 0, 0, time.UTC)
	long := strings.Repeat("lag ", 400)
	if err := c.Notify(ctx, Event{Action: Trigger, DedupKey: "streamwatch/INC-7", Summary: "INC-7: " + long, Severity: 1,
		Source: "sms-replies", Level: 2, Incident: "INC-7", Link: "https://streamwatch.slack.com/archives/C1/p1", At: at}); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(ctx, Event{Action: Resolve, DedupKey: "streamwatch/INC-7"}); err != nil {
		t.Fatal(err)
	}
	if len(api.accepted) != 2 {
		t.Fatalf("PagerDuty took %d events, want trigger and resolve", len(api.accepted))
	}
	trig, res := api.accepted[0], api.accepted[1]
	p := trig["payload"].(map[string]any)
	for _, c := range []struct{ got, want any }{
		{trig["event_action"], "trigger"}, {trig["routing_key"], routingKey}, {trig["dedup_key"], "streamwatch/INC-7"},
		{p["severity"], "critical"}, {p["source"], "sms-replies"}, {p["timestamp"], "2026-12-05T03:12:00Z"},
		{len([]rune(str(p["summary"]))), 1024}, {p["custom_details"].(map[string]any)["escalation_level"], 2.0},
		{trig["client_url"], "https://streamwatch.slack.com/archives/C1/p1"},
		{res["event_action"], "resolve"}, {res["dedup_key"], "streamwatch/INC-7"}, {res["routing_key"], routingKey},
	} {
		if c.got != c.want {
			t.Errorf("got %v, want %v (trigger %v, resolve %v)", c.got, c.want, trig, res)
		}
	}
}

func TestErrors(t *testing.T) {
	api := &eventsAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	ctx := context.Background()
	c, _ := New(srv.URL+"/v2/enqueue?routing_key="+routingKey, srv.Client())
	for _, tc := range []struct {
		answer int
		retry  bool
	}{{http.StatusTooManyRequests, true}, {http.StatusInternalServerError, true}, {http.StatusBadRequest, false}} {
		api.answer = tc.answer
		err := c.Notify(ctx, Event{Action: Trigger, DedupKey: "k", Summary: "s", Severity: 2})
		if err == nil || Retryable(err) != tc.retry {
			t.Errorf("HTTP %d: %v, retryable %v, want %v", tc.answer, err, Retryable(err), tc.retry)
		}
	}
	api.answer = 0
	bad, _ := New(srv.URL+"/v2/enqueue?routing_key=short", srv.Client())
	if err := bad.Notify(ctx, Event{Action: Trigger, DedupKey: "k", Summary: "s", Severity: 2}); err == nil || Retryable(err) ||
		!strings.Contains(err.Error(), "routing_key must be 32 characters") {
		t.Errorf("a wrong routing key: %v, want PagerDuty's reason, not retryable", err)
	}
	srv.Close()
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
