package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/metrics"
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
	for _, name := range sortedClusterNames(cfg) {
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

func sortedClusterNames(cfg *config.Config) []string {
	return slices.Sorted(maps.Keys(cfg.Kafka.Clusters))
}

// scheduleSampler samples every pipeline's group once per kafka.sample_interval in the whole
// deployment, and keeps the lag gauge current.
func (k *kafkaParts) scheduleSampler(s *scheduler.Scheduler, interval time.Duration, metrics *metrics.Metrics, log *slog.Logger) error {
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
				metrics.Lag.WithLabelValues(p.Name).Set(float64(lag[len(lag)-1]))
			}
		}
		return err
	}})
	return nil
}

// checkpoints diagnoses pipelines' checkpoints, with the brokers' log ends when the pipeline
// names a Kafka cluster.
type checkpoints struct {
	cfg    *config.Config
	kafka  *kafkaParts
	getenv func(string) string
}

func (c *checkpoints) Diagnose(ctx context.Context, name string) (*spark.Report, error) {
	p, ok := c.cfg.Pipeline(name)
	if !ok {
		return nil, fmt.Errorf("unknown pipeline %q", name)
	}
	if p.Checkpoint.Location == "" {
		return nil, fmt.Errorf("pipeline %s has no checkpoint.location", name)
	}
	st, err := storage.Open(p.Checkpoint.Location, storageOptions(c.cfg, c.getenv))
	if err != nil {
		return nil, err
	}
	opts := spark.Options{StaleAfter: p.Checkpoint.StaleAfter}
	if p.Kafka.Enabled() && c.kafka != nil {
		if cl, err := c.kafka.clusters.Cluster(p.Kafka.Cluster); err == nil {
			kctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if off, err := cl.Offsets(kctx, p.Kafka.Group, p.Kafka.Topics...); err == nil {
				opts.LogEndOffsets = spark.KafkaOffsets{}
				for _, pl := range off.Partitions {
					if pl.LogEnd < 0 {
						continue
					}
					if opts.LogEndOffsets[pl.Topic] == nil {
						opts.LogEndOffsets[pl.Topic] = map[int32]int64{}
					}
					opts.LogEndOffsets[pl.Topic][pl.Partition] = pl.LogEnd
				}
			}
			cancel()
		}
	}
	return spark.Diagnose(ctx, st, opts)
}

func storageOptions(cfg *config.Config, getenv func(string) string) storage.Options {
	return storage.Options{Getenv: getenv, S3: storage.S3Options{
		Endpoint: cfg.Storage.S3.Endpoint, Region: cfg.Storage.S3.Region, PathStyle: cfg.Storage.S3.PathStyle}}
}
