package commands

import (
	"context"
	"errors"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// Remediation backs up, repairs and restores pipelines' checkpoints. A repair or a restore is
// two steps: Propose (the dry run, stored as a plan with an id) and Confirm (which carries out
// that plan and nothing else). The implementation holds the safety rules: a fresh verified
// backup, files unchanged since the dry run, the query stopped, one operation per pipeline.
type Remediation interface {
	Backup(ctx context.Context, pipeline, actor string) (*remediate.BackupResult, error)
	Backups(ctx context.Context, pipeline string) ([]remediate.BackupInfo, error)
	// Propose makes and stores the plan of a repair, or of a restore from backup (the newest
	// backup with quarantined files when ""). A plan with no file has no ID.
	Propose(ctx context.Context, kind Kind, pipeline, backup, actor string) (*Proposal, error)
	// Confirm carries out the stored plan c.Plan, refusing with a *RefusalError when a rule
	// says no; c.Force, a reason, overrides the running-query rule alone.
	Confirm(ctx context.Context, c Confirmation) (*Outcome, error)
}

// The repair policy's words (pipeline.Repairs), as the remediation commands use them.
type (
	Kind         = pipeline.Kind
	Proposal     = pipeline.Proposal
	Confirmation = pipeline.Confirmation
	Outcome      = pipeline.Outcome
	RefusalError = pipeline.RefusalError
)

// The kinds of plans.
const (
	KindRepair  = pipeline.KindRepair
	KindRestore = pipeline.KindRestore
)

// Notes posts into incident threads.
type Notes interface {
	Note(ctx context.Context, id, ev, actor, detail, once string) (bool, error)
}

// RegisterRemediation adds `checkpoint backup`, `checkpoint backups`, `checkpoint repair` and
// `checkpoint restore`.
func (h *Handler) RegisterRemediation(r Remediation, notes Notes) {
	h.Register(&Command{Path: "checkpoint backup", Args: "PIPELINE",
		Min: 1, Max: 1, Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			pipeline := args[0]
			if err := h.guard(ctx, req, Guard{Action: backUpAction, Access: AccessSteward, Pipelines: args, Target: pipeline}); err != nil {
				return Reply{}, err
			}
			b, err := r.Backup(ctx, pipeline, req.Actor())
			if err != nil {
				h.audit(ctx, req, "checkpoint backup", pipeline, outcomeOf(err), errText(err))
				return Reply{}, err
			}
			text := backupText(pipeline, b)
			h.audit(ctx, req, "checkpoint backup", pipeline, "done", b.Location)
			h.note(ctx, notes, req, pipeline, noteBy(req.Actor(), text))
			return Reply{Text: text, Public: true}, nil
		}})
	h.Register(&Command{Path: "checkpoint backups", Args: "PIPELINE",
		Min: 1, Max: 1, Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			list, err := r.Backups(ctx, args[0])
			if err != nil {
				return Reply{}, err
			}
			return backupsReply(args[0], list, h.Now()), nil
		}})
	h.Register(&Command{Path: "checkpoint repair",
		Min: 1, Max: -1,
		Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			return h.remediation(ctx, r, notes, req, KindRepair, args)
		}})
	h.Register(&Command{Path: "checkpoint restore",
		Min: 1, Max: -1,
		Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			return h.remediation(ctx, r, notes, req, KindRestore, args)
		}})
}

// remediationArgs is PIPELINE [BACKUP] [--confirm PLAN [--force REASON…]].
type remediationArgs struct {
	pipeline, backup, plan, force string
}

