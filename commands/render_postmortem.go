package commands

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// postmortemDocument is the draft PostmortemDraft writes, with the progress chart's section
// (postmortemChartEmbed, postmortemNoChart; "" for none) before its timeline.
func postmortemDocument(inc *state.Incident, tl []state.Event, dropped int64, contexts map[string]state.AlertContext,
	audit []state.AuditEntry, now time.Time, progress string) string {
	return withSection(PostmortemDraft(inc, tl, dropped, contexts, audit, now), "Progress", progress, "Timeline")
}

// postmortemChartEmbed is the draft's Progress section for chart c: the image, referred to by
// its file name (the chart is shared beside the draft), with its alt text.
func postmortemChartEmbed(c *Chart) string {
	return fmt.Sprintf("![%s](%s)\n\n%s (the chart is posted beside this draft as `%s`)", md(c.Alt), c.Name, md(c.Alt), mdCode(c.Name))
}

// postmortemNoChart is the draft's Progress section when the chart failed.
func postmortemNoChart(err error) string {
	return md("No chart: " + err.Error())
}

// postmortemChartComment introduces the progress chart in the incident's thread.
func postmortemChartComment(pipeline, id, file string) string {
	return fmt.Sprintf("Progress of %s for the postmortem draft of %s: %s", pipeline, id, file)
}

// postmortemAuditDetail is the audit entry's detail of a drafted postmortem.
func postmortemAuditDetail(file string, events int) string {
	return fmt.Sprintf("%s: %d timeline events", file, events)
}

// postmortemPosted is the reply to `incident postmortem`.
func postmortemPosted(id, file string, events int) string {
	return fmt.Sprintf("Postmortem draft of %s posted in its thread: %s, with all %d timeline events.", id, file, events)
}

// postmortemTitle is the shared file's title.
func postmortemTitle(inc *state.Incident) string {
	return "Postmortem draft: " + inc.ID + " — " + oneLine(Title(inc))
}

// postmortemComment introduces the draft in the incident's thread.
func postmortemComment(id, actor string) string {
	return fmt.Sprintf("Postmortem draft of %s, drafted by %s.", id, actor)
}

// withSection puts a "## title" section with body before the section before names; an empty
// body adds nothing.
func withSection(draft, title, body, before string) string {
	if body == "" {
		return draft
	}
	at := strings.Index(draft, "\n## "+before+"\n")
	if at < 0 {
		return draft + "\n## " + title + "\n\n" + body + "\n"
	}
	return draft[:at+1] + "## " + title + "\n\n" + body + "\n\n" + draft[at+1:]
}

