package bot

import (
	"strings"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// floodRootBlocks renders a flood incident's root message: what the storm is made of
// (commands/render_incident.go words it), its fields, its notes and its buttons.
func floodRootBlocks(inc *state.Incident) []slack.Block {
	md := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
	}
	var fields []*slack.TextBlockObject
	for _, f := range commands.RootFields(inc, "", markup{}) {
		fields = append(fields, md("*"+f.Name+"*\n"+f.Value))
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, clip(plain(commands.RootHeader(inc)), 150), false, false)),
		slack.NewSectionBlock(md(commands.FloodSummary(inc, markup{})), nil, nil),
		slack.NewSectionBlock(nil, fields, nil),
	}
	if lines := commands.FloodBreakdown(inc, markup{}); len(lines) > 0 {
		blocks = append(blocks, slack.NewSectionBlock(md(clip(strings.Join(lines, "\n"), 2900)), nil, nil))
	}
	var notes []slack.MixedElement
	for _, n := range commands.RootNotes(inc, markup{}) {
		notes = append(notes, md(n))
	}
	blocks = append(blocks, slack.NewContextBlock("", notes...))
	if inc.Status != state.StatusResolved {
		blocks = append(blocks, slack.NewActionBlock("incident_actions", incidentButtons(inc)...))
	}
	return blocks
}

// codeSpan shows a label value or key, which the alert's sender chose, as inert `code`, cut
// to n bytes: a backtick inside would end the span, so it becomes a quote.
func codeSpan(s string, n int) string {
	return "`" + clip(mrkdwn(oneLine(strings.ReplaceAll(s, "`", "'"))), n) + "`"
}
