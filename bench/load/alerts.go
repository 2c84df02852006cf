package load

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"
)

// Alert is one alert, as Alertmanager's webhook and its POST /api/v2/alerts both carry it.
type Alert struct {
	Labels      map[string]string
	Annotations map[string]string
	StartsAt    time.Time
}

// Fingerprint is a stable hash of the labels, 16 hex digits like Alertmanager's.
func (a Alert) Fingerprint() string {
	keys := make([]string, 0, len(a.Labels))
	for k := range a.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := fnv.New64a()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\xff%s\xff", k, a.Labels[k])
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// Mix describes the alerts of a run: Batch alerts per request, a fraction Dup of them
// duplicates of Hot alerts that were opened beforehand (cycling through them), the others new
// alerts that no run has sent before.
type Mix struct {
	Run      string  // makes the new alerts' names unique to the run
	Batch    int     // alerts per request (1 when 0)
	Dup      float64 // fraction of duplicates, 0 to 1
	Hot      int     // how many distinct alerts the duplicates repeat (1 when 0)
	StartsAt time.Time
}

func (m Mix) alert(name string) Alert {
	return Alert{
		Labels: map[string]string{"alertname": name, "service": "bench", "severity": "warning", "instance": "bench-1"},
		Annotations: map[string]string{"summary": name,
			"description": "alert from the streamwatch load generator"},
		StartsAt: m.StartsAt,
	}
}

// HotAlerts are the alerts the duplicates repeat; send them once before the run, so that their
// incidents are open.
func (m Mix) HotAlerts() []Alert {
	out := make([]Alert, max(m.Hot, 1))
	for i := range out {
		out[i] = m.alert(fmt.Sprintf("bench hot %d", i))
	}
	return out
}

// Requests returns the alerts of n requests. Duplicates are spread evenly: alert k (counting
// across requests) is a duplicate when ⌊(k+1)·Dup⌋ > ⌊k·Dup⌋, so with Dup 0.5 every other alert
// is one, in a batch of 20 as across requests of 1.
func (m Mix) Requests(n int) [][]Alert {
	batch := max(m.Batch, 1)
	hot := m.HotAlerts()
	out := make([][]Alert, n)
	k, dups := 0, 0
	for i := range out {
		req := make([]Alert, batch)
		for j := range req {
			if int(float64(k+1)*m.Dup) > int(float64(k)*m.Dup) {
				req[j] = hot[dups%len(hot)]
				dups++
			} else {
				req[j] = m.alert(fmt.Sprintf("bench %s %d", m.Run, k))
			}
			k++
		}
		out[i] = req
	}
	return out
}

// Format is how a request carries its alerts.
type Format string

// The formats.
const (
	// Webhook is Alertmanager's webhook (version 4), what streamwatch's
	// POST /webhooks/alertmanager takes.
	Webhook Format = "webhook"
	// API is the body of Alertmanager's own POST /api/v2/alerts: a JSON array of alerts.
	API Format = "api"
)

type webhookAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

type webhookBody struct {
	Receiver          string            `json:"receiver"`
	Status            string            `json:"status"`
	Alerts            []webhookAlert    `json:"alerts"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
}

type apiAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	GeneratorURL string            `json:"generatorURL"`
}

// Body encodes one request's alerts in format f.
func Body(f Format, alerts []Alert) ([]byte, error) {
	switch f {
	case Webhook:
		b := webhookBody{Receiver: "streamwatch", Status: "firing", GroupLabels: map[string]string{},
			CommonLabels: map[string]string{"service": "bench"}, CommonAnnotations: map[string]string{},
			ExternalURL: "http://127.0.0.1:9093", Version: "4", GroupKey: `{}:{service="bench"}`}
		for _, a := range alerts {
			b.Alerts = append(b.Alerts, webhookAlert{Status: "firing", Labels: a.Labels, Annotations: a.Annotations,
				StartsAt: a.StartsAt.UTC().Format(time.RFC3339Nano), EndsAt: "0001-01-01T00:00:00Z",
				Fingerprint: a.Fingerprint()})
		}
		return json.Marshal(b)
	case API:
		out := make([]apiAlert, 0, len(alerts))
		for _, a := range alerts {
			out = append(out, apiAlert{Labels: a.Labels, Annotations: a.Annotations,
				StartsAt: a.StartsAt.UTC().Format(time.RFC3339Nano)})
		}
		return json.Marshal(out)
	}
	return nil, fmt.Errorf("unknown body format %q (want %s or %s)", f, Webhook, API)
}

// Bodies encodes every request of reqs in format f.
func Bodies(f Format, reqs [][]Alert) ([][]byte, error) {
	out := make([][]byte, len(reqs))
	for i, r := range reqs {
		b, err := Body(f, r)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// ParseFormat accepts "webhook" and "api".
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case Webhook, API:
		return f, nil
	}
	return "", fmt.Errorf("unknown body format %q (want %s or %s)", s, Webhook, API)
}
