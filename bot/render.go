package bot

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/state"
)

// Action ids of the root message's buttons.
const (
	actionAck      = "incident_ack"
	actionResolve  = "incident_resolve"
	actionDiagnose = "incident_diagnose"
	// commandAction prefixes the buttons of command replies; their value is the command text
	// the click runs as the person who clicked.
	commandAction = "cmd_"
)

// escape makes text safe for Slack's mrkdwn: "<!channel>" or "<@U1>" in an alert's title
// become literal text, so the bot never mentions anyone.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 1
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("15:04:05")
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func severityIcon(sev int) string {
	switch sev {
	case 1:
		return "🔴"
	case 2:
		return "🟠"
	case 3:
		return "🟡"
	case 4:
		return "🔵"
	default:
		return "⚪"
	}
}

// rootText is the notification text of an incident's root message.
func rootText(inc *state.Incident) string {
	return fmt.Sprintf("%s %s: %s (%s, %s, %d occurrence%s)", severityIcon(inc.Severity), inc.ID, escape(inc.Title),
		alerts.Severity(inc.Severity), commands.StatusLine(inc), inc.Count, plural(inc.Count))
}

// rootBlocks renders an incident's root message.
func rootBlocks(inc *state.Incident) []slack.Block {
	header := clip(fmt.Sprintf("%s %s: %s", severityIcon(inc.Severity), inc.ID, inc.Title), 150)
	field := func(name, value string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, "*"+name+"*\n"+value, false, false)
	}
	pipeline := inc.Pipeline
	if pipeline == "" {
		pipeline = "-"
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, header, false, false)),
		slack.NewSectionBlock(nil, []*slack.TextBlockObject{
			field("Severity", alerts.Severity(inc.Severity).String()),
			field("Status", escape(commands.StatusLine(inc))),
			field("Pipeline", escape(pipeline)),
			field("Occurrences", fmt.Sprint(inc.Count)),
			field("First seen", stamp(inc.FirstSeen)),
			field("Last seen", stamp(inc.LastSeen)),
		}, nil),
	}
	var notes []string
	if inc.Previous != "" {
		notes = append(notes, "Reopened: previous "+inc.Previous)
	}
	if len(inc.MergedFrom) > 0 {
		notes = append(notes, "Merged in: "+strings.Join(inc.MergedFrom, ", "))
	}
	if inc.AllResolved && inc.Status != state.StatusResolved {
		notes = append(notes, "All alerts resolved")
	}
	if inc.Quiet && !inc.AllResolved && inc.Status != state.StatusResolved {
		notes = append(notes, fmt.Sprintf("Failing since %s: %d failed probe%s, the last at %s", stamp(inc.FirstSeen), inc.Count, plural(inc.Count), clock(inc.LastSeen)))
	}
	notes = append(notes, "Key: "+escape(clip(inc.Key, 200)))
	var elems []slack.MixedElement
	for _, n := range notes {
		elems = append(elems, slack.NewTextBlockObject(slack.MarkdownType, n, false, false))
	}
	blocks = append(blocks, slack.NewContextBlock("", elems...))
	if inc.Status != state.StatusResolved {
		var buttons []slack.BlockElement
		if inc.Status == state.StatusOpen {
			buttons = append(buttons, slack.NewButtonBlockElement(actionAck, inc.ID,
				slack.NewTextBlockObject(slack.PlainTextType, "Acknowledge", false, false)).WithStyle(slack.StylePrimary))
		}
		resolve := slack.NewButtonBlockElement(actionResolve, inc.ID, slack.NewTextBlockObject(slack.PlainTextType, "Resolve", false, false))
		resolve.Confirm = slack.NewConfirmationBlockObject(
			slack.NewTextBlockObject(slack.PlainTextType, "Resolve "+inc.ID+"?", false, false),
			slack.NewTextBlockObject(slack.PlainTextType, "Later alerts with its key open a new incident.", false, false),
			slack.NewTextBlockObject(slack.PlainTextType, "Resolve", false, false),
			slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false))
		buttons = append(buttons, resolve)
		if inc.Pipeline != "" {
			buttons = append(buttons, slack.NewButtonBlockElement(actionDiagnose, inc.ID,
				slack.NewTextBlockObject(slack.PlainTextType, "Diagnose again", false, false)))
		}
		blocks = append(blocks, slack.NewActionBlock("incident_actions", buttons...))
	}
	return blocks
}

