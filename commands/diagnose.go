package commands

import (
	"context"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/pipeline"
)

// Diagnoser runs triage and the driver-log scan.
type Diagnoser interface {
	Diagnose(ctx context.Context, pipeline string) (pipeline.Verdict, error)
	Logs(ctx context.Context, pipeline string) (*driverlog.Report, error)
}

// RegisterDiagnose adds `diagnose` and `logs`.
func (h *Handler) RegisterDiagnose(d Diagnoser) {
	h.Register(&Command{Path: "diagnose", Args: "PIPELINE", Summary: "every check at once: probable causes ranked, with evidence and next steps",
		Min: 1, Max: 1, Example: "diagnose sms-replies", Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			v, err := d.Diagnose(ctx, args[0])
			if err != nil {
				return Reply{}, err
			}
			return VerdictReply(v), nil
		}})
	h.Register(&Command{Path: "logs", Args: "PIPELINE", Summary: "checkpoint trouble in the driver logs (tail only, secrets masked)",
		Min: 1, Max: 1, Example: "logs sms-replies", Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			r, err := d.Logs(ctx, args[0])
			if r == nil {
				return Reply{}, err
			}
			text := "No checkpoint trouble in the logs of " + args[0] + "."
			if len(r.Matches) > 0 {
				text = "Checkpoint trouble in the logs of " + args[0] + ": " + r.Matches[0].Signature.Title
			}
			return Reply{Text: text, Sections: []Section{{Lines: logLines(*r), Pre: true}}}, nil
		}})
}

// VerdictReply renders a triage verdict.
func VerdictReply(v pipeline.Verdict) Reply {
	return Reply{Text: v.Summary(), Sections: []Section{{Lines: v.Lines(), Pre: true}}}
}
