package commands

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// Incidents is what the incident commands need from the incident store.
type Incidents interface {
	Get(ctx context.Context, id string) (*state.Incident, error)
	ListPage(ctx context.Context, channel string, f state.ListFilter, after string, n int) (*state.Page, error)
	ByThread(ctx context.Context, channel, ts string) (string, error)
	Timeline(ctx context.Context, id string, n int64) ([]state.Event, error)
	Acknowledge(ctx context.Context, id, actor string) error
	Unacknowledge(ctx context.Context, id, actor string) error
	Reopen(ctx context.Context, id, actor string) error
	Unmerge(ctx context.Context, from, actor string) error
	Resolve(ctx context.Context, id, actor, note string) error
	Merge(ctx context.Context, from, into, actor string) error
}

var idPattern = regexp.MustCompile(`(?i)^(inc-)?[0-9]+$`)

func (h *Handler) registerIncidents() {
	h.Register(&Command{Path: "incident list", Args: "[all] [mine] [sev1…sev5] [open|acked] [pipeline=NAME]",
		Max: 6,
		Run: h.incidentList})
	h.Register(&Command{Path: "incident show", Args: "[ID]", Max: 1,
		Run: h.incidentShow})
	h.Register(&Command{Path: "incident ack", Args: "[ID]", Max: 1,
		Run: h.incidentAck})
	h.Register(&Command{Path: "incident unack", Args: "[ID]", Max: 1,
		Run: h.incidentUnack})
	h.Register(&Command{Path: "incident reopen", Args: "ID", Min: 1, Max: 1,
		Run: h.incidentReopen})
	h.Register(&Command{Path: "incident unmerge", Args: "FROM", Min: 1, Max: 1,
		Run: h.incidentUnmerge})
	h.Register(&Command{Path: "incident resolve", Args: "[ID] [note…]", Max: -1,
		Run: h.incidentResolve})
	h.Register(&Command{Path: "incident merge", Min: 2, Max: 2,
		Run: h.incidentMerge})
}

// target finds the incident a command means: the given id, else the incident whose thread the
// command was typed in, else the only open incident of the channel.
func (h *Handler) target(ctx context.Context, req Request, args []string, cmd string) (string, []string, error) {
	if len(args) > 0 && idPattern.MatchString(args[0]) {
		return state.NormalizeID(args[0]), args[1:], nil
	}
	if req.ThreadTS != "" {
		id, err := h.Incidents.ByThread(ctx, req.ChannelID, req.ThreadTS)
		if err != nil {
			return "", nil, err
		}
		if id != "" {
			return id, args, nil
		}
	}
	// The channel's index says how many are open; a page of them names a few.
	page, err := h.Incidents.ListPage(ctx, req.ChannelID, state.ListFilter{}, "", targetShown)
	if err != nil {
		return "", nil, err
	}
	if page.Open == 1 && len(page.Incidents) == 1 {
		return page.Incidents[0].ID, args, nil
	}
	msg := "which incident? This channel has no open incident"
	if page.Open > 1 {
		ids := make([]string, len(page.Incidents))
		for i, inc := range page.Incidents {
			ids[i] = inc.ID
		}
		more := ""
		if page.More {
			more = fmt.Sprintf(" and %d more", page.Open-int64(len(ids)))
		}
		msg = fmt.Sprintf("which incident? This channel has %d open: %s%s", page.Open, strings.Join(ids, ", "), more)
	}
	return "", nil, &UsageError{Msg: msg, Usages: []string{h.find(cmd).Usage(h.Name)}}
}

// targetShown is how many open incidents "which incident?" names.
const targetShown = 10

// listPageSize is how many incidents a page of incident list shows (a table that stays within
// one of Slack's blocks).
const listPageSize = 20

