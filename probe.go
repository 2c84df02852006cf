package main

import (
	"context"
	"fmt"
	"io"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/pipeline"
)

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
	for _, l := range commands.ProbeLines(res) {
		fmt.Fprintln(stdout, l)
	}
	if code := res.ExitCode(); code != 0 {
		return &exitError{code: code, err: fmt.Errorf("probe of %s: %s", p.Name, res.Status)}
	}
	return nil
}
