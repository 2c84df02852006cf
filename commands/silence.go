package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// Silences is what the silence commands need from the state.
type Silences interface {
	SilenceIncident(ctx context.Context, id string, until time.Time, by state.Maker, reason string) (string, error)
	CreateSilence(ctx context.Context, matchers []state.Matcher, until time.Time, by state.Maker, reason string) (string, error)
	CreateSilenceFrom(ctx context.Context, matchers []state.Matcher, starts, until time.Time, by state.Maker, reason string) (string, error)
	ExtendSilence(ctx context.Context, sid string, d time.Duration, actor string) (time.Time, error)
	PreviewSilence(ctx context.Context, matchers []state.Matcher) ([]state.PreviewHit, int, error)
	ExpireSilence(ctx context.Context, id, actor string) (kind, incident string, err error)
	GetSilence(ctx context.Context, id string) (*state.Silence, error)
	ActiveSilences(ctx context.Context) ([]*state.Silence, error)
}

// MaxSilence is the longest a silence may last: a longer quiet wants the alert rule changed.
const MaxSilence = 30 * 24 * time.Hour

// Who may silence what (see authz.go):
//   - an incident (`incident silence`, the root's Silence 1h button): anyone who may use
//     commands in its channel, as for acknowledging it; the silence is announced in its thread,
//     ends by itself and stops only what alerts post.
//   - alerts by label (`silence LABELS`): the remediators of the pipeline its matchers name
//     (pipeline=NAME), else of slack.remediators; anyone when nobody is named. It hides alerts
//     before anyone sees them.
//   - ending one early (`silence expire`): whoever may make it.

