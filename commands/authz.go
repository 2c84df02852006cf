package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/state"
)

// Who may do what. The bot answers only in the channels slack.allowed_channels lets it (every
// channel when empty), for typed commands and clicks alike; within them:
//
//   - AccessMember: anyone who may use commands there (reads, acknowledge, watch, dry runs).
//   - AccessSteward: the remediators of the pipeline, or anyone as above when nobody is named
//     for it (resolve, merge, backup).
//   - AccessRemediator: the remediators of the pipeline and nobody else; with nobody named,
//     nobody (confirming a repair or a restore, --force, the audit trail).
//
// The remediators of a pipeline are slack.remediators plus pipelines[].remediators of that
// pipeline; an action without a pipeline is for slack.remediators alone.

// Access is a level of the rules above.
type Access int

// The levels.
const (
	AccessMember Access = iota
	AccessSteward
	AccessRemediator
)

// Authorizer says who remediates a pipeline.
type Authorizer interface {
	// Remediator reports whether userID is a remediator of pipeline (slack.remediators, plus
	// pipelines[].remediators when pipeline is not ""), and whether anybody is named for it.
	Remediator(ctx context.Context, userID, pipeline string) (is, named bool, err error)
}

// Directory says which channels a user may see.
type Directory interface {
	// Channels returns the channels userID is a member of.
	Channels(ctx context.Context, userID string) (map[string]bool, error)
}

// ErrNotAllowed is the refusal of an action to someone the rules above leave out.
type ErrNotAllowed struct {
	Action   string
	Pipeline string // "" for slack.remediators alone
	Nobody   bool   // nobody is named, so nobody may
	Reason   string // set for refusals that are not about remediators
}

func (e *ErrNotAllowed) Error() string { return notAllowedText(e) }

// Guard is an action to authorize.
type Guard struct {
	Action    string // what the person tries, for messages: "confirm checkpoint repairs"
	Access    Access
	Pipelines []string // what it touches; none: the action is not about one pipeline
	// Target and Incident go into the audit entry of a refusal.
	Target, Incident string
}

// guard applies the rules above to req; a refusal is audited and returned as *ErrNotAllowed.
func (h *Handler) guard(ctx context.Context, req Request, g Guard) error {
	if g.Access == AccessMember {
		return nil
	}
	pipelines := g.Pipelines
	if len(pipelines) == 0 {
		pipelines = []string{""}
	}
	for _, p := range pipelines {
		is, named := false, false
		if h.Authz != nil {
			var err error
			if is, named, err = h.Authz.Remediator(ctx, req.UserID, p); err != nil {
				return fmt.Errorf("check the remediators of %s: %w", orAll(p), err)
			}
		}
		if is || (g.Access == AccessSteward && !named) {
			continue
		}
		refusal := &ErrNotAllowed{Action: g.Action, Pipeline: p, Nobody: !named}
		h.record(ctx, req, state.AuditEntry{Action: g.Action, Target: g.Target, Outcome: "refused",
			Detail: refusal.Error(), Pipeline: p, Incident: g.Incident})
		return refusal
	}
	return nil
}

// maySee refuses an incident of a channel req's user is not a member of. The incident of the
// channel the command was typed in is always visible there. An incident whose root moved to
// slack.default_channel belongs to both channels.
func (h *Handler) maySee(ctx context.Context, req Request, inc *state.Incident) error {
	if h.Directory == nil || inc.Channel == "" || inc.Channel == req.ChannelID || inc.ListedIn() == req.ChannelID {
		return nil
	}
	chans, err := h.Directory.Channels(ctx, req.UserID)
	if err != nil {
		return fmt.Errorf("check your channels: %w", err)
	}
	if chans[inc.Channel] || chans[inc.ListedIn()] {
		return nil
	}
	return &ErrNotAllowed{Reason: notMemberText(inc.ID)}
}

// record fills in who, where and how, and appends e to the audit trail.
func (h *Handler) record(ctx context.Context, req Request, e state.AuditEntry) {
	if e.Outcome != "refused" {
		changed(ctx)
	}
	if h.Audit == nil {
		return
	}
	e.Actor, e.Channel, e.Via = req.UserID, req.ChannelID, req.Via
	h.Audit(ctx, e)
}

// audit records an action on target, about a pipeline when target is one.
func (h *Handler) audit(ctx context.Context, req Request, action, target, outcome, detail string) {
	e := state.AuditEntry{Action: action, Target: target, Outcome: outcome, Detail: detail}
	if idPattern.MatchString(target) {
		e.Incident = state.NormalizeID(target)
	} else if target != "" && !strings.ContainsAny(target, " ") {
		e.Pipeline = target
	}
	h.record(ctx, req, e)
}