// threadText renders an outbox delivery's thread reply; "" means none.
func threadText(d state.Delivery) string {
	switch d.Kind {
	case state.KindFlush:
		if d.Count == 0 {
			return ""
		}
		s := fmt.Sprintf("%d more occurrence%s since %s", d.Count, plural(d.Count), clock(d.Since))
		if d.Detail != "" {
			s += "; last: " + escape(clip(d.Detail, 300))
		}
		return s
	case state.KindEvent:
		by := ""
		if d.Actor != "" {
			by = " by " + escape(d.Actor)
		}
		switch d.Event {
		case "all_resolved":
			if d.Actor == "probe" {
				return "Recovered: " + escape(d.Detail) + "."
			}
			if !d.Since.IsZero() {
				return "All alerts of this incident are resolved. It auto-resolves at " + stamp(d.Since) + " unless one fires again."
			}
			return "All alerts of this incident are resolved. It stays open until someone resolves it."
		case "acknowledged":
			return "Acknowledged" + by + "."
		case "resolved":
			s := "Resolved" + by + "."
			if d.Detail != "" {
				s += " Note: " + escape(d.Detail)
			}
			return s
		case "merged_into":
			return "Merged into " + d.Detail + by + ": its alerts and later duplicates go to " + d.Detail + "'s thread."
		case "note": // rendered and escaped by its producer
			return d.Detail
		case "remediation", "probe":
			return escape(d.Detail)
		case "merged_from":
			return fmt.Sprintf("%s was merged into this incident%s (%d occurrence%s).", d.Detail, by, d.Count, plural(d.Count))
		}
		return escape(d.Event) + by
	}
	return ""
}

// replyBlocks renders a command reply.
func replyBlocks(r commands.Reply) (string, []slack.Block) {
	var blocks []slack.Block
	if r.Text != "" {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, clip(escape(r.Text), 2900), false, false), nil, nil))
	}
	for _, s := range r.Sections {
		if len(blocks) >= 48 {
			blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.PlainTextType, "(reply cut: too long for one message)", false, false)))
			break
		}
		for _, chunk := range chunks(s.Lines, 2800) {
			text := strings.Join(chunk, "\n")
			text = escape(text)
			if s.Pre {
				text = "```\n" + text + "\n```"
			}
			if s.Title != "" {
				text = "*" + escape(s.Title) + "*\n" + text
			}
			blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil))
			if len(blocks) >= 48 {
				break
			}
		}
	}
	if len(r.Actions) > 0 {
		var buttons []slack.BlockElement
		for _, a := range r.Actions {
			btn := slack.NewButtonBlockElement(commandAction+a.ID, clip(a.Command, 2000),
				slack.NewTextBlockObject(slack.PlainTextType, clip(a.Label, 75), false, false))
			if a.Danger {
				btn = btn.WithStyle(slack.StyleDanger)
			}
			if a.Confirm != "" {
				btn.Confirm = slack.NewConfirmationBlockObject(
					slack.NewTextBlockObject(slack.PlainTextType, "Are you sure?", false, false),
					slack.NewTextBlockObject(slack.PlainTextType, clip(a.Confirm, 300), false, false),
					slack.NewTextBlockObject(slack.PlainTextType, clip(a.Label, 30), false, false),
					slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false))
			}
			buttons = append(buttons, btn)
		}
		blocks = append(blocks, slack.NewActionBlock("reply_actions", buttons...))
	}
	return escape(r.Text), blocks
}

// ReplyText renders a reply as one mrkdwn message (for thread notes, which carry no blocks),
// cut to a size Slack accepts.
func ReplyText(r commands.Reply) string {
	var b strings.Builder
	b.WriteString(escape(r.Text))
	for _, s := range r.Sections {
		b.WriteString("\n")
		if s.Title != "" {
			b.WriteString("*" + escape(s.Title) + "*\n")
		}
		text := escape(strings.Join(s.Lines, "\n"))
		if s.Pre {
			text = "```\n" + text + "\n```"
		}
		b.WriteString(text)
	}
	return clip(b.String(), 3900)
}

// chunks splits lines into groups whose joined length stays under n bytes.
func chunks(lines []string, n int) [][]string {
	var out [][]string
	var cur []string
	size := 0
	for _, l := range lines {
		l = clip(l, n)
		if size+len(l)+1 > n && len(cur) > 0 {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, l)
		size += len(l) + 1
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func plural[T int | int64](n T) string {
	if n == 1 {
		return ""
	}
	return "s"
}
