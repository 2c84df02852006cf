package commands

import (
	"context"

	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// Health is what the probe and status commands need.
type Health interface {
	Names() []string
	Probe(ctx context.Context, pipeline string) (probe.Result, error)
	History(ctx context.Context, pipeline string, n int64) ([]state.ProbeRecord, error)
	Digest(ctx context.Context) (pipeline.Digest, error)
}

// RegisterHealth adds `probe`, `probe history` and `status`.
func (h *Handler) RegisterHealth(hs Health) {
	h.Register(&Command{Path: "probe", Args: "PIPELINE|all", Summary: "probe checkpoint access now and show every step",
		Min: 1, Max: 1, Example: "probe sms-replies", Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			names := []string{args[0]}
			if args[0] == "all" {
				names = hs.Names()
			}
			results := make([]probe.Result, 0, len(names))
			for _, n := range names {
				res, err := hs.Probe(ctx, n)
				if err != nil && res.Status == "" {
					return Reply{}, err
				}
				results = append(results, res)
			}
			return probeReply(names, results), nil
		}})
	h.Register(&Command{Path: "probe history", Args: "PIPELINE", Summary: "recent probe results",
		Min: 1, Max: 1, Example: "probe history sms-replies", Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			recs, err := hs.History(ctx, args[0], 20)
			if err != nil {
				return Reply{}, err
			}
			return probeHistoryReply(args[0], recs), nil
		}})
	h.Register(&Command{Path: "status", Summary: "pipeline health: probes, last commit, lag", Max: 0, Example: "status",
		Run: func(ctx context.Context, _ Request, _ []string) (Reply, error) {
			d, err := hs.Digest(ctx)
			if err != nil {
				return Reply{}, err
			}
			r := statusReply(d)
			if s := h.silencesSection(ctx); s != nil {
				r.Sections = append(r.Sections, *s)
			}
			return r, nil
		}})
}
