package bot

import (
	"strings"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// Action ids of the root message's buttons.
const (
	actionAck      = "incident_ack"
	actionUnack    = "incident_unack"
	actionResolve  = "incident_resolve"
	actionDiagnose = "incident_diagnose"
	// commandAction prefixes the buttons of command replies; their value is the command text
	// the click runs as the person who clicked.
	commandAction = "cmd_"
)

// markup makes the parts of commands' sentences inert for mrkdwn (text.go), and builds the
// only references bot makes on purpose: mentions of ids that look like Slack's, and channels.
type markup struct{}

func (markup) Line(s string, n int) string { return cut(mrkdwn(oneLine(s)), n) }
func (markup) Text(s string, n int) string { return cut(mrkdwn(s), n) }
func (markup) Code(s string, n int) string { return codeSpan(s, n) }
func (markup) Mention(id string) string    { return mention(id) }
func (markup) Channel(id string) string    { return "<#" + id + ">" }

// cut is clip, or s whole for n 0.
func cut(s string, n int) string {
	if n == 0 {
		return s
	}
	return clip(s, n)
}

// rootText is the notification text of an incident's root message.
func rootText(inc *state.Incident) string {
	return commands.RootText(inc, markup{})
}

// rootBlocks renders an incident's root message; description is its pipeline's
// (pipelines[].description), "" for none.
func rootBlocks(inc *state.Incident, description string) []slack.Block {
	if inc.Flood != nil {
		return floodRootBlocks(inc)
	}
	header := clip(plain(oneLine(commands.RootHeader(inc))), 150)
	var fields []*slack.TextBlockObject
	for _, f := range commands.RootFields(inc, description, markup{}) {
		fields = append(fields, slack.NewTextBlockObject(slack.MarkdownType, "*"+f.Name+"*\n"+clip(f.Value, 1900), false, false))
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, header, false, false)),
		slack.NewSectionBlock(nil, fields, nil),
	}
	var elems []slack.MixedElement
	for _, n := range commands.RootNotes(inc, markup{}) {
		elems = append(elems, slack.NewTextBlockObject(slack.MarkdownType, n, false, false))
	}
	blocks = append(blocks, slack.NewContextBlock("", elems...))
	if links := linkButtons(inc.Links); len(links) > 0 {
		blocks = append(blocks, slack.NewActionBlock("incident_links", links...))
	}
	if inc.Status != state.StatusResolved {
		blocks = append(blocks, slack.NewActionBlock("incident_actions", incidentButtons(inc)...))
	}
	return blocks
}

// incidentButtons are the buttons of an incident's root that is not resolved.
func incidentButtons(inc *state.Incident) []slack.BlockElement {
	var buttons []slack.BlockElement
	switch inc.Status {
	case state.StatusOpen:
		buttons = append(buttons, slack.NewButtonBlockElement(actionAck, inc.ID,
			slack.NewTextBlockObject(slack.PlainTextType, commands.LabelAck, false, false)).WithStyle(slack.StylePrimary))
	case state.StatusAcknowledged:
		buttons = append(buttons, slack.NewButtonBlockElement(actionUnack, inc.ID,
			slack.NewTextBlockObject(slack.PlainTextType, commands.LabelUnack, false, false)))
	}
	resolve := slack.NewButtonBlockElement(actionResolve, inc.ID, slack.NewTextBlockObject(slack.PlainTextType, commands.LabelResolve, false, false))
	title, text := commands.ResolveConfirm(inc.ID)
	resolve.Confirm = slack.NewConfirmationBlockObject(
		slack.NewTextBlockObject(slack.PlainTextType, title, false, false),
		slack.NewTextBlockObject(slack.PlainTextType, text, false, false),
		slack.NewTextBlockObject(slack.PlainTextType, commands.LabelResolve, false, false),
		slack.NewTextBlockObject(slack.PlainTextType, commands.LabelCancel, false, false))
	buttons = append(buttons, resolve)
	if inc.Pipeline != "" {
		buttons = append(buttons, slack.NewButtonBlockElement(actionDiagnose, inc.ID,
			slack.NewTextBlockObject(slack.PlainTextType, commands.LabelDiagnose, false, false)))
	}
	return append(buttons, silenceButton(inc))
}

// maxThreadText bounds a thread reply's text (Slack takes 40,000 characters, and advises
// keeping messages under 4,000).
const maxThreadText = 3900

// threadText renders an outbox delivery's thread reply; "" means none.
func threadText(d state.Delivery) string {
	return clip(threadBody(d), maxThreadText)
}

// threadBody is commands' sentence for d, or the reply d carries as data laid out for a
// thread.
func threadBody(d state.Delivery) string {
	if d.Kind == state.KindEvent {
		switch d.Name {
		case state.EventDiagnosis: // a verdict, as data
			if r, ok := commands.DiagnosisReply(d.Detail); ok {
				return replyText(r)
			}
			return mrkdwn(d.Detail)
		case "note": // a reply (the diagnosis of an earlier version), as data
			if r, ok := commands.DecodeReply(d.Detail); ok {
				return replyText(r)
			}
			return d.Detail // queued by a version that rendered notes before queueing them
		case "chart": // a chart (files.go uploads it with this text), or why there is none
			if r, ok := commands.DecodeReply(d.Detail); ok {
				return replyText(r)
			}
			return mrkdwn(d.Detail)
		}
	}
	return commands.ThreadText(d, markup{})
}

