package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// What an incident's thread says when something happens to it. The sentences are made here;
// the parts that came from alerts, storage or people are made safe by the renderer (Markup),
// which also cuts the whole reply to the chat's size.

// Markup makes the parts of a sentence that the sentence does not choose (titles, notes,
// names, label values) inert where the sentence goes, and renders the references a sentence
// makes on purpose (a person to notify, a channel). bot implements it for Slack's mrkdwn.
type Markup interface {
	// Line is s on one line, inert, cut to n runes (0: uncut).
	Line(s string, n int) string
	// Text is s inert with its lines kept, cut to n runes (0: uncut).
	Text(s string, n int) string
	// Code is s as an inert code span, cut to n runes.
	Code(s string, n int) string
	// Mention is the reference that notifies the person or group id names; "" when id names
	// none.
	Mention(id string) string
	// Channel is the reference to the channel id names.
	Channel(id string) string
}

// ThreadText is an outbox delivery's thread reply; "" means none. Replies the delivery
// carries as data (a diagnosis, a note, a chart) are the renderer's to lay out.
func ThreadText(d state.Delivery, m Markup) string {
	switch d.Kind {
	case state.KindFlush:
		switch d.Name {
		case state.EventFlood:
			return floodThreadText(d, m)
		case state.EventNews:
			return newsText(d, m)
		}
		// Identical re-sends: the root's count and last seen change, the thread hears nothing.
		return ""
	case state.KindEvent:
		if text, ok := lifecycleText(d, m); ok {
			return text
		}
		by := ""
		if d.Actor != "" {
			by = " by " + m.Line(d.Actor, 100)
		}
		switch d.Name {
		case state.EventAllResolved:
			if d.Actor == "probe" {
				return "Recovered: " + m.Text(d.Detail, 0) + "."
			}
			if !d.Since.IsZero() {
				return "All alerts of this incident are resolved. It auto-resolves at " + human.Stamp(d.Since) + " unless one fires again."
			}
			return "All alerts of this incident are resolved. It stays open until someone resolves it."
		case "acknowledged":
			return "Acknowledged" + by + "."
		case "resolved":
			s := "Resolved" + by + "."
			if note := EventDetail(d.Event); note != "" {
				s += " Note: " + m.Text(note, 2000)
			}
			return s
		case state.EventUnacknowledged:
			return "Unacknowledged" + by + ": escalation resumes at its next level."
		case state.EventReopened:
			return fmt.Sprintf("Reopened%s: the incident is open again, and %d of its keys thread here again.", by, d.Count)
		case state.EventUnmerged:
			return "Unmerged from " + m.Line(d.Other, 0) + by + ": this incident is open again with its keys, alerts and count."
		case state.EventUnmergedFrom:
			return fmt.Sprintf("%s was unmerged%s: its keys, alerts and %d occurrence%s went back to it.", m.Line(d.Other, 0), by, d.Count, human.Plural(d.Count))
		case state.EventAckExpired:
			return fmt.Sprintf("⏰ Acknowledged, but nobody has touched it for %s: it is unacknowledged again, and escalates.", d.After)
		case "merged_into":
			return "Merged into " + m.Line(d.Other, 0) + by + ": its alerts and later duplicates go to " + m.Line(d.Other, 0) + "'s thread."
		case "remediation", "probe":
			return m.Text(d.Detail, 0)
		case "detected", "recovered": // detection's news, and its recovery note
			return m.Text(EventDetail(d.Event), 3000)
		case "correlated":
			return "Joined this incident: " + m.Line(EventDetail(d.Event), 1000) + "."
		case "merged_from":
			return fmt.Sprintf("%s was merged into this incident%s (%d occurrence%s).", m.Line(d.Other, 0), by, d.Count, human.Plural(d.Count))
		case "flood_over":
			return floodOverText(d, m)
		}
		return m.Line(d.Name, 0) + by
	}
	return ""
}

// lifecycleText is the thread reply of a lifecycle event (silences, escalation, severity,
// owner); ok false for other events. The only mentions are of the people slack.escalation
// names, built by Markup from ids that look like ids.
func lifecycleText(d state.Delivery, m Markup) (string, bool) {
	by := m.Line(d.Actor, 100)
	switch d.Name {
	case "silenced":
		s := fmt.Sprintf("🔕 Silenced until %s by %s (%s)", human.Stamp(d.Until), by, m.Line(d.Silence, 40))
		if r := d.Reason; r != "" {
			s += ": " + m.Line(r, 500)
		}
		return s + ". Its alerts are still recorded and counted; nothing is posted for them until the silence ends.", true
	case "silence_expired", "silence_ended":
		set := "set by " + m.Line(d.By, 100)
		if r := d.Reason; r != "" {
			set += ": " + m.Line(r, 300)
		}
		sid := m.Line(d.Silence, 40)
		head := "🔔 The silence " + sid + " (" + set + ") has ended"
		if d.Name == "silence_ended" {
			head = "🔔 " + by + " ended the silence " + sid + " (" + set + ")"
		}
		return fmt.Sprintf("%s: %d occurrence%s arrived meanwhile. Updates are posted again.", head, d.Count, human.Plural(d.Count)), true
	case "escalated":
		var who []string
		for _, id := range d.Mention {
			if ref := m.Mention(strings.TrimSpace(id)); ref != "" {
				who = append(who, ref)
			}
		}
		s := fmt.Sprintf("📣 %s is still unacknowledged after %s.", m.Line(d.Incident, 40), m.Line(d.After.String(), 40))
		switch {
		case d.Repeat:
			s = fmt.Sprintf("📣 %s is still unacknowledged (a reminder, level %d).", m.Line(d.Incident, 40), d.Level)
		case d.Level > 1:
			s = fmt.Sprintf("📣 %s is still unacknowledged after %s (level %d).", m.Line(d.Incident, 40), m.Line(d.After.String(), 40), d.Level)
		}
		if len(who) > 0 {
			s = strings.Join(who, " ") + " " + s
		}
		return s + " Acknowledge it, or silence it if it is known.", true
	case "severity":
		return fmt.Sprintf("Severity set to %s by %s (was %s).", alerts.Severity(d.Severity), by, alerts.Severity(d.Was)), true
	case "assigned":
		if d.Owner == "" {
			return "Unassigned by " + by + ".", true
		}
		return "Assigned to " + ownerRef(d.Owner, d.OwnerName, m) + " by " + by + ".", true
	}
	return "", false
}

