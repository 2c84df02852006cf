package state

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Event is one thing that happened to an incident, as the scripts record it in its timeline
// and hand it to the deliverer through the outbox: its name and its fields, nothing more. The
// scripts make no sentences; the renderers do (bot, commands).
type Event struct {
	At    time.Time
	Name  string // one of the Event* names
	Actor string
	// Detail is text made elsewhere: an alert's one-line detail, a note (a diagnosis, a watch
	// report), detection's symptom line; a coalesced update's last occurrence.
	Detail    string
	Note      string // a person's resolution note
	Auto      bool   // resolved: by the auto-resolve pass (every alert resolved)
	Other     string // merged_into: the incident it went into; merged_from: the one that came in
	Count     int64  // merged_from: occurrences merged; silence_*: occurrences while silenced; flush: occurrences since Since
	Severity  int    // severity, escalated: the severity (Was: before)
	Was       int
	Owner     string // assigned ("" unassigns), OwnerName as named
	OwnerName string
	Mention   []string      // escalated: whom it called
	After     time.Duration // escalated: unacknowledged (and not silenced) this long; ack_expired: untouched this long
	Level     int           // escalated: the escalation level (1 is slack.escalation's after and mention)
	Repeat    bool          // escalated: a level's repeated mention
	Silence   string        // silenced, silence_*: the silence's id
	Until     time.Time     // silenced: until when
	By        string        // silence_*: who set the silence
	Reason    string        // silenced, silence_*: its reason
	Limit     int64         // flood_over: the flood limit (new alerts a minute)
	Quiet     time.Duration // flood_over: how long the rate stayed at or below it
	// Since: flush: the first occurrence counted; all_resolved: when it auto-resolves (zero:
	// not); flood_over: when the rate fell to the limit; correlated: since when the incident
	// was open.
	Since       time.Time
	Title       string // correlated: the joining alert's title
	Pipeline    string // correlated
	Change      string // alert_changed: labels or annotations
	Fingerprint string // alert_*: the alert
	Firing      int64  // recovered: alerts that still fire
	Names       []string
	// A coalesced update (KindFlush) with news: the news items (Distinct counts them all); of a
	// flood: the newest keys that joined (Distinct counts the keys new since the last update).
	News     []News
	Keys     []string
	Distinct int64
}

// News is one item of an incident's coalesced update: what an alert brought, or streamwatch's
// news of a pipeline that waited for the end of a silence.
type News struct {
	Kind        string `json:"k"` // one of the News* kinds, or an event name (correlated, detected, recovered)
	Detail      string `json:"d,omitempty"`
	Fingerprint string `json:"fp,omitempty"`
	Title       string `json:"title,omitempty"`
	Pipeline    string `json:"pipeline,omitempty"`
	Since       string `json:"since,omitempty"` // ms
	Firing      int64  `json:"firing,omitempty"`
	Names       string `json:"names,omitempty"` // JSON list
}

// The event names.
const (
	EventOpened         = "opened"
	EventAcknowledged   = "acknowledged"
	EventResolved       = "resolved"
	EventAllResolved    = "all_resolved"
	EventMergedInto     = "merged_into"
	EventMergedFrom     = "merged_from"
	EventAlertJoined    = "alert_joined"
	EventAlertAgain     = "alert_firing_again"
	EventAlertChanged   = "alert_changed"
	EventAlertResolved  = "alert_resolved"
	EventSeverity       = "severity"
	EventAssigned       = "assigned"
	EventUnassigned     = "unassigned"
	EventEscalated      = "escalated"
	EventAckExpired     = "ack_expired"
	EventUnacknowledged = "unacknowledged"
	EventReopened       = "reopened"
	EventUnmerged       = "unmerged"
	EventUnmergedFrom   = "unmerged_from"
	EventSilenced       = "silenced"
	EventSilenceEnded   = "silence_ended"
	EventSilenceExpired = "silence_expired"
	EventFloodOver      = "flood_over"
	EventCorrelated     = "correlated"
	EventDetected       = "detected"
	EventRecovered      = "recovered"
	// Notes carry Detail made elsewhere: a diagnosis, a probe, a watch, a remediation.
	EventNote        = "note"
	EventProbe       = "probe"
	EventWatch       = "watch"
	EventRemediation = "remediation"
	// EventDiagnosis is a verdict as data (its Detail is pipeline's JSON), worded when it
	// is shown: in the thread as the bot delivers it, in timelines by commands.
	EventDiagnosis = "diagnosis"
	// Flush events (KindFlush): an update with news, a flood's new keys, or the root alone ("").
	EventNews  = "news"
	EventFlood = "flood"
)