// PostmortemDraft writes the Markdown draft of an incident: summary, impact window, response
// times, every timeline event, the alerts with their labels and annotations, diagnoses, what
// people did (the timeline and the audit trail), and the open follow-ups. Everything alerts or
// people wrote is escaped, so that it cannot make headings, links or tables of its own.
func PostmortemDraft(inc *state.Incident, tl []state.Event, dropped int64, contexts map[string]state.AlertContext,
	audit []state.AuditEntry, now time.Time) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("# Postmortem draft: %s — %s", inc.ID, md(Title(inc)))
	line("")
	line("_Drafted by streamwatch at %s from the incident's record. Edit it: the root cause and the lessons are yours to write._", human.Stamp(now))
	line("")

	line("## Summary")
	line("")
	sev := alerts.Severity(inc.Severity).String()
	if inc.SeverityBy != "" {
		sev += " (set by " + md(inc.SeverityBy) + ")"
	}
	line("- **Incident:** %s, %s, pipeline %s, channel %s", inc.ID, sev, md(dash(inc.Pipeline)), md(dash(inc.Channel)))
	line("- **Status:** %s", md(StatusLine(inc)))
	if inc.Note != "" {
		line("- **Resolution note:** %s", md(inc.Note))
	}
	if inc.Owner != "" {
		line("- **Owner:** %s", md(ownerName(inc)))
	}
	line("- **Alerts:** %d (%d still firing), %d occurrences", inc.Listed, inc.Firing, inc.Count)
	line("- **Key:** %s", md(inc.Key))
	if inc.Previous != "" {
		line("- **Reopened:** previous incident %s", md(inc.Previous))
	}
	if len(inc.MergedFrom) > 0 {
		line("- **Merged in:** %s", md(strings.Join(inc.MergedFrom, ", ")))
	}
	if links := webLinks(inc.Links); len(links) > 0 {
		var ls []string
		for _, k := range sortedKeys(links) {
			ls = append(ls, k+" <"+mdURL(links[k])+">")
		}
		line("- **Links:** %s", strings.Join(ls, ", "))
	}
	line("")

	line("## Impact window")
	line("")
	start := inc.FirstSeen
	line("- **Started:** %s (the first alert)", human.Stamp(start))
	var ended time.Time
	how := ""
	if inc.AllResolved {
		for _, e := range tl {
			if e.Name == state.EventAllResolved {
				ended = e.At
			}
		}
		how = "every alert resolved"
	}
	if ended.IsZero() && inc.Status == state.StatusResolved {
		ended, how = inc.ResolvedAt, "the incident was resolved"
	}
	if ended.IsZero() {
		line("- **Ended:** not yet; the last alert arrived at %s", human.Stamp(inc.LastSeen))
		line("- **Duration so far:** %s", dur(now.Sub(start)))
	} else {
		line("- **Ended:** %s (%s)", human.Stamp(ended), how)
		line("- **Duration:** %s", dur(ended.Sub(start)))
	}
	line("")

	line("## Response")
	line("")
	if inc.FaultAt.IsZero() {
		line("- **Time to detect:** not known (the alert does not say when its fault began)")
	} else {
		line("- **Time to detect:** %s (the fault visible at %s, the incident at %s)", dur(inc.FirstSeen.Sub(inc.FaultAt)), human.Stamp(inc.FaultAt), human.Stamp(inc.FirstSeen))
	}
	if inc.AckAt.IsZero() {
		line("- **Time to acknowledge:** not acknowledged")
	} else {
		line("- **Time to acknowledge:** %s (%s at %s)", dur(inc.AckAt.Sub(start)), md(inc.AckBy), human.Stamp(inc.AckAt))
	}
	if inc.Status == state.StatusResolved {
		line("- **Time to resolve:** %s (%s at %s)", dur(inc.ResolvedAt.Sub(start)), md(inc.ResolvedBy), human.Stamp(inc.ResolvedAt))
	} else {
		line("- **Time to resolve:** not resolved (%s so far)", dur(now.Sub(start)))
	}
	if !inc.EscalatedAt.IsZero() {
		line("- **Escalated:** %s, to %s, after %s without acknowledgement", human.Stamp(inc.EscalatedAt), md(strings.Join(inc.EscalatedTo, ", ")),
			dur(inc.EscalatedAt.Sub(start)))
	}
	line("")

	line("## Timeline")
	line("")
	if dropped > 0 {
		line("All %d events the incident kept (UTC); it keeps the newest %d, and %d older ones were dropped.", len(tl), state.MaxTimelineEvents, dropped)
	} else {
		line("All %d events (UTC).", len(tl))
	}
	line("")
	line("| time | event | by | detail |")
	line("|---|---|---|---|")
	for _, e := range tl {
		line("| %s | %s | %s | %s |", human.Stamp(e.At), md(e.Name), md(e.Actor), md(clipRunes(plainText(EventDetail(e)), 500)))
	}
	line("")

	line("## Alerts")
	line("")
	for _, fp := range sortedKeys(inc.Alerts) {
		a := inc.Alerts[fp]
		c := contexts[fp]
		line("- `%s` %s, last seen %s%s", mdCode(fp), a.Status, human.Stamp(a.LastSeen), prefixed(": ", md(c.Title)))
		for _, part := range []struct {
			name string
			m    map[string]string
		}{{"labels", c.Labels}, {"annotations", c.Annotations}} {
			if len(part.m) > 0 {
				var kv []string
				for _, k := range sortedKeys(part.m) {
					kv = append(kv, md(k)+"="+md(part.m[k]))
				}
				line("  - %s: %s", part.name, strings.Join(kv, ", "))
			}
		}
		if l := webLinks(c.Links); len(l) > 0 {
			var ls []string
			for _, k := range sortedKeys(l) {
				ls = append(ls, k+" <"+mdURL(l[k])+">")
			}
			line("  - links: %s", strings.Join(ls, ", "))
		}
	}
	if inc.UnlistedAlerts > 0 {
		line("- … and %d occurrences of alerts beyond the incident's list of %d", inc.UnlistedAlerts, state.MaxListedAlerts)
	}
	line("")

	line("## Diagnoses")
	line("")
	var diagnoses []state.Event
	for _, e := range tl {
		if (e.Name == state.EventDiagnosis || e.Name == state.EventNote || e.Name == state.EventProbe) && e.Actor != "" {
			diagnoses = append(diagnoses, e)
		}
	}
	if len(diagnoses) == 0 {
		line("None recorded.")
	}
	for _, e := range diagnoses {
		first, _, _ := strings.Cut(plainText(EventDetail(e)), "\n")
		line("- %s %s: %s", human.Stamp(e.At), md(e.Actor), md(clipRunes(first, 500)))
	}
	line("")

	line("## Human actions and remediations")
	line("")
	type act struct {
		at   time.Time
		text string
	}
	var acts []act
	for _, e := range tl {
		if humanEvents[e.Name] && e.Actor != "streamwatch" {
			acts = append(acts, act{e.At, fmt.Sprintf("- %s %s: %s%s", human.Stamp(e.At), md(e.Actor), md(e.Name),
				prefixed(" — ", md(clipRunes(plainText(EventDetail(e)), 300))))})
		}
	}
	for _, e := range audit {
		// What people did to the incident is in its timeline already, with their names; the
		// audit adds the pipeline's remediations and what was refused or failed.
		if e.Incident == inc.ID && e.Outcome == "done" {
			continue
		}
		via := e.Via
		if e.Channel != "" {
			via += " in " + e.Channel
		}
		acts = append(acts, act{e.At, fmt.Sprintf("- %s %s: %s %s, %s%s%s", human.Stamp(e.At), md(e.Actor), md(e.Action), md(e.Target), md(e.Outcome),
			prefixed(" (", md(strings.TrimSpace(via)), ")"), prefixed(" — ", md(clipRunes(e.Detail, 300))))})
	}
	sort.SliceStable(acts, func(i, j int) bool { return acts[i].at.Before(acts[j].at) })
	if len(acts) == 0 {
		line("None recorded.")
	}
	for _, a := range acts {
		line("%s", a.text)
	}
	line("")

	line("## Follow-ups")
	line("")
	for _, f := range followUps(inc, diagnoses, tl, now) {
		line("- [ ] %s", f)
	}
	return b.String()
}