// incidentList lists this channel's open incidents, newest first, a page at a time, or with
// "all" those of every channel the user is a member of (Directory); the filters narrow it.
func (h *Handler) incidentList(ctx context.Context, req Request, args []string) (Reply, error) {
	usage := func(format string, a ...any) error {
		return &UsageError{Msg: fmt.Sprintf(format, a...), Usages: []string{h.find("incident list").Usage(h.Name)}}
	}
	var f state.ListFilter
	all, after := false, ""
	var kept []string // the filters, for the next page's command
	for _, a := range args {
		low := strings.ToLower(a)
		switch {
		case low == "all":
			all = true
		case low == "mine":
			f.User = req.UserID
		case len(low) == 4 && strings.HasPrefix(low, "sev") && low[3] >= '1' && low[3] <= '5':
			f.Severity = int(low[3] - '0')
		case low == "open":
			f.Status = state.StatusOpen
		case low == "acked" || low == "acknowledged":
			f.Status = state.StatusAcknowledged
		case strings.HasPrefix(low, "pipeline="):
			f.Pipeline = a[len("pipeline="):]
			if f.Pipeline == "" {
				return Reply{}, usage("pipeline= needs a pipeline's name")
			}
		case strings.HasPrefix(low, "after="):
			if after = a[len("after="):]; !idPattern.MatchString(after) {
				return Reply{}, usage("after= takes an incident ID, not %q", after)
			}
			continue
		default:
			return Reply{}, usage("incident list does not know %q", a)
		}
		kept = append(kept, a)
	}
	channel := req.ChannelID
	where := "in this channel"
	if all {
		channel, where = "", "in the channels you are a member of"
		if h.Directory != nil {
			mine, err := h.Directory.Channels(ctx, req.UserID)
			if err != nil {
				return Reply{}, fmt.Errorf("check your channels: %w", err)
			}
			if mine == nil {
				mine = map[string]bool{}
			}
			mine[req.ChannelID] = true
			f.Channels = mine
		}
	}
	page, err := h.Incidents.ListPage(ctx, channel, f, after, listPageSize)
	if err != nil {
		return Reply{}, err
	}
	filtered := ""
	if len(kept) > 0 && !(all && len(kept) == 1) {
		filtered = " matching " + strings.Join(kept, " ")
	}
	if len(page.Incidents) == 0 {
		if after != "" {
			return Reply{Text: "No more open incidents " + where + filtered + "."}, nil
		}
		return Reply{Text: "No open incidents " + where + filtered + "."}, nil
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
		cmd := strings.Join(append(append([]string{"incident list"}, kept...), "after="+page.Next), " ")
		r.Actions = []Action{{ID: "incident_list_more", Label: "More", Command: cmd}}
	}
	return r, nil
}