// parseEvent reads an event's fields as a script stored them (a timeline or outbox entry).
// Entries an earlier version wrote put some fields in Detail, separated by "\x1f"; those are
// read too, so that an upgrade delivers what was queued before it.
func parseEvent(v map[string]any) Event {
	n := func(k string) int64 { x, _ := strconv.ParseInt(str(v[k]), 10, 64); return x }
	e := Event{Name: str(v["event"]), Actor: str(v["actor"]), Detail: str(v["detail"]), Note: str(v["note"]),
		Auto: str(v["auto"]) == "1", Other: str(v["incident"]), Count: n("count"), Severity: int(n("severity")),
		Was: int(n("was")), Owner: str(v["owner"]), OwnerName: str(v["owner_name"]), After: time.Duration(n("after")) * time.Millisecond,
		Silence: str(v["silence"]), Until: fromMS(n("until")), By: str(v["by"]), Reason: str(v["reason"]), Limit: n("limit"),
		Quiet: time.Duration(n("quiet")) * time.Millisecond, Since: fromMS(n("since")), Title: str(v["title"]),
		Pipeline: str(v["pipeline"]), Change: str(v["change"]), Fingerprint: str(v["fp"]), Firing: n("firing"),
		Distinct: n("distinct"), At: fromMS(n("at")), Level: int(n("level")), Repeat: str(v["repeat"]) == "1"}
	if m := str(v["mention"]); m != "" {
		e.Mention = strings.Split(m, ",")
	}
	if names := str(v["names"]); names != "" {
		_ = json.Unmarshal([]byte(names), &e.Names)
	}
	if news := str(v["news"]); news != "" {
		_ = json.Unmarshal([]byte(news), &e.News)
	}
	if keys := str(v["keys"]); keys != "" {
		_ = json.Unmarshal([]byte(keys), &e.Keys)
	}
	if strings.Contains(e.Detail, "\x1f") || (e.Name == EventNews && e.News == nil && e.Detail != "") ||
		(e.Name == EventFlood && e.Keys == nil && e.Detail != "") || (e.Name == EventSeverity && e.Severity == 0) {
		e.legacy()
	}
	return e
}

// legacy reads the Detail of an entry an earlier version queued.
func (e *Event) legacy() {
	parts := strings.Split(e.Detail, "\x1f")
	switch e.Name {
	case EventEscalated:
		if len(parts) == 2 {
			e.Mention, e.Detail = strings.Split(parts[0], ","), ""
			e.After, _ = time.ParseDuration(parts[1])
		}
	case EventSilenced:
		if len(parts) == 2 {
			e.Silence, e.Reason, e.Detail = parts[0], parts[1], ""
		}
	case EventSilenceEnded, EventSilenceExpired:
		if len(parts) == 3 {
			e.Silence, e.By, e.Reason, e.Detail = parts[0], parts[1], parts[2], ""
		}
	case EventAssigned:
		if len(parts) == 2 {
			e.Owner, e.OwnerName, e.Detail = parts[0], parts[1], ""
		}
	case EventNews:
		for _, l := range strings.Split(e.Detail, "\n") {
			kind, detail, _ := strings.Cut(l, "\x1f")
			e.News = append(e.News, News{Kind: kind, Detail: detail})
		}
		e.Detail = ""
	case EventFlood:
		e.Keys, e.Detail = strings.Split(e.Detail, "\n"), ""
	case EventSeverity:
		sev, _ := strconv.Atoi(e.Detail)
		e.Severity, e.Was, e.Count, e.Detail = sev, int(e.Count), 0, ""
	}
}