// ownerRef is an owner as a mention of the person (in an edited root it notifies nobody; in
// a thread reply it notifies the person assigned), or the name when the id is a group's or
// none.
func ownerRef(id, name string, m Markup) string {
	if ref := m.Mention(id); ref != "" && id[0] != 'S' {
		return ref
	}
	return m.Line(or(name, id), 100)
}

// newsLabels introduce each kind of news.
var newsLabels = map[string]string{
	state.NewsJoined:      "New alert",
	state.NewsLabels:      "Labels changed",
	state.NewsAnnotations: "Changed",
	state.NewsAgain:       "Firing again",
	state.NewsResolved:    "Resolved",
	state.NewsAllResolved: "All alerts resolved (while silenced)",
	// streamwatch's own news of the pipeline, kept while the incident was silenced
	"correlated": "Joined",
	"detected":   "Detected",
	"recovered":  "Recovered",
}

// newsText is an incident's news: one line per item, and how many more there were.
func newsText(d state.Delivery, m Markup) string {
	var lines []string
	for _, n := range d.News {
		label, ok := newsLabels[n.Kind]
		if !ok {
			label = "Alert"
		}
		lines = append(lines, "• "+label+": "+m.Line(NewsDetail(n), 300))
	}
	if more := d.Distinct - int64(len(lines)); more > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more (%s lists every alert)", more, m.Code("incident show "+d.Incident, 60)))
	}
	return strings.Join(lines, "\n")
}

// floodThreadText is a flood's coalesced update: how many alerts joined, how many of them
// new, and the newest keys.
func floodThreadText(d state.Delivery, m Markup) string {
	if d.Count == 0 {
		return ""
	}
	s := fmt.Sprintf("%d more alert%s since %s, %d with a new key", d.Count, human.Plural(d.Count), timeOfDay(d.Since), d.Distinct)
	if len(d.Keys) > 0 {
		var keys []string
		for _, k := range d.Keys {
			keys = append(keys, m.Code(k, 100))
		}
		s += "; newest: " + strings.Join(keys, ", ")
	}
	return s
}

// floodOverText is the thread reply when a flood ends.
func floodOverText(d state.Delivery, m Markup) string {
	since := ""
	if !d.Since.IsZero() {
		since = " (since " + timeOfDay(d.Since) + ")"
	}
	return "The flood is over: " + m.Line(EventDetail(d.Event), 0) + since + ". New alerts in this channel open their own " +
		"incidents again; this incident stays open until someone resolves it."
}

// EmptyNotice stands for a notice with no text.
const EmptyNotice = "(empty notice)"

// RescueNote is the line under an incident's root posted again in to because of the Slack
// mishap kase (message_not_found, is_archived, channel_not_found, not_in_channel).
func RescueNote(from, to, kase string, m Markup) string {
	if from == to {
		return "This incident's message was deleted in Slack, so it is posted again here; its thread continues here."
	}
	why := map[string]string{
		"is_archived":       "that channel is archived",
		"channel_not_found": "that channel no longer exists",
		"not_in_channel":    "streamwatch was removed from that channel",
	}[kase]
	return "Moved here from " + m.Channel(from) + ": " + why + ". Its thread continues here."
}

// timeOfDay is a time of day as people read it (slack.time_zone): "10:41:05" in UTC, "11:41:05
// CET" elsewhere (human.Clock marks UTC with a Z; the thread never did).
func timeOfDay(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if human.Zone() == time.UTC {
		return t.UTC().Format("15:04:05")
	}
	return t.In(human.Zone()).Format("15:04:05 MST")
}

// ChannelRefused answers a command in a channel streamwatch takes none in
// (slack.allowed_channels).
func ChannelRefused() Reply {
	return Reply{Text: "streamwatch does not take commands in this channel; ask in one of its incident channels."}
}

// NotShared answers a command whose chart or file (name) the chat refused; code is the chat's
// error code.
func NotShared(name, code string) Reply {
	return Reply{Text: "Sorry: " + name + " could not be posted to Slack (" + code + "); try again."}
}

// EmptyFile is the content of a shared file that has none.
const EmptyFile = "(empty)"