// incident returns the incident a command means, refusing one of a channel the user is not a
// member of.
func (h *Handler) incident(ctx context.Context, req Request, id string) (*state.Incident, error) {
	inc, err := h.Incidents.Get(ctx, id)
	if err != nil {
		return nil, notFound(err, id)
	}
	if err := h.maySee(ctx, req, inc); err != nil {
		h.record(ctx, req, state.AuditEntry{Action: "see incidents of other channels", Target: id, Outcome: "refused",
			Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
		return nil, err
	}
	return inc, nil
}

func (h *Handler) incidentShow(ctx context.Context, req Request, args []string) (Reply, error) {
	id, _, err := h.target(ctx, req, args, "incident show")
	if err != nil {
		return Reply{}, err
	}
	inc, err := h.incident(ctx, req, id)
	if err != nil {
		return Reply{}, err
	}
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
	var contexts map[string]state.AlertContext
	if cs, ok := h.Incidents.(AlertContexts); ok && inc.Flood == nil {
		if contexts, err = cs.AlertContexts(ctx, id); err != nil {
			return Reply{}, err
		}
	}
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
	tl, err := h.Incidents.Timeline(ctx, id, 15)
	if err != nil {
		return Reply{}, err
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
	}, nil
}

func (h *Handler) incidentAck(ctx context.Context, req Request, args []string) (Reply, error) {
	id, _, err := h.target(ctx, req, args, "incident ack")
	if err != nil {
		return Reply{}, err
	}
	inc, err := h.incident(ctx, req, id)
	if err != nil {
		return Reply{}, err
	}
	if err := h.Incidents.Acknowledge(ctx, id, req.Actor()); err != nil {
		err = notFound(err, id)
		h.record(ctx, req, state.AuditEntry{Action: "acknowledge", Target: id, Outcome: "failed", Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
		return Reply{}, err
	}
	h.record(ctx, req, state.AuditEntry{Action: "acknowledge", Target: id, Outcome: "done", Incident: id, Pipeline: inc.Pipeline})
	return Reply{Text: fmt.Sprintf("%s acknowledged.", id)}, nil
}

func (h *Handler) incidentUnack(ctx context.Context, req Request, args []string) (Reply, error) {
	id, _, err := h.target(ctx, req, args, "incident unack")
	if err != nil {
		return Reply{}, err
	}
	if err := h.undo(ctx, req, id, "unacknowledge", h.Incidents.Unacknowledge); err != nil {
		return Reply{}, err
	}
	return Reply{Text: fmt.Sprintf("%s is unacknowledged again: escalation resumes at its next level.", id)}, nil
}

func (h *Handler) incidentReopen(ctx context.Context, req Request, args []string) (Reply, error) {
	if !idPattern.MatchString(args[0]) {
		return Reply{}, &UsageError{Msg: fmt.Sprintf("%q is not an incident id", args[0]), Usages: []string{h.find("incident reopen").Usage(h.Name)}}
	}
	id := state.NormalizeID(args[0])
	if err := h.undo(ctx, req, id, "reopen", h.Incidents.Reopen); err != nil {
		return Reply{}, err
	}
	return Reply{Text: fmt.Sprintf("%s is open again; its thread continues.", id)}, nil
}

func (h *Handler) incidentUnmerge(ctx context.Context, req Request, args []string) (Reply, error) {
	if !idPattern.MatchString(args[0]) {
		return Reply{}, &UsageError{Msg: fmt.Sprintf("%q is not an incident id", args[0]), Usages: []string{h.find("incident unmerge").Usage(h.Name)}}
	}
	from := state.NormalizeID(args[0])
	inc, err := h.incident(ctx, req, from)
	if err != nil {
		return Reply{}, err
	}
	if err := h.undo(ctx, req, from, "unmerge", h.Incidents.Unmerge); err != nil {
		return Reply{}, err
	}
	return Reply{Text: fmt.Sprintf("%s is its own incident again, with its keys, alerts and count; %s gave them back.", from, or(inc.MergedInto, "the other"))}, nil
}

// undo runs a person's undo (unack, reopen, unmerge) of incident id, which they must be able
// to see and, like a resolve, change; audited either way.
func (h *Handler) undo(ctx context.Context, req Request, id, action string, do func(ctx context.Context, id, actor string) error) error {
	inc, err := h.incident(ctx, req, id)
	if err != nil {
		return err
	}
	if action != "unacknowledge" {
		if err := h.guard(ctx, req, Guard{Action: action + " incidents", Access: AccessSteward, Pipelines: pipelinesOf(inc),
			Target: id, Incident: id}); err != nil {
			return err
		}
	}
	if err := do(ctx, id, req.Actor()); err != nil {
		err = notFound(err, id)
		h.record(ctx, req, state.AuditEntry{Action: action, Target: id, Outcome: "failed", Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
		return err
	}
	h.record(ctx, req, state.AuditEntry{Action: action, Target: id, Outcome: "done", Incident: id, Pipeline: inc.Pipeline})
	return nil
}

func (h *Handler) incidentResolve(ctx context.Context, req Request, args []string) (Reply, error) {
	id, rest, err := h.target(ctx, req, args, "incident resolve")
	if err != nil {
		return Reply{}, err
	}
	inc, err := h.incident(ctx, req, id)
	if err != nil {
		return Reply{}, err
	}
	if err := h.guard(ctx, req, Guard{Action: "resolve incidents", Access: AccessSteward, Pipelines: pipelinesOf(inc),
		Target: id, Incident: id}); err != nil {
		return Reply{}, err
	}
	note := strings.Join(rest, " ")
	if err := h.Incidents.Resolve(ctx, id, req.Actor(), note); err != nil {
		err = notFound(err, id)
		h.record(ctx, req, state.AuditEntry{Action: "resolve", Target: id, Outcome: "failed", Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
		return Reply{}, err
	}
	h.record(ctx, req, state.AuditEntry{Action: "resolve", Target: id, Outcome: "done", Detail: note, Incident: id, Pipeline: inc.Pipeline})
	return Reply{Text: fmt.Sprintf("%s resolved.", id)}, nil
}

// pipelinesOf is the pipeline an incident belongs to, none for an incident of no pipeline.
func pipelinesOf(incs ...*state.Incident) []string {
	var out []string
	for _, inc := range incs {
		if inc.Pipeline != "" && !slices.Contains(out, inc.Pipeline) {
			out = append(out, inc.Pipeline)
		}
	}
	return out
}

func (h *Handler) incidentMerge(ctx context.Context, req Request, args []string) (Reply, error) {
	for _, a := range args {
		if !idPattern.MatchString(a) {
			return Reply{}, &UsageError{Msg: fmt.Sprintf("%q is not an incident id", a), Usages: []string{h.find("incident merge").Usage(h.Name)}}
		}
	}
	from, into := state.NormalizeID(args[0]), state.NormalizeID(args[1])
	a, err := h.incident(ctx, req, from)
	if err != nil {
		return Reply{}, err
	}
	b, err := h.incident(ctx, req, into)
	if err != nil {
		return Reply{}, err
	}
	target := from + " into " + into
	if err := h.guard(ctx, req, Guard{Action: "merge incidents", Access: AccessSteward, Pipelines: pipelinesOf(a, b),
		Target: target, Incident: from}); err != nil {
		return Reply{}, err
	}
	if err := h.Incidents.Merge(ctx, from, into, req.Actor()); err != nil {
		err = notFound(err, from)
		h.record(ctx, req, state.AuditEntry{Action: "merge", Target: target, Outcome: "failed", Detail: err.Error(), Incident: from, Pipeline: a.Pipeline})
		return Reply{}, err
	}
	h.record(ctx, req, state.AuditEntry{Action: "merge", Target: target, Outcome: "done", Incident: from, Pipeline: a.Pipeline})
	return Reply{Text: fmt.Sprintf("%s merged into %s: its alerts and future duplicates now thread there.", from, into)}, nil
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

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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
