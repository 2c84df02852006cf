package app

import (
	"context"
	"log/slog"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/state"
)

// chartedProbes is the probes' store that also keeps every probe result for the charts.
type chartedProbes struct {
	*state.Store
	progress *state.Progress
	log      *slog.Logger
}

func (c chartedProbes) RecordProbe(ctx context.Context, pipeline string, r state.ProbeRecord) (string, error) {
	prev, err := c.Store.RecordProbe(ctx, pipeline, r)
	if err == nil {
		mark := state.ProbeMark{At: r.At, OK: r.Status != string(probe.StatusFailed)}
		if err := c.progress.RecordProbe(ctx, pipeline, mark); err != nil {
			c.log.Warn("charts: keep a probe result", "pipeline", pipeline, "err", err)
		}
	}
	return prev, err
}

// postChart queues the pipeline's chart into the incident's thread in the background (once per
// once flag; "" posts every time it is asked).
func (a *App) postChart(handler *commands.Handler, incident, pipeline, once string) {
	a.diagnoses.Go(func(ctx context.Context) {
		if err := handler.PostChart(ctx, incident, pipeline, once); err != nil {
			a.log.Warn("chart", "incident", incident, "pipeline", pipeline, "err", err)
		}
	})
}