// RegisterSilences adds `incident silence`, `silence`, `silence expire` and `silences`, and
// the silences section of `status`.
func (h *Handler) RegisterSilences(s Silences) {
	h.silences = s
	h.Register(&Command{Path: "incident silence",
		Min: 2, Max: -1,
		Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			id, rest, err := h.target(ctx, req, args, "incident silence")
			if err != nil {
				return Reply{}, err
			}
			var d time.Duration
			var reason string
			if len(rest) >= 2 && strings.EqualFold(rest[0], "until") && strings.EqualFold(rest[1], "morning") {
				d, reason = NextWorkingMorning(h.Now(), h.loc()).Sub(h.Now()), strings.Join(rest[2:], " ")
			} else if d, reason, err = forDuration(rest); err != nil {
				return Reply{}, &UsageError{Msg: err.Error(), Usages: []string{h.find("incident silence").Usage(h.Name)}}
			}
			inc, err := h.incident(ctx, req, id)
			if err != nil {
				return Reply{}, err
			}
			if reason == "" && req.Via == "button" {
				reason = "Silence menu"
				if len(rest) >= 2 && strings.EqualFold(rest[0], "for") {
					reason = "Silence " + rest[1] + " button"
				}
			}
			until := h.Now().Add(d)
			sid, err := s.SilenceIncident(ctx, id, until, state.Maker{Name: req.Actor(), ID: req.UserID}, reason)
			if err != nil {
				err = notFound(err, id)
				h.record(ctx, req, state.AuditEntry{Action: "silence incident", Target: id, Outcome: "failed", Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
				return Reply{}, err
			}
			h.record(ctx, req, state.AuditEntry{Action: "silence incident", Target: id, Outcome: "done",
				Detail: fmt.Sprintf("%s for %s until %s: %s", sid, d, human.Stamp(until), reason), Incident: id, Pipeline: inc.Pipeline})
			return Reply{Text: fmt.Sprintf("%s is silenced until %s (%s): its alerts are still counted, nothing is posted for them until then. `%s silence expire %s` ends it earlier.",
				id, human.Stamp(until), sid, h.Name, sid)}, nil
		}})
	h.Register(&Command{Path: "silence",
		Min: 3, Max: -1,
		Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			return h.silenceLabels(ctx, req, args)
		}})
	h.Register(&Command{Path: "silence extend", Min: 3, Max: 3,
		Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			usage := []string{h.find("silence extend").Usage(h.Name)}
			if !strings.EqualFold(args[1], "by") {
				return Reply{}, &UsageError{Msg: "say by how much: silence extend ID by DURATION", Usages: usage}
			}
			d, err := parseDuration(args[2])
			if err != nil {
				return Reply{}, &UsageError{Msg: err.Error(), Usages: usage}
			}
			sid := state.NormalizeSilenceID(args[0])
			sil, err := s.GetSilence(ctx, sid)
			if err != nil {
				return Reply{}, silenceErr(err)
			}
			if sil.Until.Add(d).Sub(h.Now()) > MaxSilence {
				return Reply{}, &UsageError{Msg: fmt.Sprintf("%s would then last past %s (30 days from now); change the alert rule instead", sid, MaxSilence), Usages: usage}
			}
			g := Guard{Action: "extend silences", Access: AccessSteward, Target: sid}
			if sil.Kind == state.SilenceIncident {
				if _, err := h.incident(ctx, req, sil.Incident); err != nil {
					return Reply{}, err
				}
				g = Guard{Action: "extend silences", Access: AccessMember, Target: sid, Incident: sil.Incident}
			} else if ms, err := state.ParseMatchers(sil.Matchers); err == nil {
				g.Pipelines = silencePipelines(ms)
			}
			if err := h.guard(ctx, req, g); err != nil {
				return Reply{}, err
			}
			until, err := s.ExtendSilence(ctx, sid, d, req.Actor())
			if err != nil {
				h.record(ctx, req, state.AuditEntry{Action: "extend silence", Target: sid, Outcome: "failed", Detail: err.Error(), Incident: sil.Incident})
				return Reply{}, silenceErr(err)
			}
			h.record(ctx, req, state.AuditEntry{Action: "extend silence", Target: sid, Outcome: "done", Incident: sil.Incident,
				Detail: fmt.Sprintf("by %s, until %s", d, human.Stamp(until))})
			return Reply{Public: sil.Kind == state.SilenceLabels, Text: fmt.Sprintf("%s now lasts until %s (extended by %s by %s).", sid, human.Stamp(until), d, req.Actor())}, nil
		}})
	h.Register(&Command{Path: "silence expire", Args: "ID", Min: 1, Max: 1,
		Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			sid := state.NormalizeSilenceID(args[0])
			sil, err := s.GetSilence(ctx, sid)
			if err != nil {
				return Reply{}, silenceErr(err)
			}
			g := Guard{Action: "end silences", Access: AccessSteward, Target: sid}
			if sil.Kind == state.SilenceIncident {
				// Whoever may see the incident may end its silence, as they may make one.
				if _, err := h.incident(ctx, req, sil.Incident); err != nil {
					return Reply{}, err
				}
				g = Guard{Action: "end silences", Access: AccessMember, Target: sid, Incident: sil.Incident}
			} else if ms, err := state.ParseMatchers(sil.Matchers); err == nil {
				g.Pipelines = silencePipelines(ms)
			}
			if err := h.guard(ctx, req, g); err != nil {
				return Reply{}, err
			}
			if _, _, err := s.ExpireSilence(ctx, sid, req.Actor()); err != nil {
				h.record(ctx, req, state.AuditEntry{Action: "end silence", Target: sid, Outcome: "failed", Detail: err.Error(), Incident: sil.Incident})
				return Reply{}, silenceErr(err)
			}
			h.record(ctx, req, state.AuditEntry{Action: "end silence", Target: sid, Outcome: "done", Incident: sil.Incident,
				Detail: strings.TrimSpace(sil.Matchers + " " + sil.Incident)})
			if sil.Kind == state.SilenceIncident {
				return Reply{Text: fmt.Sprintf("%s ended: %s's updates are posted again.", sid, sil.Incident)}, nil
			}
			return Reply{Public: true, Text: fmt.Sprintf("%s ended by %s: alerts matching %s open and join incidents again.", sid, req.Actor(), sil.Matchers)}, nil
		}})
	h.Register(&Command{Path: "silences", Max: 0,
		Run: func(ctx context.Context, req Request, _ []string) (Reply, error) {
			list, err := s.ActiveSilences(ctx)
			if err != nil {
				return Reply{}, err
			}
			if len(list) == 0 {
				return Reply{Text: "No silence is in force."}, nil
			}
			r := Reply{Text: fmt.Sprintf("%d silence%s in force", len(list), human.Plural(len(list)))}
			for _, sil := range list {
				r.Sections = append(r.Sections, silenceSection(sil, 20))
			}
			return r, nil
		}})
}

