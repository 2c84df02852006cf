package bot

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
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

// clock is a time of day as people read it (slack.time_zone): "10:41:05" in UTC, "11:41:05
// CET" elsewhere.
func clock(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	if human.Zone() == time.UTC {
		return t.UTC().Format("15:04:05")
	}
	return t.In(human.Zone()).Format("15:04:05 MST")
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
	if inc.Flood != nil {
		return floodRootText(inc)
	}
	return fmt.Sprintf("%s %s: %s (%s, %s%s, %d occurrence%s)", severityIcon(inc.Severity), inc.ID, clip(mrkdwn(oneLine(commands.Title(inc))), 500),
		alerts.Severity(inc.Severity), clip(mrkdwn(oneLine(commands.StatusLine(inc))), 200), lifecycleFlags(inc), inc.Count, human.Plural(inc.Count))
}

// rootBlocks renders an incident's root message; description is its pipeline's
// (pipelines[].description), "" for none.
func rootBlocks(inc *state.Incident, description string) []slack.Block {
	if inc.Flood != nil {
		return floodRootBlocks(inc)
	}
	header := clip(plain(oneLine(fmt.Sprintf("%s %s: %s", severityIcon(inc.Severity), inc.ID, commands.Title(inc)))), 150)
	field := func(name, value string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, "*"+name+"*\n"+clip(value, 1900), false, false)
	}
	pipeline := inc.Pipeline
	if pipeline == "" {
		pipeline = "-"
	} else if description != "" {
		pipeline += " (" + description + ")"
	}
	fields := []*slack.TextBlockObject{
		field("Severity", alerts.Severity(inc.Severity).String()),
		field("Status", mrkdwn(oneLine(commands.StatusLine(inc)))),
		field("Pipeline", mrkdwn(oneLine(pipeline))),
		field("Occurrences", fmt.Sprint(inc.Count)),
		field("First seen", human.Stamp(inc.FirstSeen)),
		field("Last seen", human.Stamp(inc.LastSeen)),
	}
	if o := owner(inc); o != "" {
		fields = append(fields, field("Owner", o))
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, header, false, false)),
		slack.NewSectionBlock(nil, fields, nil),
	}
	var notes []string
	if inc.Detect != "" && inc.Status != state.StatusResolved {
		// Detection's symptom with its numbers, edited every sampling round.
		label := "Detected"
		if inc.DetectState == "recovered" {
			label = "Recovered"
		}
		notes = append(notes, label+": "+clip(mrkdwn(oneLine(inc.Detect)), 1500))
	}
	if inc.Previous != "" {
		notes = append(notes, "Reopened: previous "+inc.Previous)
	}
	if len(inc.MergedFrom) > 0 {
		notes = append(notes, "Merged in: "+strings.Join(inc.MergedFrom, ", "))
	}
	if inc.AllResolved && inc.Status != state.StatusResolved {
		notes = append(notes, "All alerts resolved")
	}
	if inc.Quiet && inc.Source == state.SourceProbe && !inc.AllResolved && inc.Status != state.StatusResolved {
		// Facts of the incident, not a clock: a probe that recovered and failed again within
		// it has not been failing since its first failure (the thread says since when it fails
		// again).
		notes = append(notes, fmt.Sprintf("First failure %s: %d failed probe%s in this incident, the last at %s", human.Stamp(inc.FirstSeen), inc.Count, human.Plural(inc.Count), clock(inc.LastSeen)))
	}
	notes = append(notes, lifecycleNotes(inc)...)
	notes = append(notes, "Key: "+clip(mrkdwn(oneLine(inc.Key)), 300))
	var elems []slack.MixedElement
	for _, n := range notes {
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
			slack.NewTextBlockObject(slack.PlainTextType, "Acknowledge", false, false)).WithStyle(slack.StylePrimary))
	case state.StatusAcknowledged:
		buttons = append(buttons, slack.NewButtonBlockElement(actionUnack, inc.ID,
			slack.NewTextBlockObject(slack.PlainTextType, "Unacknowledge", false, false)))
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
	return append(buttons, silenceButton(inc))
}

// maxThreadText bounds a thread reply's text (Slack takes 40,000 characters, and advises
// keeping messages under 4,000).
const maxThreadText = 3900

// threadText renders an outbox delivery's thread reply; "" means none.
func threadText(d state.Delivery) string {
	return clip(threadBody(d), maxThreadText)
}

