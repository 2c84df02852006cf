package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/internal/human"
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
			if err := h.guard(ctx, req, Guard{Action: "back up checkpoints", Access: AccessSteward, Pipelines: args, Target: pipeline}); err != nil {
				return Reply{}, err
			}
			b, err := r.Backup(ctx, pipeline, req.Actor())
			if err != nil {
				h.audit(ctx, req, "checkpoint backup", pipeline, outcomeOf(err), errText(err))
				return Reply{}, err
			}
			text := fmt.Sprintf("Backed up %s: %d files, %d bytes to %s, verified against its manifest (SHA-256).", pipeline, b.Files, b.Bytes, b.Location)
			h.audit(ctx, req, "checkpoint backup", pipeline, "done", b.Location)
			h.note(ctx, notes, req, pipeline, req.Actor()+": "+text)
			return Reply{Text: text, Public: true}, nil
		}})
	h.Register(&Command{Path: "checkpoint backups", Args: "PIPELINE",
		Min: 1, Max: 1, Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			list, err := r.Backups(ctx, args[0])
			if err != nil {
				return Reply{}, err
			}
			if len(list) == 0 {
				return Reply{Text: "No backups of " + args[0] + " yet: `checkpoint backup " + args[0] + "` takes one."}, nil
			}
			now := h.Now()
			lines := []string{fmt.Sprintf("%-28s %-10s %7s %10s  %-11s %s", "BACKUP", "AGE", "FILES", "SIZE", "QUARANTINE", "STATE")}
			for _, b := range list {
				lines = append(lines, fmt.Sprintf("%-28s %-10s %7d %10s  %-11s %s", b.Dir, human.Age(now.Sub(b.Created)), b.Files, bytesText(b.Bytes),
					fmt.Sprint(b.Quarantined), backupStateText(b)))
			}
			return Reply{Text: fmt.Sprintf("%d backup%s of %s, newest first", len(list), human.Plural(len(list)), args[0]),
				Sections: []Section{{Lines: lines, Pre: true}}}, nil
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
	usage := func(format string, a ...any) error {
		return &UsageError{Msg: fmt.Sprintf(format, a...), Usages: []string{h.find("checkpoint " + string(kind)).Usage(h.Name)}}
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
				return out, usage("--confirm needs the plan id the dry run showed (P-…): run `checkpoint %s %s` first", kind, out.pipeline)
			}
			out.plan, rest = strings.ToUpper(rest[1]), rest[2:]
		case "--force":
			if out.plan == "" {
				return out, usage("--force goes after --confirm PLAN")
			}
			out.force, rest = strings.TrimSpace(strings.Join(rest[1:], " ")), nil
			if out.force == "" {
				return out, usage("--force needs a reason, such as `--force query stopped by hand at 10:40, driver log still rotating`")
			}
		default:
			return out, usage("unknown flag or argument %q", rest[0])
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
		return h.proposalReply(kind, p), nil
	}
	if err := h.guard(ctx, req, Guard{Action: "confirm checkpoint " + string(kind) + "s", Access: AccessRemediator,
		Pipelines: []string{a.pipeline}, Target: a.pipeline}); err != nil {
		h.note(ctx, notes, req, a.pipeline, fmt.Sprintf("Refused a checkpoint %s of %s by %s: %v.", kind, a.pipeline, req.Actor(), err))
		return Reply{}, err
	}
	out, err := r.Confirm(ctx, Confirmation{Kind: kind, Pipeline: a.pipeline, Plan: a.plan, Actor: req.Actor(), Force: a.force})
	detail := func(s string) string {
		s = "plan " + a.plan + ": " + s
		if a.force != "" {
			s += " [--force: " + a.force + "]"
		}
		return s
	}
	if err != nil {
		outcome := outcomeOf(err)
		h.audit(ctx, req, action, a.pipeline, outcome, detail(errText(err)))
		h.note(ctx, notes, req, a.pipeline, fmt.Sprintf("Checkpoint %s of %s (plan %s) by %s %s: %s", kind, a.pipeline, a.plan, req.Actor(), outcome, errText(err)))
		return Reply{}, err
	}
	text := OutcomeText(out)
	forced := strings.Join(aliveLines(out.Forced), "; ")
	if a.force != "" && len(out.Forced) > 0 {
		text += " Forced by " + req.Actor() + " (" + a.force + ") over: " + forced + "."
	}
	done := strings.Join(out.Files, ", ")
	if len(out.Forced) > 0 {
		done += "; overrode: " + forced
	}
	h.audit(ctx, req, action, a.pipeline, "done", detail(done))
	next := " Restart the query, then `watch " + a.pipeline + "`."
	if kind == KindRestore {
		next = ""
	}
	h.note(ctx, notes, req, a.pipeline, req.Actor()+": "+text+next)
	return Reply{Text: text, Public: true}, nil
}