// humanEvents are timeline events people cause (and remediations, which people start).
var humanEvents = map[string]bool{"acknowledged": true, "resolved": true, "merged_into": true, "merged_from": true,
	"silenced": true, "silence_ended": true, "severity": true, "assigned": true, "unassigned": true, "remediation": true}

// followUps are the draft's open items, from what the record shows.
func followUps(inc *state.Incident, diagnoses, tl []state.Event, now time.Time) []string {
	var out []string
	if inc.Status != state.StatusResolved {
		out = append(out, fmt.Sprintf("Resolve %s once the pipeline is healthy again (it is %s).", inc.ID, md(StatusLine(inc))))
	}
	if s := inc.Silence; s != nil && s.Until.After(now) {
		out = append(out, fmt.Sprintf("%s is silenced until %s (%s): make sure the cause is fixed before the silence ends.", inc.ID, human.Stamp(s.Until), md(s.ID)))
	}
	if inc.AckAt.IsZero() {
		out = append(out, "Nobody acknowledged the incident: check that its alerts reach on-call (slack.escalation).")
	} else if !inc.EscalatedAt.IsZero() {
		out = append(out, fmt.Sprintf("It waited %s for an acknowledgement and was escalated: review the on-call rotation.", dur(inc.AckAt.Sub(inc.FirstSeen))))
	}
	if len(diagnoses) > 0 {
		first, _, _ := strings.Cut(plainText(EventDetail(diagnoses[len(diagnoses)-1])), "\n")
		if strings.Contains(first, "probable cause") {
			out = append(out, "Confirm the probable causes of the last diagnosis and fix what remains: "+md(clipRunes(first, 300)))
		}
	}
	if slices.ContainsFunc(tl, func(e state.Event) bool { return e.Name == state.EventRemediation }) {
		out = append(out, "Check that the remediations held (the pipeline's backups and its `watch` report).")
	}
	if inc.Previous != "" {
		out = append(out, fmt.Sprintf("The key of %s opened %s before: find out why the earlier fix did not hold.", inc.ID, md(inc.Previous)))
	}
	if u := webLinks(inc.Links)["runbook"]; u != "" {
		out = append(out, "Update the runbook <"+mdURL(u)+"> with what this incident taught.")
	} else {
		out = append(out, "Write a runbook and give the alert rule a runbook_url annotation: no alert of this incident carried one.")
	}
	return append(out, "Write the root cause and the lessons into the summary.")
}

// mdReplacer backslash-escapes the characters that make Markdown structure.
var mdReplacer = strings.NewReplacer("\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]",
	"<", "&lt;", ">", "&gt;", "#", "\\#", "|", "\\|", "~", "\\~", "!", "\\!", "&", "&amp;")

// md makes text from alerts or people one inert line of Markdown.
func md(s string) string {
	return mdReplacer.Replace(oneLine(s))
}

// mdCode is s for an inline code span: no backtick can end it, and no angle bracket shows
// where a renderer might not keep the span.
func mdCode(s string) string {
	return strings.NewReplacer("`", "'", "<", "‹", ">", "›").Replace(oneLine(s))
}

// mdURL is an http(s) URL for an autolink: no spaces, no angle brackets.
func mdURL(u string) string {
	return strings.NewReplacer("<", "%3C", ">", "%3E", " ", "%20").Replace(oneLine(u))
}

// oneLine makes s valid UTF-8 on one line without control characters.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// plainText undoes what the bot did to a note for Slack's mrkdwn (zero-width spaces, escaped
// <, > and &), keeping its lines.
func plainText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\u200b", "", "```", "").Replace(s)
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}

func prefixed(prefix, s string, suffix ...string) string {
	if s == "" {
		return ""
	}
	return prefix + s + strings.Join(suffix, "")
}

// dur is a duration for people, to the second.
func dur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}
