package commands

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

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
	h.Register(&Command{Path: incidentListPath, Args: "[all] [mine] [sev1…sev5] [open|acked] [pipeline=NAME]",
		Max: 6,
		Run: h.incidentList})
	h.Register(&Command{Path: incidentShowPath, Args: "[ID]", Max: 1,
		Run: h.incidentShow})
	h.Register(&Command{Path: incidentAckPath, Args: "[ID]", Max: 1,
		Run: h.incidentAck})
	h.Register(&Command{Path: incidentUnackPath, Args: "[ID]", Max: 1,
		Run: h.incidentUnack})
	h.Register(&Command{Path: incidentReopenPath, Args: "ID", Min: 1, Max: 1,
		Run: h.incidentReopen})
	h.Register(&Command{Path: incidentUnmergePath, Args: "FROM", Min: 1, Max: 1,
		Run: h.incidentUnmerge})
	h.Register(&Command{Path: incidentResolvePath, Args: "[ID] [note…]", Max: -1,
		Run: h.incidentResolve})
	h.Register(&Command{Path: incidentMergePath, Min: 2, Max: 2,
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
	return "", nil, &UsageError{Msg: whichIncident(page), Usages: []string{h.find(cmd).Usage(h.Name)}}
}

// targetShown is how many open incidents "which incident?" names.
const targetShown = 10

// listPageSize is how many incidents a page of incident list shows (a table that stays within
// one of Slack's blocks).
const listPageSize = 20

// incidentList lists this channel's open incidents, newest first, a page at a time, or with
// "all" those of every channel the user is a member of (Directory); the filters narrow it.
func (h *Handler) incidentList(ctx context.Context, req Request, args []string) (Reply, error) {
	usage := func(msg string) error {
		return &UsageError{Msg: msg, Usages: []string{h.find(incidentListPath).Usage(h.Name)}}
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
				return Reply{}, usage(incidentListNoPipeline())
			}
		case strings.HasPrefix(low, "after="):
			if after = a[len("after="):]; !idPattern.MatchString(after) {
				return Reply{}, usage(incidentListBadAfter(after))
			}
			continue
		default:
			return Reply{}, usage(incidentListUnknown(a))
		}
		kept = append(kept, a)
	}
	channel := req.ChannelID
	if all {
		channel = ""
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
	return incidentListReply(page, all, after, kept), nil
}

// incident returns the incident a command means, refusing one of a channel the user is not a
// member of.
func (h *Handler) incident(ctx context.Context, req Request, id string) (*state.Incident, error) {
	inc, err := h.Incidents.Get(ctx, id)
	if err != nil {
		return nil, notFound(err, id)
	}
	if err := h.maySee(ctx, req, inc); err != nil {
		h.record(ctx, req, state.AuditEntry{Action: incidentSeeOthers, Target: id, Outcome: "refused",
			Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
		return nil, err
	}
	return inc, nil
}

func (h *Handler) incidentShow(ctx context.Context, req Request, args []string) (Reply, error) {
	id, _, err := h.target(ctx, req, args, incidentShowPath)
	if err != nil {
		return Reply{}, err
	}
	inc, err := h.incident(ctx, req, id)
	if err != nil {
		return Reply{}, err
	}
	var contexts map[string]state.AlertContext
	if cs, ok := h.Incidents.(AlertContexts); ok && inc.Flood == nil {
		if contexts, err = cs.AlertContexts(ctx, id); err != nil {
			return Reply{}, err
		}
	}
	tl, err := h.Incidents.Timeline(ctx, id, 15)
	if err != nil {
		return Reply{}, err
	}
	return incidentShowReply(inc, contexts, tl), nil
}

func (h *Handler) incidentAck(ctx context.Context, req Request, args []string) (Reply, error) {
	id, _, err := h.target(ctx, req, args, incidentAckPath)
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
	return incidentAcked(id), nil
}

func (h *Handler) incidentUnack(ctx context.Context, req Request, args []string) (Reply, error) {
	id, _, err := h.target(ctx, req, args, incidentUnackPath)
	if err != nil {
		return Reply{}, err
	}
	if err := h.undo(ctx, req, id, "unacknowledge", h.Incidents.Unacknowledge); err != nil {
		return Reply{}, err
	}
	return incidentUnacked(id), nil
}

func (h *Handler) incidentReopen(ctx context.Context, req Request, args []string) (Reply, error) {
	if !idPattern.MatchString(args[0]) {
		return Reply{}, &UsageError{Msg: notAnIncidentID(args[0]), Usages: []string{h.find(incidentReopenPath).Usage(h.Name)}}
	}
	id := state.NormalizeID(args[0])
	if err := h.undo(ctx, req, id, "reopen", h.Incidents.Reopen); err != nil {
		return Reply{}, err
	}
	return incidentReopened(id), nil
}

func (h *Handler) incidentUnmerge(ctx context.Context, req Request, args []string) (Reply, error) {
	if !idPattern.MatchString(args[0]) {
		return Reply{}, &UsageError{Msg: notAnIncidentID(args[0]), Usages: []string{h.find(incidentUnmergePath).Usage(h.Name)}}
	}
	from := state.NormalizeID(args[0])
	inc, err := h.incident(ctx, req, from)
	if err != nil {
		return Reply{}, err
	}
	if err := h.undo(ctx, req, from, "unmerge", h.Incidents.Unmerge); err != nil {
		return Reply{}, err
	}
	return incidentUnmerged(from, inc.MergedInto), nil
}

// undo runs a person's undo (unack, reopen, unmerge) of incident id, which they must be able
// to see and, like a resolve, change; audited either way.
func (h *Handler) undo(ctx context.Context, req Request, id, action string, do func(ctx context.Context, id, actor string) error) error {
	inc, err := h.incident(ctx, req, id)
	if err != nil {
		return err
	}
	if action != "unacknowledge" {
		if err := h.guard(ctx, req, Guard{Action: incidentsAction(action), Access: AccessSteward, Pipelines: pipelinesOf(inc),
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
	id, rest, err := h.target(ctx, req, args, incidentResolvePath)
	if err != nil {
		return Reply{}, err
	}
	inc, err := h.incident(ctx, req, id)
	if err != nil {
		return Reply{}, err
	}
	if err := h.guard(ctx, req, Guard{Action: incidentsAction("resolve"), Access: AccessSteward, Pipelines: pipelinesOf(inc),
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
	return incidentResolved(id), nil
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
			return Reply{}, &UsageError{Msg: notAnIncidentID(a), Usages: []string{h.find(incidentMergePath).Usage(h.Name)}}
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
	if err := h.guard(ctx, req, Guard{Action: incidentsAction("merge"), Access: AccessSteward, Pipelines: pipelinesOf(a, b),
		Target: target, Incident: from}); err != nil {
		return Reply{}, err
	}
	if err := h.Incidents.Merge(ctx, from, into, req.Actor()); err != nil {
		err = notFound(err, from)
		h.record(ctx, req, state.AuditEntry{Action: "merge", Target: target, Outcome: "failed", Detail: err.Error(), Incident: from, Pipeline: a.Pipeline})
		return Reply{}, err
	}
	h.record(ctx, req, state.AuditEntry{Action: "merge", Target: target, Outcome: "done", Incident: from, Pipeline: a.Pipeline})
	return incidentMerged(from, into), nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