func threadBody(d state.Delivery) string {
	switch d.Kind {
	case state.KindFlush:
		switch d.Name {
		case state.EventFlood:
			return floodThreadText(d)
		case state.EventNews:
			return newsText(d)
		}
		// Identical re-sends: the root's count and last seen change, the thread hears nothing.
		return ""
	case state.KindEvent:
		if text, ok := lifecycleText(d); ok {
			return text
		}
		by := ""
		if d.Actor != "" {
			by = " by " + clip(mrkdwn(oneLine(d.Actor)), 100)
		}
		switch d.Name {
		case state.EventAllResolved:
			if d.Actor == "probe" {
				return "Recovered: " + mrkdwn(d.Detail) + "."
			}
			if !d.Since.IsZero() {
				return "All alerts of this incident are resolved. It auto-resolves at " + human.Stamp(d.Since) + " unless one fires again."
			}
			return "All alerts of this incident are resolved. It stays open until someone resolves it."
		case "acknowledged":
			return "Acknowledged" + by + "."
		case "resolved":
			s := "Resolved" + by + "."
			if note := commands.EventDetail(d.Event); note != "" {
				s += " Note: " + clip(mrkdwn(note), 2000)
			}
			return s
		case state.EventUnacknowledged:
			return "Unacknowledged" + by + ": escalation resumes at its next level."
		case state.EventReopened:
			return fmt.Sprintf("Reopened%s: the incident is open again, and %d of its keys thread here again.", by, d.Count)
		case state.EventUnmerged:
			return "Unmerged from " + mrkdwn(oneLine(d.Other)) + by + ": this incident is open again with its keys, alerts and count."
		case state.EventUnmergedFrom:
			return fmt.Sprintf("%s was unmerged%s: its keys, alerts and %d occurrence%s went back to it.", mrkdwn(oneLine(d.Other)), by, d.Count, human.Plural(d.Count))
		case state.EventAckExpired:
			return fmt.Sprintf("⏰ Acknowledged, but nobody has touched it for %s: it is unacknowledged again, and escalates.", d.After)
		case "merged_into":
			return "Merged into " + mrkdwn(oneLine(d.Other)) + by + ": its alerts and later duplicates go to " + mrkdwn(oneLine(d.Other)) + "'s thread."
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
		case "remediation", "probe":
			return mrkdwn(d.Detail)
		case "detected", "recovered": // detection's news, and its recovery note
			return clip(mrkdwn(commands.EventDetail(d.Event)), 3000)
		case "correlated":
			return "Joined this incident: " + clip(mrkdwn(oneLine(commands.EventDetail(d.Event))), 1000) + "."
		case "merged_from":
			return fmt.Sprintf("%s was merged into this incident%s (%d occurrence%s).", mrkdwn(oneLine(d.Other)), by, d.Count, human.Plural(d.Count))
		case "flood_over":
			return floodOverText(d)
		}
		return mrkdwn(oneLine(d.Name)) + by
	}
	return ""
}

// noticeText renders a notice: a reply (the health digest), or a sentence (a probe's notice),
// made inert like every other text.
func noticeText(detail string) string {
	if r, ok := commands.DecodeReply(detail); ok {
		return replyText(r)
	}
	return or(clip(mrkdwn(detail), maxThreadText), "(empty notice)")
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
		blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.PlainTextType, "(reply cut: too long for one message)", false, false)))
	}
	if len(r.Actions) > 0 {
		var buttons []slack.BlockElement
		for _, a := range r.Actions {
			label := or(clip(plain(oneLine(a.Label)), 75), "Run")
			btn := slack.NewButtonBlockElement(commandAction+a.ID, clip(valid(a.Command), 2000),
				slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
			if a.Danger {
				btn = btn.WithStyle(slack.StyleDanger)
			}
			if a.Confirm != "" {
				btn.Confirm = slack.NewConfirmationBlockObject(
					slack.NewTextBlockObject(slack.PlainTextType, "Are you sure?", false, false),
					slack.NewTextBlockObject(slack.PlainTextType, or(clip(plain(strings.TrimSpace(a.Confirm)), 300), "Go ahead?"), false, false),
					slack.NewTextBlockObject(slack.PlainTextType, clip(label, 30), false, false),
					slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false))
			}
			buttons = append(buttons, btn)
		}
		blocks = append(blocks, slack.NewActionBlock("reply_actions", buttons...))
	}
	if text == "" && len(blocks) == 0 {
		text = "(no answer)"
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
