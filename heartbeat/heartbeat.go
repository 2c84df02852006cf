// Package heartbeat is streamwatch's dead man's switch (alerts.heartbeats): alerts expected at
// least every so often, such as Alertmanager's always-firing Watchdog, never open an incident;
// their absence does, and their return resolves it. A silent alert pipeline then looks like
// what it is, not like a healthy one.
package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/state"
)

// Expected is one alert expected at least Every.
type Expected struct {
	Name    string            // its matchers, "alertname=Watchdog"
	Match   map[string]string // every label must equal its value
	Every   time.Duration
	Channel string
}

// Grace is how long past Every an expected alert may be late before its absence opens an
// incident: half of Every, so that a Watchdog repeated every 5m opens one 7m30s after the last.
func (e Expected) Grace() time.Duration { return e.Every / 2 }

// matches reports whether labels hold every entry of e.Match.
func (e Expected) matches(labels map[string]string) bool {
	for k, v := range e.Match {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Store is what the switch keeps in Redis (state.Store).
type Store interface {
	Beat(ctx context.Context, at time.Time, names ...string) error
	Heartbeats(ctx context.Context, names []string) (map[string]state.HeartbeatState, error)
	SetHeartbeatIncident(ctx context.Context, name, id string) error
	RecordAlert(ctx context.Context, a state.AlertRecord) (state.Outcome, error)
	Resolve(ctx context.Context, id, actor, note string) error
	SetFaultAt(ctx context.Context, id string, at time.Time) error
}

// Switch watches the expected alerts of the configuration.
type Switch struct {
	Expected []Expected
	Store    Store
	Now      func() time.Time
	// TimeToDetect, when set, hears how long after the expected alert's last arrival (or the
	// start of the wait for it) each incident of an absence opened.
	TimeToDetect func(time.Duration)
}

// New returns the switch of alerts.heartbeats; nil when none is configured.
func New(cfg *config.Config, st Store) *Switch {
	if len(cfg.Alerts.Heartbeats) == 0 {
		return nil
	}
	sw := &Switch{Store: st, Now: time.Now}
	for _, hb := range cfg.Alerts.Heartbeats {
		keys := slices.Sorted(maps.Keys(hb.Match))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + hb.Match[k]
		}
		sw.Expected = append(sw.Expected, Expected{Name: strings.Join(parts, ","), Match: hb.Match, Every: hb.Every,
			Channel: cmpOr(hb.Channel, cfg.Slack.DefaultChannel)})
	}
	return sw
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Match returns the name of the expected alert labels are, if any.
func (sw *Switch) Match(labels map[string]string) (string, bool) {
	if sw == nil {
		return "", false
	}
	for _, e := range sw.Expected {
		if e.matches(labels) {
			return e.Name, true
		}
	}
	return "", false
}

// Beat records the arrival of the expected alerts names.
func (sw *Switch) Beat(ctx context.Context, names ...string) error {
	return sw.Store.Beat(ctx, sw.Now(), names...)
}

// Every is how often Check should run: a quarter of the shortest Every, from 1s to 30s.
func (sw *Switch) Every() time.Duration {
	d := 30 * time.Second
	for _, e := range sw.Expected {
		d = min(d, e.Every/4)
	}
	return max(d, time.Second)
}

// Check opens the incident of each expected alert absent for Every and its grace (counted from
// its last arrival, or from when streamwatch began to expect it), and resolves the incident of
// each that arrived again. One run at a time in the deployment (the scheduler's lock); the
// incident's dedup key keeps it one across replicas regardless.
func (sw *Switch) Check(ctx context.Context) error {
	names := make([]string, len(sw.Expected))
	for i, e := range sw.Expected {
		names[i] = e.Name
	}
	st, err := sw.Store.Heartbeats(ctx, names)
	if err != nil {
		return err
	}
	now := sw.Now()
	var errs []error
	for _, e := range sw.Expected {
		h := st[e.Name]
		ref := h.Last
		if ref.IsZero() || h.Since.After(ref) {
			ref = h.Since
		}
		late := now.Sub(ref) > e.Every+e.Grace()
		switch {
		case late && h.Incident == "":
			errs = append(errs, sw.open(ctx, e, h, ref, now))
		case !late && h.Incident != "" && !h.Last.IsZero():
			note := fmt.Sprintf("%s arrived again at %s.", e.Name, h.Last.UTC().Format(time.RFC3339))
			if err := sw.Store.Resolve(ctx, h.Incident, "streamwatch", note); err != nil && !isClosed(err) {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, sw.Store.SetHeartbeatIncident(ctx, e.Name, ""))
		}
	}
	return errors.Join(errs...)
}

// isClosed reports whether err says the incident was resolved already (by a person).
func isClosed(err error) bool {
	var ce *state.ChangeError
	return errors.As(err, &ce) && (ce.Reason == state.StatusResolved || ce.Reason == "notfound")
}

func (sw *Switch) open(ctx context.Context, e Expected, h state.HeartbeatState, ref, now time.Time) error {
	since := "it was first expected at " + h.Since.UTC().Format(time.RFC3339)
	if !h.Last.IsZero() {
		since = "the last at " + h.Last.UTC().Format(time.RFC3339)
	}
	key := "streamwatch:heartbeat:" + e.Name
	out, err := sw.Store.RecordAlert(ctx, state.AlertRecord{Key: key, Fingerprint: key,
		Title:    fmt.Sprintf("No %s alert for %s (expected every %s)", e.Name, now.Sub(ref).Round(time.Second), e.Every),
		Severity: 2, Channel: e.Channel, Source: state.SourceHeartbeat,
		Detail: fmt.Sprintf("No alert matching %s has arrived for more than %s and its grace (%s): %s. The alert pipeline (Alertmanager, or the network to streamwatch) may be down; nothing else would say so.",
			e.Name, e.Every, e.Grace(), since),
		Labels: map[string]string{"alertname": "streamwatch_heartbeat_missing", "heartbeat": e.Name}})
	if err != nil {
		return err
	}
	if out.Incident == "" {
		return nil // a label silence holds it
	}
	if out.Result == state.ResultOpened {
		if err := sw.Store.SetFaultAt(ctx, out.Incident, ref); err != nil {
			return err
		}
		if sw.TimeToDetect != nil {
			sw.TimeToDetect(now.Sub(ref))
		}
	}
	return sw.Store.SetHeartbeatIncident(ctx, e.Name, out.Incident)
}
