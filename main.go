// Command streamwatch is a Slack socket-mode bot for streaming-pipeline incidents: `streamwatch`
// (serve) runs the bot (run.go reads the flags, the configuration and the environment, app runs
// it), `streamwatch probe` probes a checkpoint location from the command line (probe.go), and
// `streamwatch demo` plays the seed incident against stand-ins (demo.go).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // CRON_TZ= schedules work in images without a zone database
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "streamwatch:", err)
		os.Exit(exitCode(err))
	}
}
