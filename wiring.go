package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/scheduler"
	"github.com/streamwatch/streamwatch/state"
)

// kafkaParts are the Kafka clients (created once, connecting lazily: a cluster that is down
// does not stop start-up), the monitor the commands use and its Redis sample store.
type kafkaParts struct {
	clusters *kafka.Clusters
	monitor  *kafka.Monitor
	samples  *state.LagSamples
}

func newKafka(cfg *config.Config, store *state.Store, getenv func(string) string, log *slog.Logger) (*kafkaParts, error) {
	var opts []kafka.ClusterOptions
	for _, name := range slices.Sorted(maps.Keys(cfg.Kafka.Clusters)) {
		c := cfg.Kafka.Clusters[name]
		opts = append(opts, kafka.ClusterOptions{Name: name, Brokers: c.Brokers, Version: c.Version, ClientID: c.ClientID,
			Timeout: c.Timeout,
			TLS:     kafka.TLSOptions{Enabled: c.TLS.Enabled, CAFile: c.TLS.CAFile, CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile},
			SASL:    kafka.SASLOptions{Mechanism: c.SASL.Mechanism, Username: c.SASL.Username, PasswordEnv: c.SASL.PasswordEnv}})
	}
	clusters, err := kafka.NewClusters(opts, kafka.ClustersOptions{Getenv: getenv, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	var pipes []kafka.Pipeline
	for _, p := range cfg.Pipelines {
		if p.Kafka.Enabled() {
			pipes = append(pipes, kafka.Pipeline{Name: p.Name, Cluster: p.Kafka.Cluster, Topics: p.Kafka.Topics,
				Group: p.Kafka.Group, StallAfter: p.Kafka.StallAfter, AllowedLag: p.Kafka.AllowedLag})
		}
	}
	ls := state.NewLagSamples(store, pipes)
	mon, err := kafka.NewMonitor(clusters, ls, pipes, kafka.MonitorOptions{})
	if err != nil {
		clusters.Close()
		return nil, fmt.Errorf("kafka: %w", err)
	}
	return &kafkaParts{clusters: clusters, monitor: mon, samples: ls}, nil
}

// scheduleSampler samples every pipeline's group once per kafka.sample_interval in the whole
// deployment, and keeps the lag gauge current.
func (k *kafkaParts) scheduleSampler(s *scheduler.Scheduler, interval time.Duration, m *metrics.Metrics, log *slog.Logger) error {
	if len(k.monitor.Pipelines()) == 0 {
		return nil
	}
	sampler, err := kafka.NewSampler(k.monitor, kafka.SamplerOptions{Interval: interval, Logger: log})
	if err != nil {
		return err
	}
	s.Add(scheduler.Job{Name: "kafka-sample", Schedule: cron.Every(interval), Run: func(ctx context.Context, _ time.Time, _ int) error {
		ctx, cancel := context.WithTimeout(ctx, interval)
		defer cancel()
		err := sampler.SampleOnce(ctx)
		for _, p := range k.monitor.Pipelines() {
			if lag, lerr := k.samples.RecentLag(ctx, p.Name); lerr == nil && len(lag) > 0 {
				m.Lag.WithLabelValues(p.Name).Set(float64(lag[len(lag)-1]))
			}
		}
		return err
	}})
	return nil
}

// scheduleJobs adds a probe job per pipeline with a probe schedule and the health digest.
func scheduleJobs(s *scheduler.Scheduler, cfg *config.Config, hs *pipeline.Probes, store *state.Store, m *metrics.Metrics, log *slog.Logger) error {
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

// enrich posts a diagnosis into an incident's thread: once per incident when it opens, and
// again whenever someone asks.
func enrich(ctx context.Context, d *pipeline.Diagnoser, store *state.Store, log *slog.Logger, incident, name string, again bool) {
	if _, ok := d.Config.Pipeline(name); !ok {
		return
	}
	once := "diagnosis"
	if again {
		once = ""
	}
	v, err := d.Diagnose(ctx, name)
	if err != nil {
		log.Warn("diagnosis for incident", "incident", incident, "err", err)
		return
	}
	r := commands.VerdictReply(v)
	r.Text = "Automatic diagnosis — " + r.Text
	if _, err := store.Note(ctx, incident, "note", "streamwatch", bot.ReplyText(r), once); err != nil {
		log.Warn("post diagnosis", "incident", incident, "err", err)
	}
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
	res := probe.Run(ctx, pipeline.ProbeOptions(cfg, *p, getenv))
	for _, l := range res.Lines() {
		fmt.Fprintln(stdout, l)
	}
	if code := res.ExitCode(); code != 0 {
		return &exitError{code: code, err: fmt.Errorf("probe of %s: %s", p.Name, res.Status)}
	}
	return nil
}
