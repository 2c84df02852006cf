package bot

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	Silence     string `json:"silence,omitempty"`
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
	// The counter of each outcome, resolved once: a storm counts thousands of alerts a second.
	received := map[string]prometheus.Counter{}
	for _, o := range []string{state.ResultOpened, state.ResultDuplicate, state.ResultFlooded, state.ResultResolved,
		state.ResultIgnored, state.ResultSilenced, state.ResultCorrelated, state.ResultHeartbeat} {
		received[o] = m.AlertsReceived.WithLabelValues(source, o)
	}
	count := func(outcome string) {
		if c, ok := received[outcome]; ok {
			c.Inc()
			return
		}
		m.AlertsReceived.WithLabelValues(source, outcome).Inc()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer := b.bearerOK(r)
		if !bearer && r.Header.Get(SignatureHeader) == "" {
			rejected.Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="streamwatch"`)
			fail(w, http.StatusUnauthorized, "missing or wrong bearer token (or "+SignatureHeader+")")
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
		if !bearer {
			if err := VerifySignature(b.opt.WebhookToken, r.Header.Get(SignatureHeader), body, b.opt.Now()); err != nil {
				rejected.Inc()
				fail(w, http.StatusUnauthorized, err.Error())
				return
			}
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
		recs := make([]state.AlertRecord, len(list))
		for i := range list {
			b.opt.Router.Route(&list[i])
			recs[i] = record(&list[i])
		}
		// Not the request's context: a sender that hangs up does not undo the recording (a run
		// other webhooks share goes on), so wait for it and count what it stored.
		outs, err := b.recordAlerts(context.WithoutCancel(r.Context()), recs)
		if errors.Is(err, state.ErrNotReplicated) {
			b.notReplicated(w, source, list, outs, err)
			return
		}
		if err != nil {
			m.AlertsReceived.WithLabelValues(source, "unavailable").Add(float64(len(list)))
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
		res := webhookResult{Incidents: make([]recorded, 0, len(list))}
		for i, out := range outs {
			a := &list[i]
			count(out.Result)
			switch out.Result {
			case state.ResultOpened:
				m.IncidentsOpened.Inc()
			case state.ResultFlooded:
				if out.FloodOpened {
					m.IncidentsOpened.Inc()
					b.log.Warn("alert flood: new alerts join one flood incident", "channel", a.Channel, "incident", out.Incident)
				}
			case state.ResultDuplicate:
				m.Duplicates.Inc()
			}
			res.Incidents = append(res.Incidents, recorded{Incident: out.Incident, Result: out.Result, Previous: out.Previous,
				Silence: out.Silence, Fingerprint: a.Fingerprint})
		}
		writeJSON(w, http.StatusOK, res)
		// Debug, one line per webhook: a storm would otherwise write thousands of lines a
		// second; incidents are in Slack, in their timelines and in the metrics.
		if b.log.Enabled(r.Context(), slog.LevelDebug) {
			counts := map[string]int{}
			var opened []string
			for _, rec := range res.Incidents {
				counts[rec.Result]++
				if rec.Result == state.ResultOpened {
					opened = append(opened, rec.Incident)
				}
			}
			b.log.Debug("webhook recorded", "source", source, "alerts", len(list), "opened", opened,
				"duplicates", counts["duplicate"], "flooded", counts["flooded"], "resolved", counts["resolved"], "ignored", counts["ignored"],
				"silenced", counts["silenced"])
		}
	})
}

// bearerOK checks the bearer token in constant time; with no token configured and
// unauthenticated webhooks allowed, every request passes.
func (b *Bot) bearerOK(r *http.Request) bool {
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

// SignatureHeader carries an HMAC signature, the alternative to the bearer token for senders
// that can sign: "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the token>".
const SignatureHeader = "X-Streamwatch-Signature"

// maxSkew is how old (or how far in the future) a signature's timestamp may be; older ones
// are replays.
const maxSkew = 5 * time.Minute

// Sign returns the X-Streamwatch-Signature value for body at t.
func Sign(secret string, body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifySignature checks a signature header against body; the error says what is wrong.
func VerifySignature(secret, header string, body []byte, now time.Time) error {
	if secret == "" {
		return errors.New("signatures need STREAMWATCH_WEBHOOK_TOKEN")
	}
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return errors.New("malformed " + SignatureHeader + ": want t=<unix>,v1=<hex>")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > maxSkew || d < -maxSkew {
		return errors.New("signature timestamp outside 5 minutes: replay refused")
	}
	want := Sign(secret, body, time.Unix(sec, 0))
	want = want[strings.Index(want, "v1=")+3:]
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return errors.New("signature does not match the body")
}

// recordAlerts records a webhook's alerts; the expected ones (alerts.heartbeats) are only
// noted as arrived (ResultHeartbeat), never recorded as alerts.
func (b *Bot) recordAlerts(ctx context.Context, recs []state.AlertRecord) ([]state.Outcome, error) {
	hb := b.opt.Heartbeats
	if hb == nil {
		return b.opt.Store.RecordAlerts(ctx, recs)
	}
	var beats []string
	var rest []state.AlertRecord
	var at []int // rest[j] is recs[at[j]]
	for i, rec := range recs {
		if name, ok := hb.Match(rec.Labels); ok && !rec.Resolved {
			beats = append(beats, name)
			continue
		}
		rest = append(rest, rec)
		at = append(at, i)
	}
	if len(beats) == 0 {
		return b.opt.Store.RecordAlerts(ctx, recs)
	}
	if err := hb.Beat(ctx, beats...); err != nil {
		return nil, err
	}
	outs := make([]state.Outcome, len(recs))
	for i := range outs {
		outs[i].Result = state.ResultHeartbeat
	}
	if len(rest) > 0 {
		got, err := b.opt.Store.RecordAlerts(ctx, rest)
		for j, o := range got {
			outs[at[j]] = o
		}
		if err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// Heartbeats is the dead man's switch's side of the webhook (heartbeat.Switch).
type Heartbeats interface {
	Match(labels map[string]string) (name string, ok bool)
	Beat(ctx context.Context, names ...string) error
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
		Source: a.Source, Detail: clip(detail, 300), Labels: a.Labels, Annotations: a.Annotations, Links: linkMap(a.Links),
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
