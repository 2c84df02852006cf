// Package pdtest is a stand-in for PagerDuty's Events API v2 in tests: it checks each event
// as PagerDuty does
// (https://developer.pagerduty.com/api-reference/368ae3d938c9e-send-an-event-to-pager-duty),
// answers 202 to what it takes and 400 with the reason to the rest, and keeps both.
package pdtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Server is the stand-in; serve it with httptest (Start).
type Server struct {
	mu       sync.Mutex
	events   []map[string]any
	refused  []string
	answer   int
	URL      string // http://127.0.0.1:PORT/v2/enqueue, without a routing key
	httptest *httptest.Server
}

// Start serves a new Server on a loopback port; Close stops it.
func Start() *Server {
	s := &Server{}
	s.httptest = httptest.NewServer(s)
	s.URL = s.httptest.URL + "/v2/enqueue"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.httptest.Close() }

// Client is an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.httptest.Client() }

// Answer makes every later request get status (429, 500…) without a check; 0 checks again.
func (s *Server) Answer(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = status
}

// Events are the events it took, in order; Refused the reasons of the 400s it answered.
func (s *Server) Events() (events []map[string]any, refused []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.events...), append([]string(nil), s.refused...)
}

// Str reads a string field of an event.
func Str(v any) string { str, _ := v.(string); return str }

// ServeHTTP checks one event.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.answer != 0 {
		w.WriteHeader(s.answer)
		_, _ = w.Write([]byte(`{"status":"throttle","message":"Requests for this service are arriving too quickly."}`))
		return
	}
	ev, reason := check(r)
	if reason != "" {
		s.refused = append(s.refused, reason)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		b, _ := json.Marshal(map[string]any{"status": "invalid event", "message": "Event object is invalid", "errors": []string{reason}})
		_, _ = w.Write(b)
		return
	}
	s.events = append(s.events, ev)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	b, _ := json.Marshal(map[string]any{"status": "success", "message": "Event processed", "dedup_key": ev["dedup_key"]})
	_, _ = w.Write(b)
}

// check is the Events API v2's validation of a request; reason is "" when it is valid.
func check(r *http.Request) (ev map[string]any, reason string) {
	if r.Method != http.MethodPost || r.URL.Path != "/v2/enqueue" || r.Header.Get("Content-Type") != "application/json" {
		return nil, "want POST /v2/enqueue with application/json"
	}
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		return nil, "body is not JSON"
	}
	if r.URL.RawQuery != "" {
		return nil, "the routing key belongs in the body, not the URL"
	}
	if len(Str(ev["routing_key"])) != 32 {
		return nil, "routing_key must be 32 characters"
	}
	if d := Str(ev["dedup_key"]); d == "" || len(d) > 255 {
		return nil, "dedup_key is required for trigger and resolve, at most 255 characters"
	}
	switch ev["event_action"] {
	case "trigger":
		p, _ := ev["payload"].(map[string]any)
		if p == nil {
			return nil, "payload is required for trigger"
		}
		if sum := Str(p["summary"]); sum == "" || len([]rune(sum)) > 1024 || Str(p["source"]) == "" {
			return nil, "payload.summary (at most 1024) and payload.source are required"
		}
		switch p["severity"] {
		case "critical", "error", "warning", "info":
		default:
			return nil, "payload.severity must be critical, error, warning or info"
		}
		if ts, ok := p["timestamp"]; ok {
			if _, err := time.Parse(time.RFC3339, Str(ts)); err != nil {
				return nil, "payload.timestamp must be ISO 8601"
			}
		}
	case "resolve", "acknowledge":
	default:
		return nil, "event_action must be trigger, acknowledge or resolve"
	}
	return ev, ""
}
