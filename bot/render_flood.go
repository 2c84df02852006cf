package bot

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// A flood incident's root says what the storm is made of: how many distinct alerts from how
// many sources since when, and the label values most of them share (which usually name the
// cause: one broker, one node, one rule).

// floodSummary is "1980 distinct alerts from 2 sources since 10:41:05Z".
func floodSummary(inc *state.Incident) string {
	f := inc.Flood
	about := ""
	if f.Unlisted > 0 {
		about = "about "
	}
	sources := fmt.Sprint(f.SourceCount)
	if f.SourcesCapped {
		sources = "more than " + sources
	}
	return fmt.Sprintf("%s%d distinct alert%s from %s source%s since %s", about, f.Distinct, human.Plural(f.Distinct),
		sources, human.Plural(f.SourceCount), human.Stamp(inc.FirstSeen))
}

// floodRootText is the notification text of a flood incident's root message.
func floodRootText(inc *state.Incident) string {
	over := ""
	if !inc.Flood.Ended.IsZero() {
		over = " (over)"
	}
	return fmt.Sprintf("%s %s: Alert flood in <#%s>%s: %s (%s, %s, %d occurrence%s)", severityIcon(inc.Severity), inc.ID,
		inc.Channel, over, floodSummary(inc), alerts.Severity(inc.Severity), clip(mrkdwn(oneLine(commands.StatusLine(inc))), 200),
		inc.Count, human.Plural(inc.Count))
}

// floodRootBlocks renders a flood incident's root message.
func floodRootBlocks(inc *state.Incident) []slack.Block {
	f := inc.Flood
	md := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
	}
	field := func(name, value string) *slack.TextBlockObject { return md("*" + name + "*\n" + value) }
	status := fmt.Sprintf("New alerts in this channel join this incident instead of opening their own: more than %d "+
		"new ones arrived within a minute. The flood ends once no more than %d a minute arrive for %s.", f.Limit, f.Limit, f.QuietFor)
	if !f.Ended.IsZero() {
		status = "The flood ended at " + human.Stamp(f.Ended) + ": new alerts in this channel open their own incidents again."
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, clip(plain(severityIcon(inc.Severity)+" "+inc.ID+": Alert flood"), 150), false, false)),
		slack.NewSectionBlock(md(fmt.Sprintf("*Alert flood in <#%s>: %s.*\n%s", inc.Channel, floodSummary(inc), status)), nil, nil),
		slack.NewSectionBlock(nil, []*slack.TextBlockObject{
			field("Severity", alerts.Severity(inc.Severity).String()),
			field("Status", mrkdwn(oneLine(commands.StatusLine(inc)))),
			field("Occurrences", fmt.Sprint(inc.Count)),
			field("Distinct alerts", fmt.Sprint(f.Distinct)),
			field("First seen", human.Stamp(inc.FirstSeen)),
			field("Last seen", human.Stamp(inc.LastSeen)),
		}, nil),
	}
	if len(f.Labels) > 0 || len(f.Sources) > 0 || len(f.BySeverity) > 0 {
		var lines []string
		if len(f.BySeverity) > 0 {
			lines = append(lines, "*By severity:* "+bySeverity(f.BySeverity))
		}
		if len(f.Labels) > 0 {
			est := ""
			if f.RankingEstimated {
				est = " (estimated: counted 1 in 10 after the first 1,000)"
			}
			lines = append(lines, "*Most common label values"+est+":* "+counted(f.Labels))
		}
		if len(f.Sources) > 0 {
			lines = append(lines, "*Sources:* "+counted(f.Sources))
		}
		blocks = append(blocks, slack.NewSectionBlock(md(clip(strings.Join(lines, "\n"), 2900)), nil, nil))
	}
	notes := []slack.MixedElement{md("`incident show " + inc.ID + "` lists the alerts by key, with their counts")}
	if inc.Previous != "" {
		notes = append(notes, md("Previous flood: "+inc.Previous))
	}
	for _, n := range lifecycleNotes(inc) {
		notes = append(notes, md(n))
	}
	blocks = append(blocks, slack.NewContextBlock("", notes...))
	if inc.Status != state.StatusResolved {
		blocks = append(blocks, slack.NewActionBlock("incident_actions", incidentButtons(inc)...))
	}
	return blocks
}

// bySeverity renders "SEV2 high 12 · SEV4 low 488": the flood's distinct alerts, most severe first.
func bySeverity(cs []state.SeverityCount) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d", alerts.Severity(c.Severity), c.Count)
	}
	return strings.Join(parts, " · ")
}

// counted renders values with their counts: "`broker=b1` 812 · `rule=lag` 790".
func counted(vs []state.KeyCount) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%s %d", codeSpan(v.Value, 80), v.Count)
	}
	return strings.Join(parts, " · ")
}

// codeSpan shows a label value or key, which the alert's sender chose, as inert `code`, cut
// to n bytes: a backtick inside would end the span, so it becomes a quote.
func codeSpan(s string, n int) string {
	return "`" + clip(mrkdwn(oneLine(strings.ReplaceAll(s, "`", "'"))), n) + "`"
}

// floodThreadText renders a flood's coalesced update: how many alerts joined, how many of them
// new, and the newest keys.
func floodThreadText(d state.Delivery) string {
	if d.Count == 0 {
		return ""
	}
	s := fmt.Sprintf("%d more alert%s since %s, %d with a new key", d.Count, human.Plural(d.Count), clock(d.Since), d.Distinct)
	if len(d.Keys) > 0 {
		var keys []string
		for _, k := range d.Keys {
			keys = append(keys, codeSpan(k, 100))
		}
		s += "; newest: " + strings.Join(keys, ", ")
	}
	return s
}

// floodOverText is the thread reply when a flood ends.
func floodOverText(d state.Delivery) string {
	since := ""
	if !d.Since.IsZero() {
		since = " (since " + clock(d.Since) + ")"
	}
	return "The flood is over: " + mrkdwn(oneLine(commands.EventDetail(d.Event))) + since + ". New alerts in this channel open their own " +
		"incidents again; this incident stays open until someone resolves it."
}
