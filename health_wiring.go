package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/health"
	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/scheduler"
	"github.com/streamwatch/streamwatch/state"
)

// healthService describes every pipeline with a checkpoint to the probes.
func healthService(cfg *config.Config, store *state.Store, getenv func(string) string) *health.Service {
	hs := &health.Service{Store: store, Timeout: cfg.Diagnose.Timeout}
	for _, p := range cfg.Pipelines {
		if p.Checkpoint.Location == "" {
			continue
		}
		hs.Pipelines = append(hs.Pipelines, health.Pipeline{
			Name: p.Name, Channel: p.Channel, OpenIncident: p.Probe.OpenIncident, Scheduled: p.Probe.Enabled(),
			Probe: probeOptions(cfg, p, getenv),
		})
	}
	return hs
}

func probeOptions(cfg *config.Config, p config.Pipeline, getenv func(string) string) probe.Options {
	return probe.Options{
		Pipeline: p.Name, Location: p.Checkpoint.Location, Path: p.Probe.Path, Write: p.Probe.Write,
		StaleAfter: p.Checkpoint.StaleAfter, SlowAfter: p.Probe.SlowAfter,
		Storage: storageOptions(cfg, getenv), JobUser: jobUser(p.Checkpoint.JobUser),
	}
}

// jobUser is pipelines[].checkpoint.job_user for the access check; nil when unset (the check
// then judges streamwatch's own uid and groups).
func jobUser(ju config.JobUser) *access.User {
	if !ju.Set {
		return nil
	}
	u := &access.User{UID: int(ju.UID), Whose: "job_user"}
	for _, g := range ju.GIDs {
		u.GIDs = append(u.GIDs, int(g))
	}
	return u
}

// scheduleJobs adds a probe job per pipeline with a probe schedule and the health digest.
func scheduleJobs(s *scheduler.Scheduler, cfg *config.Config, hs *health.Service, store *state.Store, metrics *metrics.Metrics, log *slog.Logger) error {
	var jobs []string
	for _, p := range cfg.Pipelines {
		if !p.Probe.Enabled() || p.Checkpoint.Location == "" {
			continue
		}
		sched, err := config.ParseSchedule(p.Probe.Schedule)
		if err != nil {
			return fmt.Errorf("pipelines %s probe.schedule %q: %w", p.Name, p.Probe.Schedule, err)
		}
		name := p.Name
		jobs = append(jobs, "probe:"+name)
		s.Add(scheduler.Job{Name: "probe:" + name, Schedule: sched, Run: func(ctx context.Context, _ time.Time, _ int) error {
			res, err := hs.Probe(ctx, name)
			metrics.ProbeResults.WithLabelValues(name, string(res.Status)).Inc()
			log.Info("probe", "pipeline", name, "status", res.Status, "class", res.Class, "took", res.Took)
			return err
		}})
	}
	if spec := cfg.Health.DigestSchedule; spec != "" && cfg.Slack.HealthChannel != "" {
		sched, err := config.ParseSchedule(spec)
		if err != nil {
			return fmt.Errorf("health.digest_schedule %q: %w", spec, err)
		}
		channel := cfg.Slack.HealthChannel
		s.Add(scheduler.Job{Name: "digest", Schedule: sched, Run: func(ctx context.Context, _ time.Time, missed int) error {
			d, err := hs.Digest(ctx)
			if err != nil {
				return err
			}
			d.Missed = int64(missed)
			for _, j := range jobs {
				n, err := store.TakeMissed(ctx, j)
				if err == nil {
					d.Missed += n
				}
			}
			_, _ = store.TakeMissed(ctx, "digest")
			return store.EnqueueNotice(ctx, channel, d.Text())
		}})
	}
	return nil
}

// probeOnce is `streamwatch probe PIPELINE`: one probe, printed, without Redis or Slack; the
// exit status says OK (0), FAILED (1) or DEGRADED (2) for cron jobs and Kubernetes probes.
func probeOnce(ctx context.Context, cfg *config.Config, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) != 1 {
		return &exitError{code: 2, err: fmt.Errorf("usage: streamwatch probe --config FILE PIPELINE")}
	}
	p, ok := cfg.Pipeline(args[0])
	if !ok || p.Checkpoint.Location == "" {
		return &exitError{code: 2, err: fmt.Errorf("pipeline %q has no checkpoint.location in the configuration", args[0])}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Diagnose.Timeout)
	defer cancel()
	res := probe.Run(ctx, probeOptions(cfg, *p, getenv))
	for _, l := range res.Lines() {
		fmt.Fprintln(stdout, l)
	}
	if code := res.ExitCode(); code != 0 {
		return &exitError{code: code, err: fmt.Errorf("probe of %s: %s", p.Name, res.Status)}
	}
	return nil
}