func (h *Handler) proposalReply(kind Kind, p *Proposal) Reply {
	var plan []string
	switch {
	case p.Repair != nil:
		plan = planLines(p.Repair)
	case p.Restore != nil:
		plan = restoreLines(p.Restore)
	}
	if p.ID == "" {
		what := "nothing in the checkpoint of " + p.Pipeline + " needs quarantining."
		if kind == KindRestore {
			what = "nothing to put back into the checkpoint of " + p.Pipeline + "."
		}
		return Reply{Text: "Dry run: " + what, Sections: []Section{{Lines: plan, Pre: true}}}
	}
	until := human.Clock(p.Expires)
	bound := []string{
		fmt.Sprintf("Plan %s, digest %.12s: the path, size, modification time (or S3 ETag) and SHA-256 of every file above.", p.ID, p.Digest),
		"Confirming re-reads them and refuses, moving nothing, when any differs; so does a plan older than " + until + ".",
	}
	reply := Reply{Sections: []Section{{Lines: plan, Pre: true}, {Title: "Bound to what you see", Lines: bound}}}
	confirm := fmt.Sprintf("checkpoint %s %s --confirm %s", kind, p.Pipeline, p.ID)
	switch kind {
	case KindRepair:
		reply.Text = fmt.Sprintf("Dry run %s: %d file(s) of %s would move to the newest verified backup's quarantine/ (nothing is deleted). Only remediators of %s may confirm, until %s.",
			p.ID, p.Files, p.Pipeline, p.Pipeline, until)
		reply.Actions = []Action{{ID: "repair_confirm", Label: fmt.Sprintf("Quarantine %d file(s)", p.Files), Command: confirm, Danger: true,
			Confirm: fmt.Sprintf("Move exactly the %d file(s) of plan %s out of the checkpoint of %s into the backup's quarantine/?", p.Files, p.ID, p.Pipeline)}}
	case KindRestore:
		reply.Text = fmt.Sprintf("Dry run %s: %d file(s) would go back from %s's quarantine into the checkpoint of %s (nothing is overwritten). Only remediators of %s may confirm, until %s.",
			p.ID, p.Files, p.Backup, p.Pipeline, p.Pipeline, until)
		reply.Actions = []Action{{ID: "restore_confirm", Label: fmt.Sprintf("Restore %d file(s)", p.Files), Command: confirm, Danger: true,
			Confirm: fmt.Sprintf("Put exactly the %d file(s) of plan %s back into the checkpoint of %s?", p.Files, p.ID, p.Pipeline)}}
	}
	if len(p.Alive) > 0 {
		reply.Sections = append(reply.Sections, Section{Title: "A confirmation now would be refused", Lines: append(aliveLines(p.Alive), stopAdvice(p.QuietFor)...)})
	}
	return reply
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

func bytesText(n int64) string {
	switch {
	case n < 10<<10:
		return fmt.Sprintf("%d B", n)
	case n < 10<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	case n < 10<<30:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d GiB", n>>30)
}

var _ Notes = (*state.Store)(nil)
