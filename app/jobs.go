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
	"github.com/streamwatch/streamwatch/integrations/kafka"
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
				lag, _ := kafka.SumLag(p.Partitions)
				m.Lag.WithLabelValues(p.Pipeline).Set(float64(lag))
			}
		}
		return err
	}})
}

// scheduleHousekeeping schedules the incident engine's housekeeping, once per tick in the whole
// deployment: every `every` (app.Options.MaintainEvery) the floods and silences whose time is
// up end, the due coalesced updates move into the outbox (after the silences, so that what
// waited for one goes out at once) and the due incidents auto-resolve; every few seconds a
// slice of the sweep that gives old closed incidents their TTL. Each replica reads the gauges
// for itself.
func scheduleHousekeeping(s *scheduler.Scheduler, store *state.Store, m *metrics.Metrics, log *slog.Logger, now func() time.Time, every time.Duration) {
	s.Add(scheduler.Job{Name: "maintain", Schedule: cron.ConstantDelaySchedule{Delay: every},
		Run: func(ctx context.Context, _ time.Time, _ int) error { return maintain(ctx, store, log) }})
	swept := false
	s.Add(scheduler.Job{Name: "sweep", Schedule: cron.Every(sweepEvery), Run: func(ctx context.Context, _ time.Time, _ int) error {
		if swept {
			return nil
		}
		var err error
		swept, err = store.Sweep(ctx)
		return err
	}})
	g := gauges{m: m, now: now, flooded: map[string]bool{}}
	s.Add(scheduler.Job{Name: "gauges", Schedule: cron.ConstantDelaySchedule{Delay: gaugesEvery}, EveryReplica: true,
		Run: func(ctx context.Context, _ time.Time, _ int) error {
			stats, err := store.Stats(ctx)
			if err == nil {
				g.set(stats)
			}
			return err
		}})
}

// sweepEvery paces the sweep: a slice of the keyspace every few seconds is no load, and the
// sweep runs once per database. gaugesEvery is how often each replica reads the gauges.
const (
	sweepEvery  = 5 * time.Second
	gaugesEvery = 500 * time.Millisecond
)

// maintain ends floods and silences whose time is up, moves due coalesced updates into the
// outbox and auto-resolves.
func maintain(ctx context.Context, store *state.Store, log *slog.Logger) error {
	if chans, err := store.EndFloods(ctx); err != nil {
		return err
	} else if len(chans) > 0 {
		log.Info("alert flood over: new alerts open their own incidents again", "channels", chans)
	}
	if ids, err := store.ExpireSilences(ctx); err != nil {
		return err
	} else if len(ids) > 0 {
		log.Info("silences ended", "silences", ids)
	}
	if _, err := store.Pump(ctx); err != nil {
		return err
	}
	if ids, err := store.AutoResolveDue(ctx); err != nil {
		return err
	} else if len(ids) > 0 {
		log.Info("auto-resolved", "incidents", ids)
	}
	return nil
}

// gauges publishes the state's gauges on one replica.
type gauges struct {
	m   *metrics.Metrics
	now func() time.Time
	// flooded are the channels whose flood gauge is set (to 1 or back to 0).
	flooded map[string]bool
}

func (g *gauges) set(stats state.Stats) {
	m := g.m
	m.OutboxDepth.Set(float64(stats.OutboxDepth))
	m.IncidentsOpen.Set(float64(stats.OpenIncidents))
	age := 0.0
	if !stats.OutboxOldest.IsZero() {
		age = max(g.now().Sub(stats.OutboxOldest).Seconds(), 0)
	}
	m.OutboxOldest.Set(age)
	now := map[string]bool{}
	for _, ch := range stats.Floods {
		now[ch] = true
	}
	for ch := range g.flooded {
		if !now[ch] {
			m.Flood.WithLabelValues(ch).Set(0)
		}
	}
	for ch := range now {
		m.Flood.WithLabelValues(ch).Set(1)
		g.flooded[ch] = true
	}
}

// scheduleDiagnoses hands the incidents waiting for their automatic diagnosis to verdicts,
// once per tick in the whole deployment (every `every`): as many as there are idle diagnosis
// slots on the replica that holds the tick. With charts on, the chart of the pipeline follows
// each verdict.
func (a *App) scheduleDiagnoses(verdicts *pipeline.Verdicts, handler *commands.Handler, every time.Duration) {
	charts := a.opt.Config.Charts.Enabled
	a.sched.Add(scheduler.Job{Name: "diagnose", Schedule: cron.ConstantDelaySchedule{Delay: every},
		Run: func(ctx context.Context, _ time.Time, _ int) error {
			due, err := verdicts.Due(ctx, a.diagnoses.idle())
			for _, w := range due {
				a.diagnoses.Go(func(ctx context.Context) {
					ctx, cancel := context.WithTimeout(ctx, a.opt.CommandTimeout)
					defer cancel()
					if err := verdicts.Automatic(ctx, w); err != nil {
						a.log.Warn("automatic diagnosis", "incident", w.Incident, "pipeline", w.Pipeline, "err", err)
					}
					if charts {
						if err := handler.PostChart(ctx, w.Incident, w.Pipeline, "chart"); err != nil {
							a.log.Warn("chart", "incident", w.Incident, "pipeline", w.Pipeline, "err", err)
						}
					}
				})
			}
			return err
		}})
}
