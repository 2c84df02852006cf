package commands

import (
	"errors"
	"fmt"
	"time"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// The silence commands' actions, as the audit trail records them and refusals name them.
const (
	auditSilenceIncident = "silence incident"
	auditSilenceAlerts   = "silence alerts"
	auditExtendSilence   = "extend silence"
	auditEndSilence      = "end silence"
	guardExtendSilences  = "extend silences"
	guardEndSilences     = "end silences"
)

// silenceButtonReason is the reason of an incident silence made by a button: the root's
// "Silence DURATION" button (dur), else the silence menu.
func silenceButtonReason(dur string) string {
	if dur != "" {
		return "Silence " + dur + " button"
	}
	return "Silence menu"
}

// incidentSilenced answers `incident silence`.
func incidentSilenced(name, id, sid string, until time.Time) Reply {
	return Reply{Text: fmt.Sprintf("%s is silenced until %s (%s): its alerts are still counted, nothing is posted for them until then. `%s silence expire %s` ends it earlier.",
		id, human.Stamp(until), sid, name, sid)}
}

// labelsSilenced answers `silence LABELS …`: starts is zero for a silence that holds now;
// local is how people read a time.
func labelsSilenced(name, sid, matchers, actor, reason string, starts, until time.Time, local func(time.Time) string) Reply {
	if !starts.IsZero() {
		return Reply{Public: true, Text: fmt.Sprintf("%s: from %s until %s, alerts matching %s open and join no incident (set by %s%s); before it starts they are posted as usual. `%s silence expire %s` cancels it.",
			sid, local(starts), local(until), matchers, actor, reasonSuffix(reason), name, sid)}
	}
	return Reply{Public: true, Text: fmt.Sprintf("%s: alerts matching %s open and join no incident until %s (set by %s%s). `%s silences` lists what it silenced; `%s silence expire %s` ends it.",
		sid, matchers, human.Stamp(until), actor, reasonSuffix(reason), name, name, sid)}
}

// silenceExtended answers `silence extend`.
func silenceExtended(sid string, sil *state.Silence, until time.Time, d time.Duration, actor string) Reply {
	return Reply{Public: sil.Kind == state.SilenceLabels, Text: fmt.Sprintf("%s now lasts until %s (extended by %s by %s).", sid, human.Stamp(until), d, actor)}
}

// silenceEnded answers `silence expire`.
func silenceEnded(sid string, sil *state.Silence, actor string) Reply {
	if sil.Kind == state.SilenceIncident {
		return Reply{Text: fmt.Sprintf("%s ended: %s's updates are posted again.", sid, sil.Incident)}
	}
	return Reply{Public: true, Text: fmt.Sprintf("%s ended by %s: alerts matching %s open and join incidents again.", sid, actor, sil.Matchers)}
}

// silencesReply answers `silences`: each silence in force with up to 20 of its alerts.
func silencesReply(list []*state.Silence) Reply {
	if len(list) == 0 {
		return Reply{Text: "No silence is in force."}
	}
	r := Reply{Text: fmt.Sprintf("%d silence%s in force", len(list), human.Plural(len(list)))}
	for _, sil := range list {
		r.Sections = append(r.Sections, silenceSection(sil, 20))
	}
	return r
}

// previewShown is how many incidents a silence's preview lists.
const previewShown = 20

// silencePreviewReply answers `silence … --preview`: hits are the incidents the person may
// see, of the scanned newest open ones.
func silencePreviewReply(matchers string, hits []state.PreviewHit, scanned int) Reply {
	if len(hits) == 0 {
		return Reply{Text: fmt.Sprintf("Preview: a silence of %s would hold none of the %d newest open incidents' alerts; it would hold alerts that arrive while it lasts. Nothing was made.", matchers, scanned)}
	}
	var lines []string
	for _, hit := range hits[:min(len(hits), previewShown)] {
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
	more := ""
	if len(hits) > previewShown {
		more = fmt.Sprintf(" (%d shown)", previewShown)
	}
	return Reply{Text: fmt.Sprintf("Preview: a silence of %s would hold alerts of %d open incident%s%s, and every matching alert that arrives while it lasts. Nothing was made.",
		matchers, len(hits), human.Plural(len(hits)), more), Sections: []Section{{Lines: lines, Pre: true}}}
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

// silencesStatus is the `status` section of the silences in force (list), or of why they
// could not be read (err); nil without any.
func silencesStatus(list []*state.Silence, err error) *Section {
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

// The silence commands' usage errors; usage is the command's usage line.

func usageExtendBy(usage []string) error {
	return &UsageError{Msg: "say by how much: silence extend ID by DURATION", Usages: usage}
}

func usageSilenceTooLong(sid string, usage []string) error {
	return &UsageError{Msg: fmt.Sprintf("%s would then last past %s (30 days from now); change the alert rule instead", sid, MaxSilence), Usages: usage}
}

func usageSilenceMatchers(usage []string) error {
	return &UsageError{Msg: "silence takes LABEL=VALUE matchers, then for DURATION", Usages: usage}
}

func usageSilenceFrom(usage []string) error {
	return &UsageError{Msg: "from takes a time: HH:MM or 2026-12-24T22:00", Usages: usage}
}

// What is wrong with a duration or a start time people typed; the usage error shows it.

func errNoDuration() error {
	return errors.New("say how long: for DURATION, such as for 2h")
}

func errNotDuration(s string) error {
	return fmt.Errorf("%q is not a duration (such as 90s, 45m, 2h or 1d)", s)
}

func errTooShort(s string) error {
	return fmt.Errorf("%s is too short: at least 1s", s)
}

func errTooLong(s string) error {
	return fmt.Errorf("%s is too long: at most %s (30 days); change the alert rule instead", s, MaxSilence)
}

func errNotTime(s string, loc *time.Location) error {
	return fmt.Errorf("%q is not a time: HH:MM or 2026-12-24T22:00 (%s), or RFC 3339", s, loc)
}

func errInPast(t time.Time, loc *time.Location) error {
	return fmt.Errorf("%s is in the past", t.In(loc).Format("2006-01-02 15:04 MST"))
}

func errTooFarAhead(t time.Time, loc *time.Location) error {
	return fmt.Errorf("%s is more than 30 days ahead", t.In(loc).Format("2006-01-02 15:04 MST"))
}
