package bot

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/state"
)

// webhookResult is the JSON answer to an accepted webhook.
type webhookResult struct {
	Incidents []recorded `json:"incidents"`
}

type recorded struct {
	Incident    string `json:"incident,omitempty"`
	Result      string `json:"result"`
	Previous    string `json:"previous,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, reason string) {
	writeJSON(w, status, map[string]string{"error": reason})
}

// webhook answers 2xx only after every alert of the payload is recorded in Redis; 503 with
// Retry-After when Redis is unreachable, so that senders retry and nothing is lost.
func (b *Bot) webhook(source string, decode func([]byte) ([]alerts.Alert, error)) http.Handler {
	m := b.opt.Metrics
	rejected := m.AlertsReceived.WithLabelValues(source, "rejected")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !b.authorized(r) {
			rejected.Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="streamwatch"`)
			fail(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		if b.draining.Load() {
			w.Header().Set("Retry-After", "5")
			fail(w, http.StatusServiceUnavailable, "shutting down; retry")
			return
		}
		max := b.opt.MaxBodyBytes
		if r.ContentLength > max {
			rejected.Inc()
			fail(w, http.StatusRequestEntityTooLarge, "body larger than http.max_body_bytes")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
		if err != nil {
			var mbe *http.MaxBytesError
			rejected.Inc()
			if errors.As(err, &mbe) {
				fail(w, http.StatusRequestEntityTooLarge, "body larger than http.max_body_bytes")
				return
			}
			fail(w, http.StatusBadRequest, "read body: "+err.Error())
			return
		}
		list, err := decode(body)
		if err != nil {
			rejected.Inc()
			var de *alerts.DecodeError
			if errors.As(err, &de) {
				fail(w, http.StatusBadRequest, de.Reason)
				return
			}
			fail(w, http.StatusBadRequest, err.Error())
			return
		}
		res := webhookResult{Incidents: make([]recorded, 0, len(list))}
		for i := range list {
			a := &list[i]
			b.opt.Router.Route(a)
			out, err := b.opt.Store.RecordAlert(r.Context(), record(a))
			if err != nil {
				m.AlertsReceived.WithLabelValues(source, "unavailable").Inc()
				if errors.Is(err, state.ErrUnavailable) {
					b.log.Warn("webhook refused: redis unavailable", "source", source, "err", err)
					w.Header().Set("Retry-After", "5")
					fail(w, http.StatusServiceUnavailable, "state store unavailable; retry")
					return
				}
				b.log.Error("record alert", "source", source, "err", err)
				fail(w, http.StatusInternalServerError, "could not record the alert")
				return
			}
			m.AlertsReceived.WithLabelValues(source, out.Result).Inc()
			switch out.Result {
			case "opened":
				m.IncidentsOpened.Inc()
			case "duplicate":
				m.Duplicates.Inc()
			}
			res.Incidents = append(res.Incidents, recorded{Incident: out.Incident, Result: out.Result, Previous: out.Previous, Fingerprint: a.Fingerprint})
			b.log.Info("alert recorded", "source", source, "incident", out.Incident, "result", out.Result,
				"fingerprint", a.Fingerprint, "pipeline", a.Pipeline)
		}
		b.poke()
		writeJSON(w, http.StatusOK, res)
	})
}

func (b *Bot) authorized(r *http.Request) bool {
	if b.opt.WebhookToken == "" {
		return b.opt.AllowUnauthenticated
	}
	h := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) < len(p) || !strings.EqualFold(h[:len(p)], p) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h[len(p):])), []byte(b.opt.WebhookToken)) == 1
}

// record turns a routed alert into what state stores.
func record(a *alerts.Alert) state.AlertRecord {
	detail := a.Annotations["description"]
	if detail == "" {
		detail = a.Annotations["summary"]
	}
	if detail == "" || detail == a.Title {
		detail = a.Title
	} else {
		detail = a.Title + " — " + detail
	}
	return state.AlertRecord{
		Key: a.Key, Fingerprint: a.Fingerprint, Resolved: a.Status == alerts.StatusResolved,
		Title: a.Title, Severity: int(a.Severity), Pipeline: a.Pipeline, Channel: a.Channel,
		Source: a.Source, Detail: clip(detail, 300),
	}
}

func (b *Bot) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

// readyz is true when Redis answers and the Slack socket is connected.
func (b *Bot) readyz(w http.ResponseWriter, r *http.Request) {
	checks := map[string]string{"redis": "ok", "slack": "ok"}
	ready := true
	if err := b.opt.Store.Ping(r.Context()); err != nil {
		checks["redis"] = "unreachable"
		ready = false
	}
	switch {
	case b.authBad.Load():
		checks["slack"] = "invalid_auth: check SLACK_BOT_TOKEN and SLACK_APP_TOKEN"
		ready = false
	case !b.connected.Load():
		checks["slack"] = "socket not connected"
		ready = false
	}
	if b.draining.Load() {
		checks["shutdown"] = "draining"
		ready = false
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, checks)
}
