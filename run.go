package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/streamwatch/streamwatch/app"
	"github.com/streamwatch/streamwatch/config"
)

// version is stamped at build time: -ldflags "-X main.version=…".
var version = "dev"

const usage = `usage: streamwatch <command> [flags]

commands:
  serve          run the bot (--config FILE or STREAMWATCH_CONFIG)
  check-config   validate a configuration file and list every problem
  probe PIPELINE run one checkpoint-access probe; exit 0 OK, 1 FAILED, 2 DEGRADED
  demo           play the incident streamwatch was born from, on embedded stand-ins
                 (--script: play it and exit; otherwise stay up with a command prompt)
  version        print the version

flags:
  --config FILE        configuration file
  --log-format FORMAT  json (default) or text
  --log-level LEVEL    debug, info (default), warn or error
`

// exitError carries a process exit status other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// run is the whole program: tests call it with their own arguments, environment and writers.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return &exitError{code: 2, err: errors.New("no command given")}
	}
	cmd, rest := args[1], args[2:]
	switch cmd {
	case "version", "--version":
		fmt.Fprintln(stdout, "streamwatch", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	case "demo":
		return runDemo(ctx, rest, getenv, stdout, stderr)
	case "serve", "check-config", "probe":
	default:
		fmt.Fprint(stderr, usage)
		return &exitError{code: 2, err: fmt.Errorf("unknown command %q", cmd)}
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", getenv("STREAMWATCH_CONFIG"), "configuration file")
	logFormat := fs.String("log-format", "json", "json or text")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(flagsFirst(rest)); err != nil {
		return &exitError{code: 2, err: err}
	}
	if *path == "" {
		return &exitError{code: 2, err: errors.New("no configuration: pass --config FILE or set STREAMWATCH_CONFIG")}
	}
	cfg, err := config.Load(*path)
	if cmd == "check-config" {
		if err != nil {
			fmt.Fprintf(stdout, "%s: invalid\n%v\n", *path, err)
			return &exitError{code: 1, err: fmt.Errorf("%s is invalid", *path)}
		}
		fmt.Fprintf(stdout, "%s: ok (%d pipeline%s)\n", *path, len(cfg.Pipelines), map[bool]string{true: "", false: "s"}[len(cfg.Pipelines) == 1])
		return checkEnvironment(getenv, stdout)
	}
	if err != nil {
		return fmt.Errorf("load configuration: %w", err)
	}
	if cmd == "probe" {
		return probeOnce(ctx, cfg, fs.Args(), getenv, stdout)
	}
	log, err := newLogger(stderr, *logFormat, *logLevel)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	_ = stdout
	return serve(ctx, cfg, *path, getenv, log, nil)
}

// checkEnvironment validates the secrets that are set (REDIS_URL and the others), as serve
// would read them, and says where REDIS_URL points; what is not set is not required here.
func checkEnvironment(getenv func(string) string, stdout io.Writer) error {
	sec, err := config.LoadSecrets(getenv, config.SecretNeeds{})
	if err != nil {
		fmt.Fprintf(stdout, "environment: invalid\n%v\n", err)
		return &exitError{code: 1, err: errors.New("the environment is invalid")}
	}
	if sec.Redis != nil {
		fmt.Fprintf(stdout, "%s: ok (%s)\n", config.EnvRedisURL, config.DescribeRedis(sec.Redis))
	}
	return nil
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not json or text", format)
}

// serve runs the bot until ctx ends: the secrets come from the environment, everything else
// is app's. ln, when not nil, serves the webhooks instead of http.listen (the demo opens it).
//
// SIGHUP reloads the configuration file at path: validated first, a bad file keeps the running
// configuration and logs why (reload).
func serve(ctx context.Context, cfg *config.Config, path string, getenv func(string) string, log *slog.Logger, ln net.Listener) error {
	// Before anything else: a SIGHUP during start-up must not end the process (its default).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	sec, err := config.LoadSecrets(getenv, cfg.SecretNeeds())
	if err != nil {
		if !cfg.HTTP.AllowUnauthenticatedWebhooks && getenv(config.EnvWebhookToken) == "" {
			err = fmt.Errorf("%w\n(webhooks need STREAMWATCH_WEBHOOK_TOKEN unless http.allow_unauthenticated_webhooks: true)", err)
		}
		return fmt.Errorf("environment: %w", err)
	}
	var claimAfter time.Duration
	if v := getenv("STREAMWATCH_OUTBOX_CLAIM_AFTER"); v != "" {
		if claimAfter, err = time.ParseDuration(v); err != nil || claimAfter <= 0 {
			return fmt.Errorf("environment: STREAMWATCH_OUTBOX_CLAIM_AFTER: %q is not a positive duration", v)
		}
	}
	a, err := app.New(app.Options{Config: cfg, Secrets: sec, Getenv: getenv, Log: log, Version: version, ClaimAfter: claimAfter, Listener: ln})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				reload(path, a, log)
			}
		}
	}()
	err = a.Run(ctx)
	cancel()
	wg.Wait()
	return err
}

// reload reads and validates the configuration file again and hands it to the running app; a
// file that does not load keeps the running configuration, and the log says why.
func reload(path string, a *app.App, log *slog.Logger) {
	cfg, err := config.Load(path)
	if err != nil {
		log.Error("configuration reload refused: the running configuration stays", "config", path, "err", err)
		return
	}
	applied, restart := a.Reload(cfg)
	log.Info("configuration reloaded", "config", path, "applied", applied, "at_next_restart", restart)
}

// flagsFirst lets flags follow positional arguments ("probe sms-replies --config f"), as
// people type them; the flag package stops at the first non-flag.
func flagsFirst(args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
			if !strings.Contains(a, "=") && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		rest = append(rest, a)
	}
	return append(flags, rest...)
}
