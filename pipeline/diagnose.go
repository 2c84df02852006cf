package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/state"
)

// LagMonitor judges a pipeline's consumer group (kafka.Monitor).
type LagMonitor interface {
	PipelineLag(ctx context.Context, name string) (*kafka.LagReport, error)
}

// LastProbes reads a pipeline's newest stored probe (state.Store).
type LastProbes interface {
	LastProbe(ctx context.Context, pipeline string) (state.ProbeStatus, error)
}

// Diagnoser runs every check of a configured pipeline and judges them.
type Diagnoser struct {
	Config      *config.Config
	Getenv      func(string) string
	Lag         LagMonitor // nil: no pipeline has Kafka
	Checkpoints *Checkpoints
	Probes      LastProbes
	// MismatchWords words the lag report's wrong-group finding as the verdict quotes it
	// (commands.MismatchEvidence: text is made in commands); nil quotes its codes and names.
	MismatchWords func(*kafka.LagReport) string

	running sync.WaitGroup // checks still running past their deadline
}

// Wait waits for the checks that were still running when their diagnosis returned.
func (d *Diagnoser) Wait() { d.running.Wait() }

// defaultDiagnoseTimeout applies when diagnose.timeout is not set.
const defaultDiagnoseTimeout = 15 * time.Second

// Diagnose runs every check of the pipeline under diagnose.timeout and judges them.
func (d *Diagnoser) Diagnose(ctx context.Context, name string) (Verdict, error) {
	p, ok := d.Config.Pipeline(name)
	if !ok {
		return Verdict{}, fmt.Errorf("unknown pipeline %q", name)
	}
	c := Checks{Running: &d.running, Contract: ContractOf(d.Config, p), MismatchWords: d.MismatchWords}
	if p.Kafka.Enabled() && d.Lag != nil {
		c.Lag = func(ctx context.Context) (*kafka.LagReport, error) { return d.Lag.PipelineLag(ctx, name) }
	}
	if p.Checkpoint.Location != "" {
		c.Checkpoint = func(ctx context.Context) (CheckpointReading, error) { return d.Checkpoints.Read(ctx, name) }
		c.Probe = func(ctx context.Context) *probe.Result {
			opt := ProbeOptions(d.Config, *p, d.Getenv)
			opt.Write = false
			r := probe.Run(ctx, opt)
			return &r
		}
		if p.Probe.Write {
			c.LastWrite = func(ctx context.Context) *probe.Result { return d.lastProbe(ctx, name) }
		}
	}
	if p.Logs.Configured() {
		c.Logs = func(ctx context.Context) (*driverlog.Report, error) {
			r, err := driverlog.Scan(ctx, LogOptions(d.Config, *p, d.Getenv))
			return &r, err
		}
	}
	if p.DeployedConfig != "" {
		c.Drift = func(context.Context) (*deployconf.Deployed, []deployconf.Difference, error) { return d.drift(p) }
	}
	timeout := d.Config.Diagnose.Timeout
	if timeout <= 0 {
		timeout = defaultDiagnoseTimeout
	}
	v := c.Run(ctx, name, timeout)
	v.Description = p.Description
	return v, nil
}

// lastProbe is the newest stored probe result of the pipeline, nil when none can be read.
func (d *Diagnoser) lastProbe(ctx context.Context, name string) *probe.Result {
	if d.Probes == nil {
		return nil
	}
	last, err := d.Probes.LastProbe(ctx, name)
	if err != nil || len(last.Last.Result) == 0 {
		return nil
	}
	var r probe.Result
	if json.Unmarshal(last.Last.Result, &r) != nil {
		return nil
	}
	return &r
}

// drift compares the deployed job's configuration with what the pipeline documents.
func (d *Diagnoser) drift(p *config.Pipeline) (*deployconf.Deployed, []deployconf.Difference, error) {
	dep, err := deployconf.Load(p.DeployedConfig)
	if err != nil {
		return nil, nil, err
	}
	doc := deployconf.Documented{Group: p.Kafka.Group, Topics: p.Kafka.Topics, CheckpointLocation: p.Checkpoint.Location}
	if cl, ok := d.Config.Kafka.Clusters[p.Kafka.Cluster]; ok {
		doc.Brokers = cl.Brokers
	}
	return &dep, deployconf.Compare(doc, dep), nil
}

// Logs scans the pipeline's driver logs.
func (d *Diagnoser) Logs(ctx context.Context, name string) (*driverlog.Report, error) {
	p, ok := d.Config.Pipeline(name)
	if !ok {
		return nil, fmt.Errorf("unknown pipeline %q", name)
	}
	if !p.Logs.Configured() {
		return nil, fmt.Errorf("pipeline %s has no logs.paths or logs.kubernetes", name)
	}
	r, err := driverlog.Scan(ctx, LogOptions(d.Config, *p, d.Getenv))
	return &r, err
}
