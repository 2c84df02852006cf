package commands

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// EventDetail is what a timeline shows of an incident's event beside its name and who caused
// it: the scripts store fields, this makes the sentence.
func EventDetail(e state.Event) string {
	switch e.Name {
	case state.EventOpened:
		return e.Title
	case state.EventResolved:
		if e.Auto {
			return "auto-resolved: every alert resolved"
		}
		return e.Note
	case state.EventAlertJoined, state.EventAlertAgain, state.EventAlertResolved:
		return alertDetail(e.Detail, e.Fingerprint)
	case state.EventAlertChanged:
		what := "title or annotations changed: "
		if e.Change == state.NewsLabels {
			what = "labels changed: "
		}
		return what + alertDetail(e.Detail, e.Fingerprint)
	case state.EventMergedInto:
		return e.Other
	case state.EventMergedFrom:
		if e.Count > 0 {
			return fmt.Sprintf("%s (%s)", e.Other, human.Count(int(e.Count), "occurrence"))
		}
		return e.Other
	case state.EventSeverity:
		return fmt.Sprintf("SEV%d (was SEV%d)", e.Severity, e.Was)
	case state.EventAssigned:
		if e.OwnerName != "" {
			return e.OwnerName + " (" + e.Owner + ")"
		}
		return e.Owner
	case state.EventEscalated:
		lvl := ""
		if e.Level > 1 {
			lvl = fmt.Sprintf(" (level %d)", e.Level)
		}
		if e.Repeat {
			return fmt.Sprintf("still unacknowledged, reminded%s; called %s", lvl, strings.Join(e.Mention, ","))
		}
		return fmt.Sprintf("unacknowledged SEV%d after %s%s; called %s", e.Severity, e.After, lvl, strings.Join(e.Mention, ","))
	case state.EventAckExpired:
		return "acknowledged but untouched for " + e.After.String() + ": escalates again"
	case state.EventUnmerged, state.EventUnmergedFrom:
		return e.Other
	case state.EventReopened:
		return human.Count(int(e.Count), "key") + " thread here again"
	case state.EventSilenced:
		s := e.Silence + " until " + human.Stamp(e.Until)
		if e.Reason != "" {
			s += ": " + e.Reason
		}
		return s
	case state.EventSilenceEnded, state.EventSilenceExpired:
		return fmt.Sprintf("%s (set by %s): %s while silenced", e.Silence, or(e.By, "?"), human.Count(int(e.Count), "occurrence"))
	case state.EventFloodOver:
		return fmt.Sprintf("at most %d new alerts a minute for %s", e.Limit, e.Quiet)
	case state.EventCorrelated:
		return CorrelatedDetail(e.Title, e.Pipeline, e.Since)
	case state.EventRecovered:
		return e.Detail + StillFiring(e.Firing, e.Names)
	case state.EventDiagnosis: // the timeline keeps the headline, the outbox the whole verdict
		if h, ok := pipeline.DecodeHeadline(e.Detail); ok {
			return "Automatic diagnosis — " + headlineText(h)
		}
		if r, ok := DiagnosisReply(e.Detail); ok {
			return r.Text
		}
	}
	return e.Detail
}

// CorrelatedDetail says why an alert joined a pipeline's incident.
func CorrelatedDetail(title, pipeline string, since time.Time) string {
	return title + ": same pipeline (" + pipeline + "), open since " + human.Stamp(since)
}

// StillFiring is what a recovery adds when alerts still fire: how many, and the titles of
// those that joined; "" when none does.
func StillFiring(firing int64, names []string) string {
	if firing <= 0 {
		return ""
	}
	s := "\nStill firing: " + human.Count(int(firing), "alert")
	if len(names) > 0 {
		s += " (" + strings.Join(names, ", ") + ")"
	}
	return s + "; the incident stays open until they resolve."
}

func alertDetail(detail, fp string) string {
	if fp == "" {
		return detail
	}
	return detail + " [" + fp[:min(len(fp), 16)] + "]"
}

// NewsDetail is one news item of an incident's update: the alert's detail, or streamwatch's
// news of the pipeline (a join, a symptom, a recovery) that waited for the end of a silence.
func NewsDetail(n state.News) string {
	switch n.Kind {
	case state.EventCorrelated:
		since, _ := strconv.ParseInt(n.Since, 10, 64)
		return CorrelatedDetail(n.Title, n.Pipeline, time.UnixMilli(since))
	case state.EventRecovered:
		var names []string
		_ = json.Unmarshal([]byte(n.Names), &names)
		return n.Detail + StillFiring(n.Firing, names)
	}
	return n.Detail
}

// Title is an incident's title for people: a flood incident has none of its own (its root
// says more, bot/render_flood.go).
func Title(inc *state.Incident) string {
	if inc.Title == "" && strings.HasPrefix(inc.Key, "flood:") {
		return "Alert flood in " + inc.Channel
	}
	return inc.Title
}
