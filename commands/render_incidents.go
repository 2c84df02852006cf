package commands

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// The words of the `incident …` commands' replies (incident.go): the list, an incident shown,
// what a change did, and their usage errors and hints. An incident's root and thread are
// render_incident.go's and render_thread.go's.

// The incident commands' paths: each is registered under it and looks its usage up by it.
const (
	incidentListPath    = "incident list"
	incidentShowPath    = "incident show"
	incidentAckPath     = "incident ack"
	incidentUnackPath   = "incident unack"
	incidentReopenPath  = "incident reopen"
	incidentUnmergePath = "incident unmerge"
	incidentResolvePath = "incident resolve"
	incidentMergePath   = "incident merge"

	incidentDiagnosePath   = "incident diagnose"
	incidentPostmortemPath = "incident postmortem"
)

// incidentSeeOthers is the audit action of a refused look at another channel's incident.
const incidentSeeOthers = "see incidents of other channels"

// incidentsAction is what a person tries when they change incidents (verb: "resolve",
// "merge", "reopen", "unmerge"), for a refusal and its audit entry.
func incidentsAction(verb string) string { return verb + " incidents" }

// whichIncident says why a command needs an incident ID: the channel has none open, or
// several (naming the page's).
func whichIncident(page *state.Page) string {
	if page.Open <= 1 {
		return "which incident? This channel has no open incident"
	}
	ids := make([]string, len(page.Incidents))
	for i, inc := range page.Incidents {
		ids[i] = inc.ID
	}
	more := ""
	if page.More {
		more = fmt.Sprintf(" and %d more", page.Open-int64(len(ids)))
	}
	return fmt.Sprintf("which incident? This channel has %d open: %s%s", page.Open, strings.Join(ids, ", "), more)
}

// notAnIncidentID is the usage error of an argument that is no incident ID.
func notAnIncidentID(arg string) string { return fmt.Sprintf("%q is not an incident id", arg) }

// incidentListNoPipeline, incidentListBadAfter and incidentListUnknown are incident list's
// usage errors: pipeline= without a name, after= without an ID, an unknown word.
func incidentListNoPipeline() string { return "pipeline= needs a pipeline's name" }

func incidentListBadAfter(after string) string {
	return fmt.Sprintf("after= takes an incident ID, not %q", after)
}

func incidentListUnknown(word string) string {
	return fmt.Sprintf("incident list does not know %q", word)
}

// incidentListReply is a page of incident list: the incidents of this channel (all: of the
// channels the user is a member of) that the filters kept let through, after incident after
// (""), and a button for the next page when there is one.
func incidentListReply(page *state.Page, all bool, after string, kept []string) Reply {
	where := "in this channel"
	if all {
		where = "in the channels you are a member of"
	}
	filtered := ""
	if len(kept) > 0 && !(all && len(kept) == 1) {
		filtered = " matching " + strings.Join(kept, " ")
	}
	if len(page.Incidents) == 0 {
		if after != "" {
			return Reply{Text: "No more open incidents " + where + filtered + "."}
		}
		return Reply{Text: "No open incidents " + where + filtered + "."}
	}
	head := fmt.Sprintf("%-8s %-14s %-22s %-14s %-14s %6s  %s", "ID", "SEVERITY", "STATUS", "OWNER", "PIPELINE", "COUNT", "TITLE")
	if all {
		head = fmt.Sprintf("%-8s %-12s", "ID", "CHANNEL") + head[8:]
	}
	lines := []string{head}
	for _, inc := range page.Incidents {
		row := fmt.Sprintf("%-8s %-14s %-22s %-14s %-14s %6d  %s", inc.ID, alerts.Severity(inc.Severity),
			listStatus(inc), dash(ownerName(inc)), dash(inc.Pipeline), inc.Count, Title(inc))
		if all {
			row = fmt.Sprintf("%-8s %-12s", inc.ID, inc.ListedIn()) + row[8:]
		}
		lines = append(lines, row)
	}
	text := fmt.Sprintf("%d open incident%s %s%s, newest first", page.Open, human.Plural(int(page.Open)), where, filtered)
	if all || filtered != "" {
		text = fmt.Sprintf("Open incidents %s%s, newest first", where, filtered)
	}
	if after != "" || page.More {
		text += fmt.Sprintf(" (%d shown", len(page.Incidents))
		if after != "" {
			text += ", after " + state.NormalizeID(after)
		}
		text += ")"
	}
	r := Reply{Text: text, Sections: []Section{{Lines: lines, Pre: true}}}
	if page.More {
		cmd := strings.Join(append(append([]string{incidentListPath}, kept...), "after="+page.Next), " ")
		r.Actions = []Action{{ID: "incident_list_more", Label: "More", Command: cmd}}
	}
	return r
}

