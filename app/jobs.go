package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/heartbeat"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/scheduler"
	"github.com/streamwatch/streamwatch/state"
)

// scheduleJobs adds a probe job per pipeline with a probe schedule, the health digest and the
// recovery watches.
func scheduleJobs(s *scheduler.Scheduler, cfg *config.Config, probes *pipeline.Probes, watcher *pipeline.Watcher, store *state.Store, m *metrics.Metrics, log *slog.Logger, pg *pager) error {
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
			res, err := probes.Probe(ctx, name)
			m.ProbeResults.WithLabelValues(name, string(res.Status)).Inc()
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
			d, err := probes.Digest(ctx)
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
			return store.EnqueueNotice(ctx, channel, commands.EncodeReply(commands.DigestReply(d)))
		}})
	}
	s.Add(scheduler.Job{Name: "watch", Schedule: cron.Every(pipeline.WatchEvery), Run: func(ctx context.Context, _ time.Time, _ int) error {
		return watcher.Tick(ctx)
	}})
	// Escalation: once per tick across replicas; the state marks each incident escalated in
	// the same step, so that a restart or a second replica never calls twice.
	if e := cfg.Slack.Escalation; e.Enabled() {
		esc := state.Escalation{Levels: []state.EscalationLevel{{After: e.After, Mention: e.Mention}},
			Severities: e.SeverityLevels(), AckTimeout: e.AckTimeout}
		every := e.After
		for _, l := range e.Levels {
			esc.Levels = append(esc.Levels, state.EscalationLevel{After: l.After, Mention: l.Mention, Repeat: l.Repeat})
			if l.Repeat > 0 {
				every = min(every, l.Repeat)
			}
		}
		if e.AckTimeout > 0 {
			every = min(every, e.AckTimeout)
		}
		s.Add(scheduler.Job{Name: "escalate", Schedule: cron.Every(min(max(every/4, time.Second), 30*time.Second)),
			Run: func(ctx context.Context, _ time.Time, _ int) error {
				done, err := store.Escalate(ctx, esc)
				for _, x := range done {
					log.Info("escalated an unacknowledged incident", "incident", x.Incident, "level", x.Level, "repeat", x.Repeat)
				}
				// The escalation webhook rings a phone too: after the state marked them
				// escalated, so that another tick never triggers them again.
				pg.Escalated(ctx, store, done)
				return err
			}})
	}
	return nil
}

// scheduleHeartbeats checks the expected alerts (alerts.heartbeats) once per tick in the whole
// deployment.
func scheduleHeartbeats(s *scheduler.Scheduler, beats *heartbeat.Switch) {
	if beats == nil {
		return
	}
	s.Add(scheduler.Job{Name: "heartbeats", Schedule: cron.Every(beats.Every()),
		Run: func(ctx context.Context, _ time.Time, _ int) error { return beats.Check(ctx) }})
}

// scheduleSampler takes a sampling round of every pipeline once per kafka.sample_interval in
// the whole deployment, judges it (detection, publish_group) and keeps the lag gauge current.
// The round and what detection does with it (its records, its Slack messages) get two
// intervals together.
func scheduleSampler(s *scheduler.Scheduler, detector *pipeline.Detector, interval time.Duration, m *metrics.Metrics) {
	if detector == nil {
		return
	}
	s.Add(scheduler.Job{Name: "kafka-sample", Schedule: cron.Every(interval), Run: func(ctx context.Context, tick time.Time, _ int) error {
		ctx, cancel := context.WithTimeout(ctx, 2*interval)
		defer cancel()
		round, err := detector.Round(ctx, tick)
		if round != nil {
			for _, p := range round.Pipelines {
				if p.Err != nil {
					continue
				}
				var lag int64
				for _, pl := range p.Partitions {
					if pl.Lag > 0 {
						lag += pl.Lag
					}
				}
				m.Lag.WithLabelValues(p.Pipeline).Set(float64(lag))
			}
		}
		return err
	}})
}