func (h *Handler) parseRemediation(kind Kind, args []string) (remediationArgs, error) {
	usage := func(msg string) error {
		return &UsageError{Msg: msg, Usages: []string{h.find("checkpoint " + string(kind)).Usage(h.Name)}}
	}
	out := remediationArgs{pipeline: args[0]}
	rest := args[1:]
	if kind == KindRestore && len(rest) > 0 && !strings.HasPrefix(rest[0], "--") {
		out.backup, rest = rest[0], rest[1:]
	}
	for len(rest) > 0 {
		switch flag := strings.ToLower(rest[0]); flag {
		case "--confirm":
			if len(rest) < 2 || strings.HasPrefix(rest[1], "--") {
				return out, usage(usageConfirmNeedsPlan(kind, out.pipeline))
			}
			out.plan, rest = strings.ToUpper(rest[1]), rest[2:]
		case "--force":
			if out.plan == "" {
				return out, usage(usageForceAfterConfirm())
			}
			out.force, rest = strings.TrimSpace(strings.Join(rest[1:], " ")), nil
			if out.force == "" {
				return out, usage(usageForceNeedsReason())
			}
		default:
			return out, usage(usageUnknownArg(rest[0]))
		}
	}
	return out, nil
}

// remediation runs `checkpoint repair` and `checkpoint restore`: the dry run for anyone who
// may use commands, the confirmation for the pipeline's remediators.
func (h *Handler) remediation(ctx context.Context, r Remediation, notes Notes, req Request, kind Kind, args []string) (Reply, error) {
	a, err := h.parseRemediation(kind, args)
	if err != nil {
		return Reply{}, err
	}
	action := "checkpoint " + string(kind)
	if a.plan == "" {
		p, err := r.Propose(ctx, kind, a.pipeline, a.backup, req.Actor())
		if err != nil {
			return Reply{}, err
		}
		if p.ID != "" {
			changed(ctx) // the plan is stored for --confirm
		}
		return proposalReply(kind, p), nil
	}
	if err := h.guard(ctx, req, Guard{Action: confirmAction(kind), Access: AccessRemediator,
		Pipelines: []string{a.pipeline}, Target: a.pipeline}); err != nil {
		h.note(ctx, notes, req, a.pipeline, refusedNote(kind, a.pipeline, req.Actor(), err))
		return Reply{}, err
	}
	out, err := r.Confirm(ctx, Confirmation{Kind: kind, Pipeline: a.pipeline, Plan: a.plan, Actor: req.Actor(), Force: a.force})
	if err != nil {
		outcome := outcomeOf(err)
		h.audit(ctx, req, action, a.pipeline, outcome, planDetail(a.plan, a.force, errText(err)))
		h.note(ctx, notes, req, a.pipeline, failedNote(kind, a.pipeline, a.plan, req.Actor(), outcome, errText(err)))
		return Reply{}, err
	}
	text := confirmedText(out, req.Actor(), a.force)
	h.audit(ctx, req, action, a.pipeline, "done", planDetail(a.plan, a.force, doneDetail(out)))
	h.note(ctx, notes, req, a.pipeline, noteBy(req.Actor(), text+restartHint(kind, a.pipeline)))
	return Reply{Text: text, Public: true}, nil
}

// outcomeOf names an error for the audit: refused by a rule, or failed; nil is done.
func outcomeOf(err error) string {
	if err == nil {
		return "done"
	}
	var re *RefusalError
	var na *ErrNotAllowed
	if errors.As(err, &re) || errors.As(err, &na) || errors.Is(err, remediate.ErrStalePlan) || errors.Is(err, remediate.ErrChanged) {
		return "refused"
	}
	return "failed"
}

// note posts text into the thread of the incident the command concerns: the thread it was
// typed in, else the pipeline's newest open incident.
func (h *Handler) note(ctx context.Context, notes Notes, req Request, pipeline, text string) {
	if notes == nil {
		return
	}
	id := ""
	if req.ThreadTS != "" {
		id, _ = h.Incidents.ByThread(ctx, req.ChannelID, req.ThreadTS)
	}
	if id == "" {
		page, err := h.Incidents.ListPage(ctx, "", state.ListFilter{Pipeline: pipeline}, "", 1)
		if err != nil {
			return
		}
		if len(page.Incidents) == 1 {
			id = page.Incidents[0].ID
		}
	}
	if id != "" {
		_, _ = notes.Note(ctx, id, "remediation", req.Actor(), text, "")
	}
}

var _ Notes = (*state.Store)(nil)