// silenceLabels answers `silence LABELS [from TIME] for DURATION [reason…] [--preview]`.
func (h *Handler) silenceLabels(ctx context.Context, req Request, args []string) (Reply, error) {
	usage := []string{h.find("silence").Usage(h.Name)}
	preview := false
	var rest []string
	for _, a := range args {
		if a == "--preview" {
			preview = true
			continue
		}
		rest = append(rest, a)
	}
	at := -1
	for i, a := range rest {
		if strings.EqualFold(a, "for") || strings.EqualFold(a, "from") {
			at = i
			break
		}
	}
	if at < 1 {
		return Reply{}, &UsageError{Msg: "silence takes LABEL=VALUE matchers, then for DURATION", Usages: usage}
	}
	matchers, err := state.ParseMatchers(strings.Join(rest[:at], " "))
	if err != nil {
		return Reply{}, &UsageError{Msg: err.Error(), Usages: usage}
	}
	now := h.Now()
	var starts time.Time
	rest = rest[at:]
	if strings.EqualFold(rest[0], "from") {
		if len(rest) < 2 {
			return Reply{}, &UsageError{Msg: "from takes a time: HH:MM or 2026-12-24T22:00", Usages: usage}
		}
		if starts, err = parseStart(rest[1], now, h.loc()); err != nil {
			return Reply{}, &UsageError{Msg: err.Error(), Usages: usage}
		}
		rest = rest[2:]
	}
	d, reason, err := forDuration(rest)
	if err != nil {
		return Reply{}, &UsageError{Msg: err.Error(), Usages: usage}
	}
	text := state.MatchersText(matchers)
	if preview {
		return h.silencePreview(ctx, req, matchers, text)
	}
	if err := h.guard(ctx, req, Guard{Action: "silence alerts", Access: AccessSteward, Pipelines: silencePipelines(matchers), Target: text}); err != nil {
		return Reply{}, err
	}
	begin := now
	if !starts.IsZero() {
		begin = starts
	}
	until := begin.Add(d)
	sid, err := h.silences.CreateSilenceFrom(ctx, matchers, starts, until, state.Maker{Name: req.Actor(), ID: req.UserID}, reason)
	if err != nil {
		h.record(ctx, req, state.AuditEntry{Action: "silence alerts", Target: text, Outcome: "failed", Detail: err.Error(), Pipeline: first(silencePipelines(matchers))})
		return Reply{}, err
	}
	from := ""
	if !starts.IsZero() {
		from = "from " + h.local(starts) + " "
	}
	h.record(ctx, req, state.AuditEntry{Action: "silence alerts", Target: sid + " " + text, Outcome: "done",
		Detail: fmt.Sprintf("%sfor %s until %s: %s", from, d, human.Stamp(until), reason), Pipeline: first(silencePipelines(matchers))})
	if from != "" {
		return Reply{Public: true, Text: fmt.Sprintf("%s: from %s until %s, alerts matching %s open and join no incident (set by %s%s); before it starts they are posted as usual. `%s silence expire %s` cancels it.",
			sid, h.local(starts), h.local(until), text, req.Actor(), reasonSuffix(reason), h.Name, sid)}, nil
	}
	return Reply{Public: true, Text: fmt.Sprintf("%s: alerts matching %s open and join no incident until %s (set by %s%s). `%s silences` lists what it silenced; `%s silence expire %s` ends it.",
		sid, text, human.Stamp(until), req.Actor(), reasonSuffix(reason), h.Name, h.Name, sid)}, nil
}