// listStatus is an incident's status in `incident list`, with its silence and escalation.
func listStatus(inc *state.Incident) string {
	s := inc.Status
	if inc.Silence != nil {
		s += ", silenced"
	} else if !inc.EscalatedAt.IsZero() && inc.Status == state.StatusOpen {
		s += ", escalated"
	}
	return s
}

// incidentShowReply is incident show: inc's facts, its alerts (with contexts, their labels,
// annotations and links, when kept) and the newest events of its timeline, tl.
func incidentShowReply(inc *state.Incident, contexts map[string]state.AlertContext, tl []state.Event) Reply {
	facts := []string{
		"Severity: " + alerts.Severity(inc.Severity).String(),
		"Status: " + StatusLine(inc),
		"Pipeline: " + dash(inc.Pipeline),
		fmt.Sprintf("Occurrences: %d", inc.Count),
		"First seen: " + human.Stamp(inc.FirstSeen) + "   Last seen: " + human.Stamp(inc.LastSeen),
	}
	if inc.Previous != "" {
		facts = append(facts, "Reopened: previous "+inc.Previous)
	}
	if len(inc.MergedFrom) > 0 {
		facts = append(facts, "Merged in: "+strings.Join(inc.MergedFrom, ", "))
	}
	facts = append(facts, lifecycleFacts(inc)...)
	fps := make([]string, 0, len(inc.Alerts))
	for fp := range inc.Alerts {
		fps = append(fps, fp)
	}
	sort.Strings(fps)
	var al []string
	for _, fp := range fps {
		a := inc.Alerts[fp]
		al = append(al, fmt.Sprintf("%-18s %-8s last %s", fp, a.Status, human.Stamp(a.LastSeen)))
		if c, ok := contexts[fp]; ok {
			al = append(al, alertContextLines(c)...)
		}
	}
	alertsSection := Section{Title: fmt.Sprintf("Alerts (%d)", len(al)), Lines: al, Pre: true}
	if inc.UnlistedAlerts > 0 {
		alertsSection.Title = fmt.Sprintf("Alerts (%d listed; %d more occurrences of alerts the full list could not take)",
			len(al), inc.UnlistedAlerts)
	}
	if inc.Flood != nil {
		facts, alertsSection = floodFacts(inc, facts)
	}
	var tls []string
	for _, e := range tl {
		line := human.Stamp(e.At) + "  " + e.Name
		if e.Actor != "" {
			line += " by " + e.Actor
		}
		if d := EventDetail(e); d != "" {
			line += ": " + d
		}
		tls = append(tls, line)
	}
	title := "Timeline"
	if inc.Events+1 > int64(len(tl)) {
		title = fmt.Sprintf("Timeline (the newest %d of %d events; `incident postmortem %s` has them all)", len(tl), inc.Events+1, inc.ID)
	}
	return Reply{
		Text: fmt.Sprintf("%s: %s", inc.ID, Title(inc)),
		Sections: []Section{
			{Lines: facts},
			alertsSection,
			{Title: title, Lines: tls, Pre: true},
		},
	}
}

