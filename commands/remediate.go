package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/state"
)

// Remediation backs up and repairs pipelines' checkpoints.
type Remediation interface {
	Backup(ctx context.Context, pipeline string) (*remediate.BackupResult, error)
	Plan(ctx context.Context, pipeline string) (*remediate.Plan, error)
	// Repair quarantines the current plan's files into the newest verified backup, refusing
	// with a RefusalError without a backup young enough.
	Repair(ctx context.Context, pipeline string) (*remediate.QuarantineResult, *remediate.BackupResult, error)
}

// RefusalError is a repair refused by a safety rule; its text says which.
type RefusalError struct{ Reason string }

func (e *RefusalError) Error() string { return e.Reason }

// Notes posts into incident threads.
type Notes interface {
	Note(ctx context.Context, id, ev, actor, detail, once string) (bool, error)
}

// RegisterRemediation adds `checkpoint backup` and `checkpoint repair`.
func (h *Handler) RegisterRemediation(r Remediation, notes Notes) {
	h.Register(&Command{Path: "checkpoint backup", Args: "PIPELINE", Summary: "copy the checkpoint to backup_location with a verified SHA-256 manifest",
		Min: 1, Max: 1, Example: "checkpoint backup sms-replies", Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			b, err := r.Backup(ctx, args[0])
			if err != nil {
				h.audit(ctx, req, "checkpoint backup", args[0], "failed", err.Error())
				return Reply{}, err
			}
			text := fmt.Sprintf("Backed up %s: %d files, %d bytes to %s, verified against its manifest (SHA-256).", args[0], b.Files, b.Bytes, b.Location)
			h.audit(ctx, req, "checkpoint backup", args[0], "done", b.Location)
			h.note(ctx, notes, req, args[0], req.Actor()+": "+text)
			return Reply{Text: text, Public: true}, nil
		}})
	h.Register(&Command{Path: "checkpoint repair", Args: "PIPELINE [--confirm]", Summary: "show the minimal fragment to quarantine (dry run), then move it into the backup on confirmation",
		Min: 1, Max: 2, Example: "checkpoint repair sms-replies", Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			pipeline := args[0]
			if len(args) == 2 && args[1] != "--confirm" {
				return Reply{}, &UsageError{Msg: fmt.Sprintf("unknown flag %q", args[1]), Usages: []string{h.find("checkpoint repair").Usage(h.Name)}}
			}
			if len(args) == 1 {
				plan, err := r.Plan(ctx, pipeline)
				if err != nil {
					return Reply{}, err
				}
				reply := Reply{Text: "Dry run: nothing in the checkpoint of " + pipeline + " needs quarantining.",
					Sections: []Section{{Lines: plan.Lines(), Pre: true}}}
				if !plan.Empty {
					reply.Text = fmt.Sprintf("Dry run: %d file(s) of %s would move to the newest verified backup's quarantine/ (nothing is deleted). Only remediators may confirm.", len(plan.Files), pipeline)
					reply.Actions = []Action{{ID: "repair_confirm", Label: fmt.Sprintf("Quarantine %d file(s)", len(plan.Files)),
						Command: "checkpoint repair " + pipeline + " --confirm", Danger: true,
						Confirm: "Move these files out of the checkpoint of " + pipeline + " into the backup's quarantine/?"}}
				}
				return reply, nil
			}
			if err := h.authorize(ctx, req, "confirm checkpoint repairs", pipeline); err != nil {
				h.note(ctx, notes, req, pipeline, "Refused a checkpoint repair of "+pipeline+" by "+req.Actor()+": not in slack.remediators.")
				return Reply{}, err
			}
			q, b, err := r.Repair(ctx, pipeline)
			if err != nil {
				var refusal *RefusalError
				outcome := "failed"
				if errors.As(err, &refusal) || errors.Is(err, remediate.ErrStalePlan) {
					outcome = "refused"
				}
				h.audit(ctx, req, "checkpoint repair", pipeline, outcome, err.Error())
				h.note(ctx, notes, req, pipeline, fmt.Sprintf("Checkpoint repair of %s by %s %s: %v", pipeline, req.Actor(), outcome, err))
				return Reply{}, err
			}
			var files []string
			for _, f := range q.Moved {
				files = append(files, f.Path)
			}
			text := fmt.Sprintf("Quarantined %d file(s) of %s into %s: %s. Backup %s was verified before the move.",
				len(files), pipeline, q.Destination, strings.Join(files, ", "), b.Location)
			h.audit(ctx, req, "checkpoint repair", pipeline, "done", strings.Join(files, ", "))
			h.note(ctx, notes, req, pipeline, req.Actor()+": "+text+" Restart the query, then `watch "+pipeline+"`.")
			return Reply{Text: text, Public: true}, nil
		}})
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
		open, err := h.Incidents.ListOpen(ctx, "")
		if err != nil {
			return
		}
		var newest time.Time
		for _, inc := range open {
			if inc.Pipeline == pipeline && !inc.FirstSeen.Before(newest) {
				id, newest = inc.ID, inc.FirstSeen
			}
		}
	}
	if id != "" {
		_, _ = notes.Note(ctx, id, "remediation", req.Actor(), text, "")
	}
}

var _ Notes = (*state.Store)(nil)
