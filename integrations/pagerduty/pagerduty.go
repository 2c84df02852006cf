// Package pagerduty sends incidents to PagerDuty's Events API v2
// (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/): a trigger for each
// escalation, a resolve when the incident resolves, both under the incident's dedup key, so
// that a phone rings when nobody reads Slack. It knows neither Slack nor Redis: it takes an
// Event and answers whether PagerDuty took it, and whether a retry can help. It makes no
// words for people: the caller passes the summary and the link's text in the Event.
package pagerduty

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Actions of an Event.
const (
	Trigger = "trigger"
	Resolve = "resolve"
)

// Event is one escalation or resolution of an incident.
type Event struct {
	Action string // Trigger or Resolve
	// DedupKey names the incident in PagerDuty: a trigger under a key already open adds to
	// it, a resolve closes it.
	DedupKey string
	Summary  string // a trigger's one-line summary (cut to PagerDuty's 1,024 characters)
	Severity int    // SEV1 … SEV5 as 1 … 5
	Source   string // where it comes from: the pipeline, or the channel
	Level    int    // the escalation level (1: the first)
	// Incident is streamwatch's incident id, Link a URL to it (the Slack thread) and LinkText
	// what PagerDuty shows for the link, worded by the caller; all optional.
	Incident, Link, LinkText string
	At                       time.Time
}

// Client posts Events to one Events API v2 integration.
type Client struct {
	endpoint   string // the URL without its routing_key
	routingKey string
	http       *http.Client
}

// New returns a Client for rawURL, the Events API v2 URL with the integration's routing key as
// its routing_key query parameter
// (https://events.pagerduty.com/v2/enqueue?routing_key=R0…). The URL is a secret: errors
// never quote it. httpClient nil means a client with a 10 s timeout.
func New(rawURL string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("pagerduty: the webhook URL must be an http:// or https:// URL")
	}
	q := u.Query()
	key := q.Get("routing_key")
	if key == "" {
		return nil, errors.New("pagerduty: the webhook URL has no routing_key query parameter (the integration key)")
	}
	q.Del("routing_key")
	u.RawQuery = q.Encode()
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{endpoint: u.String(), routingKey: key, http: httpClient}, nil
}

// body is the Events API v2 request.
type body struct {
	RoutingKey  string   `json:"routing_key"`
	EventAction string   `json:"event_action"`
	DedupKey    string   `json:"dedup_key"`
	Payload     *payload `json:"payload,omitempty"`
	Client      string   `json:"client,omitempty"`
	ClientURL   string   `json:"client_url,omitempty"`
	Links       []link   `json:"links,omitempty"`
}

type payload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp,omitempty"`
	Component     string         `json:"component,omitempty"`
	Class         string         `json:"class,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

type link struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// maxSummary is PagerDuty's limit on a summary.
const maxSummary = 1024

// Severity is PagerDuty's severity for SEV1 … SEV5: critical, error, warning, info, info.
func Severity(sev int) string {
	switch sev {
	case 1:
		return "critical"
	case 2:
		return "error"
	case 3:
		return "warning"
	}
	return "info"
}

func (c *Client) request(e Event) (body, error) {
	if e.DedupKey == "" {
		return body{}, errors.New("pagerduty: an event needs a dedup key")
	}
	b := body{RoutingKey: c.routingKey, EventAction: e.Action, DedupKey: e.DedupKey}
	switch e.Action {
	case Resolve:
		return b, nil
	case Trigger:
	default:
		return body{}, fmt.Errorf("pagerduty: unknown event action %q", e.Action)
	}
	summary := []rune(e.Summary)
	if len(summary) > maxSummary {
		summary = append(summary[:maxSummary-1], '…')
	}
	source := e.Source
	if source == "" {
		source = "streamwatch"
	}
	p := &payload{Summary: string(summary), Source: source, Severity: Severity(e.Severity), Class: fmt.Sprintf("SEV%d", e.Severity),
		Component: "streamwatch", CustomDetails: map[string]any{"escalation_level": e.Level}}
	if e.Incident != "" {
		p.CustomDetails["incident"] = e.Incident
	}
	if !e.At.IsZero() {
		p.Timestamp = e.At.UTC().Format(time.RFC3339)
	}
	b.Payload, b.Client = p, "streamwatch"
	if e.Link != "" {
		b.ClientURL = e.Link
		b.Links = []link{{Href: e.Link, Text: e.LinkText}}
	}
	return b, nil
}

// Error is PagerDuty's refusal of an event, or a failure to reach it.
type Error struct {
	Status  int    // the HTTP status; 0 when PagerDuty was not reached
	Message string // PagerDuty's message and errors, or the transport's error
	// Retry is true when sending the same event again can succeed: a 429, a 5xx, a network
	// failure. A 400 (a malformed event, an unknown routing key) never will.
	Retry bool
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return "pagerduty: " + e.Message
	}
	return fmt.Sprintf("pagerduty: HTTP %d: %s", e.Status, e.Message)
}

// Retryable reports whether err is worth sending the event again for.
func Retryable(err error) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Retry
}

// Notify sends e once. PagerDuty answers 202 when it took the event.
func (c *Client) Notify(ctx context.Context, e Event) error {
	b, err := c.request(e)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("pagerduty: encode event: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(raw))
	if err != nil {
		return errors.New("pagerduty: cannot make the request") // its error would quote the URL
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error quotes the URL; keep only what went wrong.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &Error{Message: "send event: " + err.Error(), Retry: true}
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusOK {
		return nil
	}
	var pd struct {
		Status  string   `json:"status"`
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
	}
	msg := http.StatusText(resp.StatusCode)
	if json.Unmarshal(answer, &pd) == nil && pd.Message != "" {
		msg = pd.Message
		for _, e := range pd.Errors {
			msg += "; " + e
		}
	}
	return &Error{Status: resp.StatusCode, Message: msg,
		Retry: resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500}
}
