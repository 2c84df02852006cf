// Package metrics holds streamwatch's Prometheus registry: what the webhooks, the deliverer,
// the commands, the probes and the Kafka sampler measure, served at /metrics.
package metrics

import (
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are streamwatch's Prometheus metrics. Labels are bounded: sources, outcomes, Slack
// method names, HTTP statuses, command names, pipeline names and channel IDs (of floods), never
// ids or partitions.
type Metrics struct {
	reg             *prometheus.Registry
	AlertsReceived  *prometheus.CounterVec
	IncidentsOpened prometheus.Counter
	Duplicates      prometheus.Counter
	OutboxDepth     prometheus.Gauge
	OutboxOldest    prometheus.Gauge
	IncidentsOpen   prometheus.Gauge
	Flood           *prometheus.GaugeVec
	DeliveryLatency prometheus.Histogram
	SlackCalls      *prometheus.CounterVec
	SlackErrors     *prometheus.CounterVec
	// SlackOrphaned counts incidents whose Slack messages lost their place, by case:
	// message_not_found (the root was deleted: posted again), is_archived, channel_not_found,
	// not_in_channel (moved to slack.default_channel).
	SlackOrphaned  *prometheus.CounterVec
	CommandSeconds *prometheus.HistogramVec
	ProbeResults   *prometheus.CounterVec
	Lag            *prometheus.GaugeVec
	// ReplicaWait and ReplicaWaitTimeouts measure Redis's WAIT (redis.min_replicas_acked) by
	// what it confirms: webhook, outbox, command, lock.
	ReplicaWait         *prometheus.HistogramVec
	ReplicaWaitTimeouts *prometheus.CounterVec
	// TimeToDetect, TimeToAcknowledge and TimeToResolve are an incident's clocks by source
	// (detect, heartbeat, probe, alertmanager, …): from the fault to the incident, from the
	// incident to its acknowledgement, to its resolution.
	TimeToDetect      *prometheus.HistogramVec
	TimeToAcknowledge *prometheus.HistogramVec
	TimeToResolve     *prometheus.HistogramVec
}

// New registers every family on a registry of its own (several bots in one test
// process must not collide).
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.AlertsReceived = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamwatch_alerts_received_total",
		Help: "Alerts received by webhook source and outcome: opened, duplicate, flooded (joined a flood incident), correlated (joined the pipeline's incident), silenced (held by a label silence), resolved, ignored (recorded all of them); unreplicated (recorded on the primary, not confirmed by redis.min_replicas_acked replicas: answered 503); rejected, unavailable (not recorded)."}, []string{"source", "outcome"})
	m.IncidentsOpened = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamwatch_incidents_opened_total", Help: "Incidents opened."})
	m.Duplicates = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamwatch_duplicates_threaded_total", Help: "Alerts that joined an open incident."})
	m.OutboxDepth = prometheus.NewGauge(prometheus.GaugeOpts{Name: "streamwatch_outbox_depth", Help: "Slack deliveries waiting in the outbox."})
	m.OutboxOldest = prometheus.NewGauge(prometheus.GaugeOpts{Name: "streamwatch_outbox_oldest_seconds",
		Help: "Age of the oldest Slack delivery waiting in the outbox (0 when none waits)."})
	m.IncidentsOpen = prometheus.NewGauge(prometheus.GaugeOpts{Name: "streamwatch_incidents_open",
		Help: "Open and acknowledged incidents, flood incidents included."})
	m.Flood = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "streamwatch_flood_active",
		Help: "1 while the channel is in a flood (new alerts join its flood incident), else 0."}, []string{"channel"})
	m.DeliveryLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamwatch_outbox_delivery_seconds",
		Help: "Time from an outbox entry's creation to its delivery to Slack.", Buckets: prometheus.ExponentialBuckets(0.01, 3, 10)})
	m.SlackCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamwatch_slack_api_calls_total",
		Help: "Slack Web API calls by method and HTTP status."}, []string{"method", "status"})
	m.SlackErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamwatch_slack_api_errors_total",
		Help: "Slack Web API errors by method and error."}, []string{"method", "error"})
	m.SlackOrphaned = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamwatch_slack_orphaned_total",
		Help: "Incidents whose Slack root was deleted (posted again) or whose channel took no more messages (moved to the default channel), by case."}, []string{"case"})
	m.CommandSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamwatch_command_seconds",
		Help: "Command latency by command.", Buckets: prometheus.ExponentialBuckets(0.005, 3, 10)}, []string{"command"})
	m.ProbeResults = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamwatch_probe_results_total",
		Help: "Checkpoint probe results by pipeline and status."}, []string{"pipeline", "status"})
	m.Lag = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "streamwatch_lag_records",
		Help: "Total consumer lag in records by pipeline, from the last sample."}, []string{"pipeline"})
	m.ReplicaWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamwatch_redis_replica_wait_seconds",
		Help:    "How long Redis's WAIT took to confirm writes on redis.min_replicas_acked replicas (or to give up), by what it confirmed: webhook, outbox, command, lock.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 3, 10)}, []string{"for"})
	m.ReplicaWaitTimeouts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamwatch_redis_replica_wait_timeouts_total",
		Help: "WAITs that ended with fewer than redis.min_replicas_acked replicas confirming, by what they confirmed (a webhook then answers 503)."}, []string{"for"})
	lifecycle := prometheus.ExponentialBuckets(5, 2.5, 10) // 5s … about 5 days
	m.TimeToDetect = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamwatch_incident_time_to_detect_seconds",
		Help:    "From the fault (records began to wait with no commit, the query's last heartbeat line, an expected alert's last arrival) to the incident streamwatch opened for it, by source.",
		Buckets: lifecycle}, []string{"source"})
	m.TimeToAcknowledge = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamwatch_incident_time_to_acknowledge_seconds",
		Help: "From an incident's opening to its first acknowledgement, by source.", Buckets: lifecycle}, []string{"source"})
	m.TimeToResolve = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamwatch_incident_time_to_resolve_seconds",
		Help: "From an incident's opening to its resolution, by source.", Buckets: lifecycle}, []string{"source"})
	m.reg.MustRegister(m.TimeToDetect, m.TimeToAcknowledge, m.TimeToResolve)
	m.reg.MustRegister(m.AlertsReceived, m.IncidentsOpened, m.Duplicates, m.OutboxDepth, m.OutboxOldest,
		m.IncidentsOpen, m.Flood, m.DeliveryLatency,
		m.SlackCalls, m.SlackErrors, m.SlackOrphaned, m.CommandSeconds, m.ProbeResults, m.Lag, m.ReplicaWait, m.ReplicaWaitTimeouts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Transport counts Slack Web API calls by method and HTTP status around next.
func (m *Metrics) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		method := path.Base(r.URL.Path)
		switch {
		case strings.Contains(r.URL.Path, "/upload/"): // a file's bytes, to the URL files.getUploadURLExternal gave
			method = "file_upload"
		case !strings.Contains(method, "."): // response_url and other non-API posts
			method = "response_url"
		}
		resp, err := next.RoundTrip(r)
		status := "error"
		if err == nil {
			status = strconv.Itoa(resp.StatusCode)
		}
		m.SlackCalls.WithLabelValues(method, status).Inc()
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
