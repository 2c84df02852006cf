package app

import (
	"context"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// progressSource reads what /metrics reports of every pipeline: detection's last observation
// (stored in Redis by whichever replica ran the round) and the newest probe, so that every
// replica reports the same numbers.
func progressSource(cfg *config.Config, detector *pipeline.Detector, store *state.Store) metrics.ProgressSource {
	return func(ctx context.Context) ([]metrics.Progress, error) {
		var observations map[string]pipeline.Observation
		if detector != nil {
			var err error
			if observations, err = detector.Observations(ctx); err != nil {
				return nil, err
			}
		}
		var out []metrics.Progress
		for _, p := range cfg.Pipelines {
			pr := metrics.Progress{Pipeline: p.Name}
			obs, observed := observations[p.Name]
			if observed {
				fillProgress(&pr, obs)
			}
			probed := false
			if p.Checkpoint.Location != "" {
				last, err := store.LastProbe(ctx, p.Name)
				if err != nil {
					return nil, err
				}
				switch probe.Status(last.Status) {
				case probe.StatusOK:
					pr.ProbeStatus, pr.ProbeStatusKnown = 0, true
				case probe.StatusDegraded:
					pr.ProbeStatus, pr.ProbeStatusKnown = 1, true
				case probe.StatusFailed:
					pr.ProbeStatus, pr.ProbeStatusKnown = 2, true
				}
				probed = pr.ProbeStatusKnown
			}
			if observed || probed {
				out = append(out, pr)
			}
		}
		return out, nil
	}
}

func fillProgress(pr *metrics.Progress, obs pipeline.Observation) {
	pr.ObservedAt = obs.At
	if obs.Waiting >= 0 {
		pr.CheckpointWaiting, pr.CheckpointWaitingKnown = float64(obs.Waiting), true
	}
	if obs.GroupWaiting >= 0 {
		pr.GroupWaiting, pr.GroupWaitingKnown = float64(obs.GroupWaiting), true
	}
	if obs.OldestKnown {
		pr.OldestSeconds, pr.OldestKnown = obs.Oldest.Seconds(), true
	}
	if obs.CommitAge >= 0 && obs.Batch >= 0 {
		pr.CommitAgeSeconds, pr.CommitAgeKnown = obs.CommitAge.Seconds(), true
	}
	if obs.GroupStatus != "" {
		pr.LagStatus, pr.LagStatusKnown = float64(obs.GroupStatusN), true
	}
	pr.Signals = map[string]bool{}
	for _, s := range pipeline.Signals {
		pr.Signals[string(s)] = false
	}
	for _, s := range obs.Active {
		pr.Signals[string(s)] = true
	}
	for _, pp := range obs.Partitions {
		mp := metrics.PartitionProgress{Topic: pp.Topic, Partition: pp.Partition}
		if pp.Waiting >= 0 {
			mp.CheckpointWaiting, mp.CheckpointWaitingKnown = float64(pp.Waiting), true
		}
		if pp.GroupWaiting >= 0 {
			mp.GroupWaiting, mp.GroupWaitingKnown = float64(pp.GroupWaiting), true
		}
		if pp.OldestKnown {
			mp.OldestSeconds, mp.OldestKnown = pp.Oldest.Seconds(), true
		}
		pr.Partitions = append(pr.Partitions, mp)
	}
}
