// Command streamwatch is a Slack socket-mode bot for streaming-pipeline incidents.
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
