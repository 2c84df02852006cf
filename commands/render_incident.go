package commands

import (
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// What an incident's root message says: its notification text, its header, its fields and
// its notes. The renderer lays them out (bot/render.go) and makes their parts inert (Markup).

// Field is one named value of an incident's root.
type Field struct{ Name, Value string }

// SeverityIcon is the colour of a severity: 🔴 for SEV1 to 🔵 for SEV4, ⚪ for none.
func SeverityIcon(sev int) string {
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

// RootText is the notification text of an incident's root message.
func RootText(inc *state.Incident, m Markup) string {
	if inc.Flood != nil {
		over := ""
		if !inc.Flood.Ended.IsZero() {
			over = " (over)"
		}
		return fmt.Sprintf("%s %s: Alert flood in %s%s: %s (%s, %s, %d occurrence%s)", SeverityIcon(inc.Severity), inc.ID,
			m.Channel(inc.Channel), over, floodSummary(inc), alerts.Severity(inc.Severity), m.Line(StatusLine(inc), 200),
			inc.Count, human.Plural(inc.Count))
	}
	return fmt.Sprintf("%s %s: %s (%s, %s%s, %d occurrence%s)", SeverityIcon(inc.Severity), inc.ID, m.Line(Title(inc), 500),
		alerts.Severity(inc.Severity), m.Line(StatusLine(inc), 200), lifecycleFlags(inc), inc.Count, human.Plural(inc.Count))
}

// RootHeader is the header of an incident's root, as sent: the renderer makes it plain text.
func RootHeader(inc *state.Incident) string {
	if inc.Flood != nil {
		return SeverityIcon(inc.Severity) + " " + inc.ID + ": Alert flood"
	}
	return fmt.Sprintf("%s %s: %s", SeverityIcon(inc.Severity), inc.ID, Title(inc))
}

// RootFields are the named values of an incident's root; description is its pipeline's
// (pipelines[].description), "" for none.
func RootFields(inc *state.Incident, description string, m Markup) []Field {
	if f := inc.Flood; f != nil {
		return []Field{
			{"Severity", alerts.Severity(inc.Severity).String()},
			{"Status", m.Line(StatusLine(inc), 0)},
			{"Occurrences", fmt.Sprint(inc.Count)},
			{"Distinct alerts", fmt.Sprint(f.Distinct)},
			{"First seen", human.Stamp(inc.FirstSeen)},
			{"Last seen", human.Stamp(inc.LastSeen)},
		}
	}
	pipeline := inc.Pipeline
	if pipeline == "" {
		pipeline = "-"
	} else if description != "" {
		pipeline += " (" + description + ")"
	}
	fields := []Field{
		{"Severity", alerts.Severity(inc.Severity).String()},
		{"Status", m.Line(StatusLine(inc), 0)},
		{"Pipeline", m.Line(pipeline, 0)},
		{"Occurrences", fmt.Sprint(inc.Count)},
		{"First seen", human.Stamp(inc.FirstSeen)},
		{"Last seen", human.Stamp(inc.LastSeen)},
	}
	if inc.Owner != "" {
		fields = append(fields, Field{"Owner", ownerRef(inc.Owner, inc.OwnerName, m)})
	}
	return fields
}

// RootNotes are the notes under an incident's root: what detection measures, where it came
// from, what it absorbed, silence, escalation, severity, and its key.
func RootNotes(inc *state.Incident, m Markup) []string {
	if inc.Flood != nil {
		notes := []string{"`incident show " + inc.ID + "` lists the alerts by key, with their counts"}
		if inc.Previous != "" {
			notes = append(notes, "Previous flood: "+inc.Previous)
		}
		return append(notes, lifecycleNotes(inc, m)...)
	}
	var notes []string
	if inc.Detect != "" && inc.Status != state.StatusResolved {
		// Detection's symptom with its numbers, edited every sampling round.
		label := "Detected"
		if inc.DetectState == "recovered" {
			label = "Recovered"
		}
		notes = append(notes, label+": "+m.Line(inc.Detect, 1500))
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
		notes = append(notes, fmt.Sprintf("First failure %s: %d failed probe%s in this incident, the last at %s", human.Stamp(inc.FirstSeen), inc.Count, human.Plural(inc.Count), timeOfDay(inc.LastSeen)))
	}
	notes = append(notes, lifecycleNotes(inc, m)...)
	return append(notes, "Key: "+m.Line(inc.Key, 300))
}

// lifecycleNotes are the root's notes about silence, escalation and severity.
func lifecycleNotes(inc *state.Incident, m Markup) []string {
	var notes []string
	if inc.Listed > 1 && inc.Flood == nil {
		notes = append(notes, fmt.Sprintf("%d alerts, %d firing", inc.Listed, inc.Firing))
	}
	if s := inc.Silence; s != nil && inc.Status != state.StatusResolved {
		n := fmt.Sprintf("🔕 Silenced until %s by %s (%s)", human.Stamp(s.Until), m.Line(s.By, 100), m.Line(s.ID, 40))
		if s.Reason != "" {
			n += ": " + m.Line(s.Reason, 300)
		}
		notes = append(notes, n)
	}
	if !inc.EscalatedAt.IsZero() {
		notes = append(notes, "📣 Escalated at "+human.Stamp(inc.EscalatedAt)+": nobody had acknowledged it")
	}
	if inc.SeverityBy != "" {
		notes = append(notes, "Severity set by "+m.Line(inc.SeverityBy, 100))
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

// FloodSummary is a flood root's first section: what the flood is, and whether it still holds.
func FloodSummary(inc *state.Incident, m Markup) string {
	f := inc.Flood
	status := fmt.Sprintf("New alerts in this channel join this incident instead of opening their own: more than %d "+
		"new ones arrived within a minute. The flood ends once no more than %d a minute arrive for %s.", f.Limit, f.Limit, f.QuietFor)
	if !f.Ended.IsZero() {
		status = "The flood ended at " + human.Stamp(f.Ended) + ": new alerts in this channel open their own incidents again."
	}
	return fmt.Sprintf("*Alert flood in %s: %s.*\n%s", m.Channel(inc.Channel), floodSummary(inc), status)
}

// FloodBreakdown are the lines of what a flood is made of: its distinct alerts by severity,
// the label values most of them share, its sources; none when it has no such counts.
func FloodBreakdown(inc *state.Incident, m Markup) []string {
	f := inc.Flood
	var lines []string
	if len(f.BySeverity) > 0 {
		lines = append(lines, "*By severity:* "+bySeverity(f.BySeverity))
	}
	if len(f.Labels) > 0 {
		est := ""
		if f.RankingEstimated {
			est = " (estimated: counted 1 in 10 after the first 1,000)"
		}
		lines = append(lines, "*Most common label values"+est+":* "+counted(f.Labels, m))
	}
	if len(f.Sources) > 0 {
		lines = append(lines, "*Sources:* "+counted(f.Sources, m))
	}
	return lines
}

// bySeverity is "SEV2 high 12 · SEV4 low 488": the flood's distinct alerts, most severe first.
func bySeverity(cs []state.SeverityCount) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d", alerts.Severity(c.Severity), c.Count)
	}
	return strings.Join(parts, " · ")
}

// counted is values with their counts: "`broker=b1` 812 · `rule=lag` 790".
func counted(vs []state.KeyCount, m Markup) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%s %d", m.Code(v.Value, 80), v.Count)
	}
	return strings.Join(parts, " · ")
}
