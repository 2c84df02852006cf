package commands

import (
	"context"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// Diagnoser runs every check of a pipeline and judges them, and scans its driver logs
// (pipeline.Diagnoser).
type Diagnoser interface {
	Diagnose(ctx context.Context, pipeline string) (pipeline.Verdict, error)
	Logs(ctx context.Context, pipeline string) (*driverlog.Report, error)
}

// Thread posts into incidents' threads a reply as data, which the bot renders when it
// delivers it, with a summary for the incident's timeline (state.Store).
type Thread interface {
	NoteWithSummary(ctx context.Context, id, ev, actor, summary, detail, once string) (bool, error)
}

// Verdicts posts a pipeline's verdict into an incident's thread (pipeline.Verdicts): as data,
// which DiagnosisReply words when the bot delivers it.
type Verdicts interface {
	Post(ctx context.Context, incident, pipeline string, again bool) error
}

// RegisterDiagnose adds `diagnose` and `logs`.
func (h *Handler) RegisterDiagnose(d Diagnoser) {
	h.diagnoser = d
	h.Register(&Command{Path: "diagnose", Args: "PIPELINE",
		Min: 1, Max: 1, Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			v, err := d.Diagnose(ctx, args[0])
			if err != nil {
				return Reply{}, err
			}
			return VerdictReply(v), nil
		}})
	h.Register(&Command{Path: "logs", Args: "PIPELINE",
		Min: 1, Max: 1, Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			r, err := d.Logs(ctx, args[0])
			if r == nil {
				return Reply{}, err
			}
			return logsReply(args[0], *r), nil
		}})
}

// RegisterIncidentDiagnose adds `incident diagnose`, which the root message's "Diagnose again"
// button stands for; the verdict goes into the incident's thread through v.
func (h *Handler) RegisterIncidentDiagnose(v Verdicts) {
	h.verdicts = v
	h.Register(&Command{Path: incidentDiagnosePath, Args: "[ID]",
		Max: 1, Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			id, _, err := h.target(ctx, req, args, incidentDiagnosePath)
			if err != nil {
				return Reply{}, err
			}
			inc, err := h.incident(ctx, req, id)
			if err != nil {
				return Reply{}, err
			}
			if inc.Pipeline == "" {
				return Reply{}, noPipelineToDiagnose(id)
			}
			if h.verdicts == nil {
				return Reply{}, errNoDiagnosis
			}
			err = h.verdicts.Post(ctx, id, inc.Pipeline, true)
			h.record(ctx, req, state.AuditEntry{Action: "diagnose again", Target: id, Outcome: outcomeOf(err), Incident: id, Pipeline: inc.Pipeline})
			if err != nil {
				return Reply{}, err
			}
			return Reply{Text: diagnosedAgain(inc.Pipeline, id)}, nil
		}})
}