// alertContextLines are an alert's labels, annotations and http(s) links, indented under it.
func alertContextLines(c state.AlertContext) []string {
	var out []string
	if c.Title != "" {
		out = append(out, "    title: "+c.Title)
	}
	for _, part := range []struct {
		name string
		m    map[string]string
	}{{"labels", c.Labels}, {"annotations", c.Annotations}, {"links", webLinks(c.Links)}} {
		if len(part.m) == 0 {
			continue
		}
		names := make([]string, 0, len(part.m))
		for k := range part.m {
			names = append(names, k)
		}
		sort.Strings(names)
		kv := make([]string, len(names))
		for i, k := range names {
			kv[i] = k + "=" + strings.Join(strings.Fields(part.m[k]), " ")
		}
		out = append(out, "    "+part.name+": "+strings.Join(kv, ", "))
	}
	return out
}

// floodFacts adds what a flood incident knows to facts, and lists its alerts by key: the keys
// with the most occurrences first.
func floodFacts(inc *state.Incident, facts []string) ([]string, Section) {
	f := inc.Flood
	flood := fmt.Sprintf("Flood: more than %d new incidents a minute in this channel; ends after %s at or below that rate", f.Limit, f.QuietFor)
	if !f.Ended.IsZero() {
		flood = "Flood: over since " + human.Stamp(f.Ended) + "; new alerts open their own incidents again"
	}
	facts = append(facts, flood, fmt.Sprintf("Distinct alerts (keys): %d", f.Distinct))
	est := ""
	if f.RankingEstimated {
		est = ", estimated"
	}
	for _, l := range f.Labels {
		facts = append(facts, fmt.Sprintf("Common label value: %s (%d%s)", l.Value, l.Count, est))
	}
	lines := make([]string, 0, len(f.Keys)+1)
	for _, k := range f.Keys {
		lines = append(lines, fmt.Sprintf("%6d  %s", k.Count, k.Value))
	}
	title := fmt.Sprintf("Alerts by key (%d keys", f.Listed)
	if int64(len(f.Keys)) < f.Listed {
		title += fmt.Sprintf(", the %d with the most occurrences shown", len(f.Keys))
	}
	if f.Unlisted > 0 {
		title += fmt.Sprintf("; %d more occurrences of keys beyond the list's %d", f.Unlisted, state.MaxListedFloodKeys)
	}
	return facts, Section{Title: title + ")", Lines: lines, Pre: true}
}

// StatusLine describes an incident's status for people.
func StatusLine(inc *state.Incident) string {
	switch {
	case inc.MergedInto != "":
		return "resolved (merged into " + inc.MergedInto + ")"
	case inc.Status == state.StatusAcknowledged && inc.AckBy != "":
		return "acknowledged by " + inc.AckBy
	case inc.Status == state.StatusResolved && inc.ResolvedBy != "":
		return "resolved by " + inc.ResolvedBy
	}
	return inc.Status
}

// What the incident commands did, as their replies say it.

func incidentAcked(id string) Reply { return Reply{Text: fmt.Sprintf("%s acknowledged.", id)} }

func incidentUnacked(id string) Reply {
	return Reply{Text: fmt.Sprintf("%s is unacknowledged again: escalation resumes at its next level.", id)}
}

func incidentReopened(id string) Reply {
	return Reply{Text: fmt.Sprintf("%s is open again; its thread continues.", id)}
}

// incidentUnmerged says from is its own again; into is the incident it was merged into ("":
// unknown).
func incidentUnmerged(from, into string) Reply {
	return Reply{Text: fmt.Sprintf("%s is its own incident again, with its keys, alerts and count; %s gave them back.", from, or(into, "the other"))}
}

func incidentResolved(id string) Reply { return Reply{Text: fmt.Sprintf("%s resolved.", id)} }

func incidentMerged(from, into string) Reply {
	return Reply{Text: fmt.Sprintf("%s merged into %s: its alerts and future duplicates now thread there.", from, into)}
}

// notFound turns store errors into sentences for people.
func notFound(err error, id string) error {
	var ce *state.ChangeError
	if errors.As(err, &ce) {
		return errors.New(ce.Error())
	}
	if errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("incident %s does not exist", id)
	}
	return err
}
