package bot

import (
	"regexp"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// What the incident's lifecycle adds to Slack: the root's silence buttons, and the mentions
// of escalation (the one message that mentions anyone: the people slack.escalation names) and
// of owners. commands/render_thread.go words the news, silences, escalation, severity and
// owner; everything an alert or a person typed is made inert (text.go, markup); the only
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

// silenceButton is "Silence 1h", or "End silence" on a silenced incident.
func silenceButton(inc *state.Incident) slack.BlockElement {
	if s := inc.Silence; s != nil && state.NormalizeSilenceID(s.ID) == s.ID && len(s.ID) < 40 {
		return slack.NewButtonBlockElement(actionUnsilence, s.ID, slack.NewTextBlockObject(slack.PlainTextType, commands.LabelUnsilence, false, false))
	}
	var opts []*slack.OptionBlockObject
	for _, c := range commands.SilenceChoices {
		opts = append(opts, slack.NewOptionBlockObject(inc.ID+" "+c.For, slack.NewTextBlockObject(slack.PlainTextType, c.Label, false, false), nil))
	}
	return slack.NewOverflowBlockElement(actionSilenceOf, opts...)
}
