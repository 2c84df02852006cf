//go:build !nodemo

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/internal/demo"
)

// demoStdin is where the demo's prompt reads commands; tests replace it.
var demoStdin io.Reader = os.Stdin

// runDemo is `streamwatch demo`: the real bot (serve) on embedded stand-ins, playing the seed
// incident; see internal/demo. The release build (-tags nodemo, demo_off.go) leaves it out, and
// with it the stand-ins.
func runDemo(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.Bool("script", false, "play the incident and exit, without a prompt")
	listen := fs.String("listen", "", "the webhook server's address (default: a port on 127.0.0.1 the kernel picks)")
	out := fs.String("out", ".", "the folder the charts posted to Slack are written to, to open them")
	if err := fs.Parse(args); err != nil {
		return &exitError{code: 2, err: err}
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("demo takes no arguments, got %q", fs.Args())}
	}
	return demo.Run(ctx, demo.Options{
		Serve: func(ctx context.Context, path string, ln net.Listener, getenv func(string) string, logs io.Writer) error {
			cfg, err := config.Load(path)
			if err != nil {
				return fmt.Errorf("load the generated configuration: %w", err)
			}
			return serve(ctx, cfg, path, getenv, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), ln)
		},
		Stdout: stdout, Stderr: stderr, Stdin: demoStdin, Script: *script, Listen: *listen, Out: *out,
	})
}