// noticeText renders a notice: a reply (the health digest), or a sentence (a probe's notice),
// made inert like every other text.
func noticeText(detail string) string {
	if r, ok := commands.DecodeReply(detail); ok {
		return replyText(r)
	}
	return or(clip(mrkdwn(detail), maxThreadText), commands.EmptyNotice)
}

// Block Kit's limits, which replyBlocks keeps to.
const (
	maxBlocks      = 50
	maxSectionText = 3000
)

// replyBlocks renders a command reply: one section for the text, one or more per section of
// the reply (a long code block is split at line ends, each part a closed block), buttons; at
// most 50 blocks, the last saying when the reply was cut.
func replyBlocks(r commands.Reply) (string, []slack.Block) {
	var blocks []slack.Block
	text := mrkdwn(r.Text)
	if text != "" {
		blocks = append(blocks, section(clip(text, maxSectionText)))
	}
	room := maxBlocks - 1 // one for saying that the reply was cut
	if len(r.Actions) > 0 {
		room-- // and one for the buttons
	}
	cut := false
	for _, s := range r.Sections {
		for _, part := range sectionTexts(s) {
			if len(blocks) >= room {
				cut = true
				break
			}
			blocks = append(blocks, section(part))
		}
	}
	if cut {
		blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.PlainTextType, commands.ReplyCut, false, false)))
	}
	if len(r.Actions) > 0 {
		var buttons []slack.BlockElement
		for _, a := range r.Actions {
			label := or(clip(plain(oneLine(a.Label)), 75), commands.LabelRun)
			btn := slack.NewButtonBlockElement(commandAction+a.ID, clip(valid(a.Command), 2000),
				slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
			if a.Danger {
				btn = btn.WithStyle(slack.StyleDanger)
			}
			if a.Confirm != "" {
				btn.Confirm = slack.NewConfirmationBlockObject(
					slack.NewTextBlockObject(slack.PlainTextType, commands.ConfirmTitle, false, false),
					slack.NewTextBlockObject(slack.PlainTextType, or(clip(plain(strings.TrimSpace(a.Confirm)), 300), commands.ConfirmText), false, false),
					slack.NewTextBlockObject(slack.PlainTextType, clip(label, 30), false, false),
					slack.NewTextBlockObject(slack.PlainTextType, commands.LabelCancel, false, false))
			}
			buttons = append(buttons, btn)
		}
		blocks = append(blocks, slack.NewActionBlock("reply_actions", buttons...))
	}
	if text == "" && len(blocks) == 0 {
		text = commands.NoAnswer
	}
	return clip(text, maxThreadText), blocks
}

// or is s, or else when s is empty.
func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

func section(text string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)
}

// sectionTexts renders one reply section as the texts of one or more section blocks, each
// within Slack's 3,000 characters: the title in bold on the first, code blocks closed on each.
func sectionTexts(s commands.Section) []string {
	title := ""
	if s.Title != "" {
		title = "*" + clip(mrkdwn(oneLine(s.Title)), 200) + "*\n"
	}
	lines := safeLines(s)
	budget := maxSectionText - runes(title)
	if s.Pre {
		budget -= runes("```\n\n```")
	}
	var out []string
	for i, chunk := range chunks(lines, budget) {
		text := strings.Join(chunk, "\n")
		if s.Pre {
			text = "```\n" + text + "\n```"
		}
		if i == 0 {
			text = title + text
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		out = append(out, text)
	}
	if len(out) == 0 && title != "" {
		out = append(out, strings.TrimSuffix(title, "\n"))
	}
	return out
}

// safeLines are a section's lines made inert for where they go: a code block or mrkdwn.
func safeLines(s commands.Section) []string {
	text := s.Text()
	lines := make([]string, len(text))
	for i, l := range text {
		if s.Pre {
			lines[i] = pre(l)
		} else {
			lines[i] = mrkdwn(l)
		}
	}
	return lines
}

// replyText renders a reply as one mrkdwn message (thread notes and notices carry no blocks),
// cut to a size Slack accepts: whole sections while they fit, a code block always closed.
func replyText(r commands.Reply) string {
	var b strings.Builder
	b.WriteString(clip(mrkdwn(r.Text), 1000))
	for _, s := range r.Sections {
		var part strings.Builder
		part.WriteString("\n")
		if s.Title != "" {
			part.WriteString("*" + clip(mrkdwn(oneLine(s.Title)), 200) + "*\n")
		}
		left := maxThreadText - runes(b.String()) - runes(part.String()) - 10
		if left < 20 {
			b.WriteString("\n…")
			break
		}
		lines := safeLines(s)
		if s.Pre {
			part.WriteString(fence(lines, left))
		} else {
			part.WriteString(clip(strings.Join(lines, "\n"), left))
		}
		b.WriteString(part.String())
	}
	return b.String()
}

// chunks splits lines into groups whose joined length stays within n runes.
func chunks(lines []string, n int) [][]string {
	var out [][]string
	var cur []string
	size := 0
	for _, l := range lines {
		l = clip(l, n)
		if size+runes(l)+1 > n && len(cur) > 0 {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, l)
		size += runes(l) + 1
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
