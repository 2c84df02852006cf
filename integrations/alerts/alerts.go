// Package alerts turns webhook payloads from Prometheus Alertmanager, Grafana
// Alerting and generic senders into normalized [Alert] values, normalizes their
// severities and routes them to a pipeline, a channel and a dedup key.
//
// The package knows neither Slack nor Redis nor the configuration file: the
// caller hands it already-validated [Route] values.
//
// Every decoder treats its input as hostile. A payload that is not valid UTF-8,
// is nested deeper than [MaxNestingDepth], carries more than
// [MaxAlertsPerPayload] alerts, more than [MaxLabelsPerAlert] labels or
// annotations on one alert, or a string longer than [MaxStringBytes] is
// rejected with a [*DecodeError] whose Reason names the offending JSON path.
// Unknown fields are ignored, so newer sender versions keep working.
package alerts

import (
	"fmt"
	"time"
)

// Limits applied by every decoder. Each exceeded limit is a [*DecodeError].
const (
	// MaxNestingDepth is the deepest nesting of JSON objects and arrays
	// accepted; the top-level value is depth 1.
	MaxNestingDepth = 32
	// MaxAlertsPerPayload is the most alerts one payload may carry.
	MaxAlertsPerPayload = 1000
	// MaxLabelsPerAlert bounds labels and, separately, annotations of one alert.
	MaxLabelsPerAlert = 100
	// MaxStringBytes bounds every string read from a payload: label and
	// annotation names and values, titles, statuses, URLs, dedup keys.
	MaxStringBytes = 16 << 10
)

// Status says whether an alert is still firing.
type Status string

// The two statuses every sender agrees on.
const (
	StatusFiring   Status = "firing"
	StatusResolved Status = "resolved"
)

// Valid reports whether s is StatusFiring or StatusResolved.
func (s Status) Valid() bool { return s == StatusFiring || s == StatusResolved }

// Source names of decoded alerts.
const (
	SourceAlertmanager = "alertmanager"
	SourceGrafana      = "grafana"
	SourceGeneric      = "generic"
)

// Alert is one normalized alert. The decoders fill everything up to DedupKey;
// [Router.Route] fills Pipeline, Channel and Key.
type Alert struct {
	// Source is SourceAlertmanager, SourceGrafana or SourceGeneric.
	Source string
	// Fingerprint identifies the alert's label set. Alertmanager and Grafana
	// fingerprints are taken as given (derived from the labels when absent);
	// generic fingerprints are the hex SHA-256 of the dedup_key, or of the
	// sorted labels and the title.
	Fingerprint string
	Status      Status
	// Title is annotations.summary, else labels.alertname (Alertmanager and
	// Grafana), or the payload's title (generic). Never empty.
	Title    string
	Severity Severity
	// Labels and Annotations are never nil after decoding.
	Labels      map[string]string
	Annotations map[string]string
	// StartsAt and EndsAt are zero when the sender left them out or sent
	// Go's zero time ("0001-01-01T00:00:00Z"). A firing alert's EndsAt, when
	// set, is the sender's estimate, not a resolution.
	StartsAt, EndsAt time.Time
	// URL is Alertmanager's generatorURL; Grafana's panelURL, else
	// dashboardURL, else generatorURL; the generic payload's url.
	URL string
	// Links are every link the sender gave, by kind, as sent: nothing here
	// checks them (whoever shows them keeps only http and https).
	Links Links
	// DedupKey is the generic payload's explicit dedup_key, else "".
	DedupKey string

	// Pipeline is the routed pipeline, "" when none matched.
	Pipeline string
	// Channel is the pipeline's channel, else the router's default channel.
	Channel string
	// Key groups alerts into one incident: DedupKey when given, else built
	// from the router's group_by labels.
	Key string
}

// Links are an alert's own links, "" where the sender gave none.
type Links struct {
	// Generator is the rule's page: Alertmanager's and Grafana's
	// generatorURL, the generic payload's url.
	Generator string
	Dashboard string // Grafana's dashboardURL
	Panel     string // Grafana's panelURL
	Silence   string // Grafana's silenceURL
	// Runbook is the runbook_url annotation (Alertmanager's and Grafana's
	// convention for a rule's runbook).
	Runbook string
}

// DecodeError says why a payload was rejected. Reason is a sentence fit for
// an HTTP 400 response body; it names the JSON path at fault and never echoes
// more than a short, quoted excerpt of the payload.
type DecodeError struct {
	Reason string
}

func (e *DecodeError) Error() string { return "invalid alert payload: " + e.Reason }

func decodeErrorf(format string, args ...any) *DecodeError {
	return &DecodeError{Reason: fmt.Sprintf(format, args...)}
}
