// Package heartbeat is streamwatch's dead man's switch (alerts.heartbeats): alerts expected at
// least every so often, such as Alertmanager's always-firing Watchdog, never open an incident;
// their absence does, and their return resolves it. A silent alert pipeline then looks like
// what it is, not like a healthy one.
package heartbeat

import (
	"context"
	"errors"
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
	// Words words what the switch stores for Slack (commands.HeartbeatMessage): an absence's
	// incident title and detail, and the resolve note of its return. Nil writes the kind and
	// the name.
	Words func(Message) string
}

// MessageKind is what a Message says.
type MessageKind string

// The messages, with the Message fields each uses.
const (
	MissingTitle  MessageKind = "missing_title"  // an absence's incident title: Name, For, Every
	MissingDetail MessageKind = "missing_detail" // its detail: Name, Every, Grace, Since (first expected) or Last (the last arrival)
	Arrived       MessageKind = "arrived"        // the resolve note when it arrives again: Name, Last
)

// Message is a sentence the switch stores (an incident's title, detail or resolve note), as a
// kind and its values: commands words it.
type Message struct {
	Kind         MessageKind
	Name         string
	For          time.Duration // how long it has been absent
	Every, Grace time.Duration
	Since, Last  time.Time
}

func (sw *Switch) say(m Message) string {
	if sw.Words == nil {
		return string(m.Kind) + " " + m.Name
	}
	return sw.Words(m)
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
			note := sw.say(Message{Kind: Arrived, Name: e.Name, Last: h.Last})
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
	key := "streamwatch:heartbeat:" + e.Name
	out, err := sw.Store.RecordAlert(ctx, state.AlertRecord{Key: key, Fingerprint: key,
		Title:    sw.say(Message{Kind: MissingTitle, Name: e.Name, For: now.Sub(ref).Round(time.Second), Every: e.Every}),
		Severity: 2, Channel: e.Channel, Source: state.SourceHeartbeat,
		Detail: sw.say(Message{Kind: MissingDetail, Name: e.Name, Every: e.Every, Grace: e.Grace(), Since: h.Since, Last: h.Last}),
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
