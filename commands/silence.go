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
	silence := &Command{Path: "incident silence", Min: 2, Max: -1}
	silence.Run = func(ctx context.Context, req Request, args []string) (Reply, error) {
		id, rest, err := h.target(ctx, req, args, silence.Path)
		if err != nil {
			return Reply{}, err
		}
		var d time.Duration
		var reason string
		if len(rest) >= 2 && strings.EqualFold(rest[0], "until") && strings.EqualFold(rest[1], "morning") {
			d, reason = NextWorkingMorning(h.Now(), h.loc()).Sub(h.Now()), strings.Join(rest[2:], " ")
		} else if d, reason, err = forDuration(rest); err != nil {
			return Reply{}, &UsageError{Msg: err.Error(), Usages: []string{silence.Usage(h.Name)}}
		}
		inc, err := h.incident(ctx, req, id)
		if err != nil {
			return Reply{}, err
		}
		if reason == "" && req.Via == "button" {
			dur := ""
			if len(rest) >= 2 && strings.EqualFold(rest[0], "for") {
				dur = rest[1]
			}
			reason = silenceButtonReason(dur)
		}
		until := h.Now().Add(d)
		sid, err := s.SilenceIncident(ctx, id, until, state.Maker{Name: req.Actor(), ID: req.UserID}, reason)
		if err != nil {
			err = notFound(err, id)
			h.record(ctx, req, state.AuditEntry{Action: auditSilenceIncident, Target: id, Outcome: "failed", Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
			return Reply{}, err
		}
		h.record(ctx, req, state.AuditEntry{Action: auditSilenceIncident, Target: id, Outcome: "done",
			Detail: fmt.Sprintf("%s for %s until %s: %s", sid, d, human.Stamp(until), reason), Incident: id, Pipeline: inc.Pipeline})
		return incidentSilenced(h.Name, id, sid, until), nil
	}
	h.Register(silence)
	h.Register(&Command{Path: "silence", Min: 3, Max: -1,
		Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			return h.silenceLabels(ctx, req, args)
		}})
	extend := &Command{Path: "silence extend", Min: 3, Max: 3}
	extend.Run = func(ctx context.Context, req Request, args []string) (Reply, error) {
		usage := []string{extend.Usage(h.Name)}
		if !strings.EqualFold(args[1], "by") {
			return Reply{}, usageExtendBy(usage)
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
			return Reply{}, usageSilenceTooLong(sid, usage)
		}
		g := Guard{Action: guardExtendSilences, Access: AccessSteward, Target: sid}
		if sil.Kind == state.SilenceIncident {
			if _, err := h.incident(ctx, req, sil.Incident); err != nil {
				return Reply{}, err
			}
			g = Guard{Action: guardExtendSilences, Access: AccessMember, Target: sid, Incident: sil.Incident}
		} else if ms, err := state.ParseMatchers(sil.Matchers); err == nil {
			g.Pipelines = silencePipelines(ms)
		}
		if err := h.guard(ctx, req, g); err != nil {
			return Reply{}, err
		}
		until, err := s.ExtendSilence(ctx, sid, d, req.Actor())
		if err != nil {
			h.record(ctx, req, state.AuditEntry{Action: auditExtendSilence, Target: sid, Outcome: "failed", Detail: err.Error(), Incident: sil.Incident})
			return Reply{}, silenceErr(err)
		}
		h.record(ctx, req, state.AuditEntry{Action: auditExtendSilence, Target: sid, Outcome: "done", Incident: sil.Incident,
			Detail: fmt.Sprintf("by %s, until %s", d, human.Stamp(until))})
		return silenceExtended(sid, sil, until, d, req.Actor()), nil
	}
	h.Register(extend)
	h.Register(&Command{Path: "silence expire", Args: "ID", Min: 1, Max: 1,
		Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			sid := state.NormalizeSilenceID(args[0])
			sil, err := s.GetSilence(ctx, sid)
			if err != nil {
				return Reply{}, silenceErr(err)
			}
			g := Guard{Action: guardEndSilences, Access: AccessSteward, Target: sid}
			if sil.Kind == state.SilenceIncident {
				// Whoever may see the incident may end its silence, as they may make one.
				if _, err := h.incident(ctx, req, sil.Incident); err != nil {
					return Reply{}, err
				}
				g = Guard{Action: guardEndSilences, Access: AccessMember, Target: sid, Incident: sil.Incident}
			} else if ms, err := state.ParseMatchers(sil.Matchers); err == nil {
				g.Pipelines = silencePipelines(ms)
			}
			if err := h.guard(ctx, req, g); err != nil {
				return Reply{}, err
			}
			if _, _, err := s.ExpireSilence(ctx, sid, req.Actor()); err != nil {
				h.record(ctx, req, state.AuditEntry{Action: auditEndSilence, Target: sid, Outcome: "failed", Detail: err.Error(), Incident: sil.Incident})
				return Reply{}, silenceErr(err)
			}
			h.record(ctx, req, state.AuditEntry{Action: auditEndSilence, Target: sid, Outcome: "done", Incident: sil.Incident,
				Detail: strings.TrimSpace(sil.Matchers + " " + sil.Incident)})
			return silenceEnded(sid, sil, req.Actor()), nil
		}})
	h.Register(&Command{Path: "silences", Max: 0,
		Run: func(ctx context.Context, req Request, _ []string) (Reply, error) {
			list, err := s.ActiveSilences(ctx)
			if err != nil {
				return Reply{}, err
			}
			return silencesReply(list), nil
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
		return Reply{}, usageSilenceMatchers(usage)
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
			return Reply{}, usageSilenceFrom(usage)
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
	if err := h.guard(ctx, req, Guard{Action: auditSilenceAlerts, Access: AccessSteward, Pipelines: silencePipelines(matchers), Target: text}); err != nil {
		return Reply{}, err
	}
	begin := now
	if !starts.IsZero() {
		begin = starts
	}
	until := begin.Add(d)
	sid, err := h.silences.CreateSilenceFrom(ctx, matchers, starts, until, state.Maker{Name: req.Actor(), ID: req.UserID}, reason)
	if err != nil {
		h.record(ctx, req, state.AuditEntry{Action: auditSilenceAlerts, Target: text, Outcome: "failed", Detail: err.Error(), Pipeline: first(silencePipelines(matchers))})
		return Reply{}, err
	}
	from := ""
	if !starts.IsZero() {
		from = "from " + h.local(starts) + " "
	}
	h.record(ctx, req, state.AuditEntry{Action: auditSilenceAlerts, Target: sid + " " + text, Outcome: "done",
		Detail: fmt.Sprintf("%sfor %s until %s: %s", from, d, human.Stamp(until), reason), Pipeline: first(silencePipelines(matchers))})
	return labelsSilenced(h.Name, sid, text, req.Actor(), reason, starts, until, h.local), nil
}

// silencePreview lists the open incidents, and their alerts, that a silence of matchers would
// hold now; it makes nothing.
func (h *Handler) silencePreview(ctx context.Context, req Request, matchers []state.Matcher, text string) (Reply, error) {
	hits, scanned, err := h.silences.PreviewSilence(ctx, matchers)
	if err != nil {
		return Reply{}, err
	}
	var seen []state.PreviewHit
	for _, hit := range hits {
		if h.maySee(ctx, req, hit.Incident) == nil {
			seen = append(seen, hit)
		}
	}
	return silencePreviewReply(text, seen, scanned), nil
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
			return time.Time{}, errNotTime(s, loc)
		}
	}
	switch {
	case !t.After(now):
		return time.Time{}, errInPast(t, loc)
	case t.Sub(now) > MaxSilence:
		return time.Time{}, errTooFarAhead(t, loc)
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
		return 0, "", errNoDuration()
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
		return 0, errNotDuration(s)
	case d < time.Second:
		return 0, errTooShort(s)
	case d > MaxSilence:
		return 0, errTooLong(s)
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
	return silencesStatus(list, err)
}