// silencePreview lists the open incidents, and their alerts, that a silence of matchers would
// hold now; it makes nothing.
func (h *Handler) silencePreview(ctx context.Context, req Request, matchers []state.Matcher, text string) (Reply, error) {
	hits, scanned, err := h.silences.PreviewSilence(ctx, matchers)
	if err != nil {
		return Reply{}, err
	}
	var lines []string
	shown := 0
	for _, hit := range hits {
		if h.maySee(ctx, req, hit.Incident) != nil {
			continue
		}
		shown++
		if shown > 20 {
			continue
		}
		lines = append(lines, fmt.Sprintf("%-8s %-12s %s", hit.Incident.ID, hit.Incident.Channel, Title(hit.Incident)))
		for i, a := range hit.Alerts {
			if i == 5 {
				lines = append(lines, fmt.Sprintf("           … %d more", len(hit.Alerts)-5))
				break
			}
			st := "resolved"
			if a.Firing {
				st = "firing"
			}
			lines = append(lines, fmt.Sprintf("           %-8s %s [%s]", st, a.Title, a.Fingerprint[:min(len(a.Fingerprint), 16)]))
		}
	}
	if shown == 0 {
		return Reply{Text: fmt.Sprintf("Preview: a silence of %s would hold none of the %d newest open incidents' alerts; it would hold alerts that arrive while it lasts. Nothing was made.", text, scanned)}, nil
	}
	more := ""
	if shown > 20 {
		more = " (20 shown)"
	}
	return Reply{Text: fmt.Sprintf("Preview: a silence of %s would hold alerts of %d open incident%s%s, and every matching alert that arrives while it lasts. Nothing was made.",
		text, shown, human.Plural(shown), more), Sections: []Section{{Lines: lines, Pre: true}}}, nil
}

// NextWorkingMorning is 09:00 of the next working day (Monday to Friday) in loc after now:
// today's when it is a working day before nine.
func NextWorkingMorning(now time.Time, loc *time.Location) time.Time {
	n := now.In(loc)
	t := time.Date(n.Year(), n.Month(), n.Day(), 9, 0, 0, 0, loc)
	for !t.After(now) || t.Weekday() == time.Saturday || t.Weekday() == time.Sunday {
		t = t.AddDate(0, 0, 1)
	}
	return t
}

// parseStart reads when a silence made for later begins: HH:MM (the next time the clock in
// loc shows it), 2006-01-02T15:04 in loc, or RFC 3339. It must be in the future, within
// MaxSilence.
func parseStart(s string, now time.Time, loc *time.Location) (time.Time, error) {
	var t time.Time
	var err error
	if c, e := time.ParseInLocation("15:04", s, loc); e == nil {
		n := now.In(loc)
		t = time.Date(n.Year(), n.Month(), n.Day(), c.Hour(), c.Minute(), 0, 0, loc)
		if !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
	} else if t, err = time.ParseInLocation("2006-01-02T15:04", s, loc); err != nil {
		if t, err = time.Parse(time.RFC3339, s); err != nil {
			return time.Time{}, fmt.Errorf("%q is not a time: HH:MM or 2026-12-24T22:00 (%s), or RFC 3339", s, loc)
		}
	}
	switch {
	case !t.After(now):
		return time.Time{}, fmt.Errorf("%s is in the past", t.In(loc).Format("2006-01-02 15:04 MST"))
	case t.Sub(now) > MaxSilence:
		return time.Time{}, fmt.Errorf("%s is more than 30 days ahead", t.In(loc).Format("2006-01-02 15:04 MST"))
	}
	return t, nil
}

// loc is where people read and type times: Location, else slack.time_zone (human.Zone).
func (h *Handler) loc() *time.Location {
	if h.Location != nil {
		return h.Location
	}
	return human.Zone()
}

// local is t as people in loc read it.
func (h *Handler) local(t time.Time) string {
	return t.In(h.loc()).Format("2006-01-02 15:04 MST")
}

