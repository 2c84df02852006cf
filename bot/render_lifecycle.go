package bot

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// What the incident's lifecycle adds to Slack: news in the thread instead of echoes, silences,
// escalation (the one message that mentions anyone: the people slack.escalation names),
// severity and owner. Everything an alert or a person typed is made inert (text.go); the only
// mentions are built here from ids that look like Slack's.

// Action ids of the root's silence buttons.
const (
	actionSilence   = "incident_silence"     // "Silence 1h" on roots posted before the menu: incident silence ID for 1h
	actionSilenceOf = "incident_silence_for" // the "Silence …" menu: incident silence ID for 15m|1h|4h, or until morning
	actionUnsilence = "incident_unsilence"   // "End silence": silence expire SIL-N
)

// slackID is a user (U…, W…) or user-group (S…) id.
var slackID = regexp.MustCompile(`^[UWS][A-Z0-9]{2,20}$`)

// mention renders a user or user-group id as the mention Slack notifies; "" for anything else.
func mention(id string) string {
	if !slackID.MatchString(id) {
		return ""
	}
	if id[0] == 'S' {
		return "<!subteam^" + id + ">"
	}
	return "<@" + id + ">"
}

// owner renders an incident's owner: Slack shows a user mention as the person's name (in a
// root, which is edited, it notifies nobody); a name when the id is not one.
func owner(inc *state.Incident) string {
	if inc.Owner == "" {
		return ""
	}
	if m := mention(inc.Owner); m != "" && inc.Owner[0] != 'S' {
		return m
	}
	return clip(mrkdwn(oneLine(or(inc.OwnerName, inc.Owner))), 100)
}

// lifecycleNotes are the root's notes about silence, escalation and severity.
func lifecycleNotes(inc *state.Incident) []string {
	var notes []string
	if inc.Listed > 1 && inc.Flood == nil {
		notes = append(notes, fmt.Sprintf("%d alerts, %d firing", inc.Listed, inc.Firing))
	}
	if s := inc.Silence; s != nil && inc.Status != state.StatusResolved {
		n := fmt.Sprintf("🔕 Silenced until %s by %s (%s)", human.Stamp(s.Until), clip(mrkdwn(oneLine(s.By)), 100), clip(mrkdwn(oneLine(s.ID)), 40))
		if s.Reason != "" {
			n += ": " + clip(mrkdwn(oneLine(s.Reason)), 300)
		}
		notes = append(notes, n)
	}
	if !inc.EscalatedAt.IsZero() {
		notes = append(notes, "📣 Escalated at "+human.Stamp(inc.EscalatedAt)+": nobody had acknowledged it")
	}
	if inc.SeverityBy != "" {
		notes = append(notes, "Severity set by "+clip(mrkdwn(oneLine(inc.SeverityBy)), 100))
	}
	return notes
}

// lifecycleFlags are the root text's short flags: ", silenced", ", escalated".
func lifecycleFlags(inc *state.Incident) string {
	var f string
	if inc.Silence != nil && inc.Status != state.StatusResolved {
		f += ", silenced"
	}
	if !inc.EscalatedAt.IsZero() && inc.Status == state.StatusOpen {
		f += ", escalated"
	}
	return f
}

// silenceButton is "Silence 1h", or "End silence" on a silenced incident.
func silenceButton(inc *state.Incident) slack.BlockElement {
	if s := inc.Silence; s != nil && state.NormalizeSilenceID(s.ID) == s.ID && len(s.ID) < 40 {
		return slack.NewButtonBlockElement(actionUnsilence, s.ID, slack.NewTextBlockObject(slack.PlainTextType, "End silence", false, false))
	}
	opt := func(label, what string) *slack.OptionBlockObject {
		return slack.NewOptionBlockObject(inc.ID+" "+what, slack.NewTextBlockObject(slack.PlainTextType, label, false, false), nil)
	}
	return slack.NewOverflowBlockElement(actionSilenceOf, opt("Silence 15 min", "15m"), opt("Silence 1 h", "1h"),
		opt("Silence 4 h", "4h"), opt("Silence until the next working morning", "morning"))
}

// lifecycleText renders the thread reply of a lifecycle event; ok false for other events.
func lifecycleText(d state.Delivery) (string, bool) {
	by := clip(mrkdwn(oneLine(d.Actor)), 100)
	switch d.Name {
	case "silenced":
		s := fmt.Sprintf("🔕 Silenced until %s by %s (%s)", human.Stamp(d.Until), by, clip(mrkdwn(oneLine(d.Silence)), 40))
		if r := d.Reason; r != "" {
			s += ": " + clip(mrkdwn(oneLine(r)), 500)
		}
		return s + ". Its alerts are still recorded and counted; nothing is posted for them until the silence ends.", true
	case "silence_expired", "silence_ended":
		set := "set by " + clip(mrkdwn(oneLine(d.By)), 100)
		if r := d.Reason; r != "" {
			set += ": " + clip(mrkdwn(oneLine(r)), 300)
		}
		sid := clip(mrkdwn(oneLine(d.Silence)), 40)
		head := "🔔 The silence " + sid + " (" + set + ") has ended"
		if d.Name == "silence_ended" {
			head = "🔔 " + by + " ended the silence " + sid + " (" + set + ")"
		}
		return fmt.Sprintf("%s: %d occurrence%s arrived meanwhile. Updates are posted again.", head, d.Count, human.Plural(d.Count)), true
	case "escalated":
		var who []string
		for _, id := range d.Mention {
			if m := mention(strings.TrimSpace(id)); m != "" {
				who = append(who, m)
			}
		}
		s := fmt.Sprintf("📣 %s is still unacknowledged after %s.", clip(mrkdwn(oneLine(d.Incident)), 40), clip(mrkdwn(oneLine(d.After.String())), 40))
		switch {
		case d.Repeat:
			s = fmt.Sprintf("📣 %s is still unacknowledged (a reminder, level %d).", clip(mrkdwn(oneLine(d.Incident)), 40), d.Level)
		case d.Level > 1:
			s = fmt.Sprintf("📣 %s is still unacknowledged after %s (level %d).", clip(mrkdwn(oneLine(d.Incident)), 40), clip(mrkdwn(oneLine(d.After.String())), 40), d.Level)
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
		who := mention(d.Owner)
		if who == "" || d.Owner[0] == 'S' {
			who = clip(mrkdwn(oneLine(or(d.OwnerName, d.Owner))), 100)
		}
		return "Assigned to " + who + " by " + by + ".", true
	}
	return "", false
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

// newsText renders an incident's news: one line per item, and how many more there were.
func newsText(d state.Delivery) string {
	var lines []string
	for _, n := range d.News {
		label, ok := newsLabels[n.Kind]
		if !ok {
			label = "Alert"
		}
		lines = append(lines, "• "+label+": "+clip(mrkdwn(oneLine(commands.NewsDetail(n))), 300))
	}
	if more := d.Distinct - int64(len(lines)); more > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more (%s lists every alert)", more, codeSpan("incident show "+d.Incident, 60)))
	}
	return strings.Join(lines, "\n")
}
