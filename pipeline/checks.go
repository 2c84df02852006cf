package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
)

// Checks are the diagnostics of one pipeline; a nil check does not apply to it.
type Checks struct {
	Lag        func(ctx context.Context) (*kafka.LagReport, error)
	Checkpoint func(ctx context.Context) (CheckpointReading, error)
	Probe      func(ctx context.Context) *probe.Result // read-only
	LastWrite  func(ctx context.Context) *probe.Result // the newest stored probe with a write test
	Logs       func(ctx context.Context) (*driverlog.Report, error)
	Drift      func(ctx context.Context) (*deployconf.Deployed, []deployconf.Difference, error)
	// Contract is what the configuration documents about the pipeline.
	Contract Contract
	// Running, when set, counts the checks' goroutines: Run returns at its deadline, and a
	// check that ignores its context's end is waited for by whoever waits on Running.
	Running *sync.WaitGroup
	// MismatchWords words the lag report's wrong-group finding (Inputs.MismatchWords).
	MismatchWords func(*kafka.LagReport) string
}

// Run runs every check concurrently under one deadline and judges what finished; the checks
// still running at the deadline are named in the verdict.
func (c Checks) Run(ctx context.Context, pipeline string, timeout time.Duration) Verdict {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var mu sync.Mutex
	in := Inputs{Pipeline: pipeline, Contract: c.Contract, MismatchWords: c.MismatchWords}
	pending := map[string]bool{}
	done := make(chan struct{}, 8)
	running := c.Running
	if running == nil {
		running = &sync.WaitGroup{}
	}
	start := func(name string, f func()) {
		pending[name] = true
		running.Go(func() {
			f()
			mu.Lock()
			// A check that returns only because the deadline cut it did not finish.
			if ctx.Err() == nil {
				delete(pending, name)
			}
			mu.Unlock()
			done <- struct{}{}
		})
	}
	mu.Lock()
	if c.Lag != nil {
		start(CheckLag, func() {
			r, err := c.Lag(ctx)
			mu.Lock()
			in.Lag, in.LagErr = r, err
			mu.Unlock()
		})
	}
	if c.Checkpoint != nil {
		start(CheckCheckpoint, func() {
			r, err := c.Checkpoint(ctx)
			mu.Lock()
			in.Checkpoint, in.CheckpointErr, in.Brokers, in.BrokersErr = r.Report, err, r.Brokers, r.BrokersErr
			mu.Unlock()
		})
	}
	if c.Probe != nil {
		start(CheckProbe, func() {
			r := c.Probe(ctx)
			w := (*probe.Result)(nil)
			if c.LastWrite != nil {
				w = c.LastWrite(ctx)
			}
			mu.Lock()
			in.Probe, in.LastWrite = r, w
			mu.Unlock()
		})
	}
	if c.Logs != nil {
		start(CheckLogs, func() {
			r, err := c.Logs(ctx)
			mu.Lock()
			in.Logs, in.LogsErr = r, err
			mu.Unlock()
		})
	}
	if c.Drift != nil {
		start(CheckDrift, func() {
			dep, r, err := c.Drift(ctx)
			mu.Lock()
			in.Deployed, in.Drift, in.DriftErr = dep, r, err
			mu.Unlock()
		})
	}
	n := len(pending)
	mu.Unlock()
	for i := 0; i < n; i++ {
		select {
		case <-done:
		case <-ctx.Done():
			i = n
		}
	}
	mu.Lock()
	defer mu.Unlock()
	snapshot := in
	for _, name := range []string{CheckLag, CheckCheckpoint, CheckProbe, CheckLogs, CheckDrift} {
		if pending[name] {
			snapshot.Unfinished = append(snapshot.Unfinished, name)
		}
	}
	return Judge(snapshot)
}