// silenceSection describes one silence and, for a label silence, up to n of the alerts it
// silenced.
func silenceSection(sil *state.Silence, n int) Section {
	what := "alerts matching " + sil.Matchers
	if sil.Kind == state.SilenceIncident {
		what = "incident " + sil.Incident
	}
	lines := []string{fmt.Sprintf("until %s, set by %s at %s%s", human.Stamp(sil.Until), sil.By, human.Stamp(sil.Created), reasonSuffix(sil.Reason))}
	if !sil.Starts.IsZero() {
		lines[0] = fmt.Sprintf("from %s until %s, set by %s at %s%s", human.Stamp(sil.Starts), human.Stamp(sil.Until), sil.By, human.Stamp(sil.Created), reasonSuffix(sil.Reason))
	}
	if sil.Kind == state.SilenceLabels {
		lines = append(lines, fmt.Sprintf("silenced %d alert%s%s", sil.Hits, human.Plural(int(sil.Hits)), lastHit(sil)))
		for i, a := range sil.Alerts {
			if i == n {
				lines = append(lines, fmt.Sprintf("… %d more", len(sil.Alerts)-n))
				break
			}
			lines = append(lines, fmt.Sprintf("  %-20s ×%-5d %s  key %s", human.Stamp(a.Last), a.Count, a.Title, a.Key))
		}
	}
	return Section{Title: sil.ID + ": " + what, Lines: lines, Pre: true}
}

func lastHit(sil *state.Silence) string {
	if sil.LastHit.IsZero() {
		return ""
	}
	return ", the last at " + human.Stamp(sil.LastHit)
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// silencePipelines are the pipelines a label silence's matchers name (pipeline=NAME).
func silencePipelines(ms []state.Matcher) []string {
	for _, m := range ms {
		if m.Name == "pipeline" && !m.Regex {
			return []string{m.Value}
		}
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// forDuration reads "for DURATION [reason…]": a Go duration (90s, 45m, 2h30m) or days (1d),
// from a second to MaxSilence.
func forDuration(args []string) (time.Duration, string, error) {
	if len(args) < 2 || !strings.EqualFold(args[0], "for") {
		return 0, "", errors.New("say how long: for DURATION, such as for 2h")
	}
	d, err := parseDuration(args[1])
	if err != nil {
		return 0, "", err
	}
	return d, strings.Join(args[2:], " "), nil
}

func parseDuration(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if n, ok := strings.CutSuffix(strings.ToLower(s), "d"); ok {
		var days int
		if days, err = strconv.Atoi(n); err == nil {
			d = time.Duration(days) * 24 * time.Hour
		}
	} else {
		d, err = time.ParseDuration(s)
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration (such as 90s, 45m, 2h or 1d)", s)
	case d < time.Second:
		return 0, fmt.Errorf("%s is too short: at least 1s", s)
	case d > MaxSilence:
		return 0, fmt.Errorf("%s is too long: at most %s (30 days); change the alert rule instead", s, MaxSilence)
	}
	return d, nil
}

// silenceErr words a silence store error for people.
func silenceErr(err error) error {
	var se *state.SilenceError
	if errors.As(err, &se) {
		return errors.New(se.Error())
	}
	return err
}

// silencesSection is the `status` section of the silences in force; nil without any (or
// without RegisterSilences).
func (h *Handler) silencesSection(ctx context.Context) *Section {
	if h.silences == nil {
		return nil
	}
	list, err := h.silences.ActiveSilences(ctx)
	if err != nil {
		return &Section{Title: "Silences", Lines: []string{"could not read the silences: " + err.Error()}}
	}
	if len(list) == 0 {
		return nil
	}
	lines := make([]string, 0, len(list))
	for _, sil := range list {
		what := sil.Matchers
		if sil.Kind == state.SilenceIncident {
			what = sil.Incident
		}
		line := fmt.Sprintf("%-7s %-40s until %s by %s", sil.ID, what, human.Stamp(sil.Until), sil.By)
		if sil.Kind == state.SilenceLabels {
			line += fmt.Sprintf(", %d silenced", sil.Hits)
		}
		lines = append(lines, line)
	}
	return &Section{Title: fmt.Sprintf("Silences in force (%d)", len(list)), Lines: lines, Pre: true}
}
