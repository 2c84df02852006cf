package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/state"
	"github.com/streamwatch/streamwatch/triage"
)

// diagnoser runs the triage checks of configured pipelines.
type diagnoser struct {
	cfg         *config.Config
	store       *state.Store
	kafka       *kafkaParts
	checkpoints *checkpoints
	getenv      func(string) string
}

// Diagnose runs every check of the pipeline under diagnose.timeout and judges them.
func (d *diagnoser) Diagnose(ctx context.Context, name string) (triage.Verdict, error) {
	p, ok := d.cfg.Pipeline(name)
	if !ok {
		return triage.Verdict{}, fmt.Errorf("unknown pipeline %q", name)
	}
	var c triage.Checks
	if p.Kafka.Enabled() {
		c.Lag = func(ctx context.Context) (*kafka.LagReport, error) { return d.kafka.monitor.PipelineLag(ctx, name) }
	}
	if p.Checkpoint.Location != "" {
		c.Checkpoint = func(ctx context.Context) (*spark.Report, error) { return d.checkpoints.Diagnose(ctx, name) }
		c.Probe = func(ctx context.Context) *probe.Result {
			opt := probeOptions(d.cfg, *p, d.getenv)
			opt.Write = false
			r := probe.Run(ctx, opt)
			return &r
		}
		if p.Probe.Write {
			c.LastWrite = func(ctx context.Context) *probe.Result {
				last, err := d.store.LastProbe(ctx, name)
				if err != nil || len(last.Last.Result) == 0 {
					return nil
				}
				var r probe.Result
				if json.Unmarshal(last.Last.Result, &r) != nil {
					return nil
				}
				return &r
			}
		}
	}
	if len(p.Logs.Paths) > 0 {
		c.Logs = func(ctx context.Context) (*driverlog.Report, error) {
			r, err := driverlog.Scan(ctx, driverlog.Options{Paths: p.Logs.Paths, MaxBytes: p.Logs.MaxBytes})
			return &r, err
		}
	}
	if p.DeployedConfig != "" {
		c.Drift = func(context.Context) ([]deployconf.Difference, error) {
			dep, err := deployconf.Load(p.DeployedConfig)
			if err != nil {
				return nil, err
			}
			doc := deployconf.Documented{Group: p.Kafka.Group, Topics: p.Kafka.Topics, CheckpointLocation: p.Checkpoint.Location}
			if cl, ok := d.cfg.Kafka.Clusters[p.Kafka.Cluster]; ok {
				doc.Brokers = cl.Brokers
			}
			return deployconf.Compare(doc, dep), nil
		}
	}
	timeout := d.cfg.Diagnose.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	return c.Run(ctx, name, timeout), nil
}

// Logs scans the pipeline's driver logs.
func (d *diagnoser) Logs(ctx context.Context, name string) (*driverlog.Report, error) {
	p, ok := d.cfg.Pipeline(name)
	if !ok {
		return nil, fmt.Errorf("unknown pipeline %q", name)
	}
	if len(p.Logs.Paths) == 0 {
		return nil, fmt.Errorf("pipeline %s has no logs.paths", name)
	}
	r, err := driverlog.Scan(ctx, driverlog.Options{Paths: p.Logs.Paths, MaxBytes: p.Logs.MaxBytes})
	return &r, err
}

// enrich posts a diagnosis into an incident's thread: once per incident when it opens, and
// again whenever someone asks.
func enrich(ctx context.Context, d *diagnoser, store *state.Store, log *slog.Logger, incident, pipeline string, again bool) {
	if _, ok := d.cfg.Pipeline(pipeline); !ok {
		return
	}
	once := "diagnosis"
	if again {
		once = ""
	}
	v, err := d.Diagnose(ctx, pipeline)
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
