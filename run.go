package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/robfig/cron/v3"
	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/state"
)

// watchEvery is how often recovery watches look for progress.
const watchEvery = 5 * time.Second

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
		return nil
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
	return serve(ctx, cfg, getenv, log)
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

// serve wires every part together and runs until ctx ends, then shuts down in order: stop
// taking webhooks, let in-flight requests finish, stop Slack and the deliverer.
func serve(ctx context.Context, cfg *config.Config, getenv func(string) string, log *slog.Logger) error {
	sec, err := config.LoadSecrets(getenv, cfg.SecretNeeds())
	if err != nil {
		if !cfg.HTTP.AllowUnauthenticatedWebhooks && getenv(config.EnvWebhookToken) == "" {
			err = fmt.Errorf("%w\n(webhooks need STREAMWATCH_WEBHOOK_TOKEN unless http.allow_unauthenticated_webhooks: true)", err)
		}
		return fmt.Errorf("environment: %w", err)
	}
	redisLogOnce.Do(func() { redis.SetLogger(redisLogger{log}) }) // a process-wide setting
	rdb := redis.NewUniversalClient(universalOptions(sec.Redis))
	defer rdb.Close()
	store := state.New(rdb, cfg.Redis.KeyPrefix)
	pingCtx, cancelPing := context.WithTimeout(ctx, 3*time.Second)
	if err := store.Ping(pingCtx); err != nil {
		// Not fatal: webhooks answer 503 and /readyz says why until Redis answers.
		log.Warn("redis does not answer yet", "err", err)
	}
	cancelPing()
	store.Coalesce = cfg.Slack.ThreadCoalesce
	store.AutoResolveAfter = cfg.Alerts.AutoResolveAfter
	store.Retention = cfg.Alerts.IncidentRetention
	store.FloodLimit, store.FloodQuietFor = int(cfg.Alerts.Flood.NewIncidentsPerMinute), cfg.Alerts.Flood.QuietFor

	routes := make([]alerts.Route, len(cfg.Alerts.Routes))
	for i, r := range cfg.Alerts.Routes {
		routes[i] = alerts.Route{Match: r.Match, MatchRE: r.MatchRE, Pipeline: r.Pipeline}
	}
	channels := map[string]string{}
	for _, p := range cfg.Pipelines {
		channels[p.Name] = p.Channel
	}
	router := alerts.NewRouter(routes, cfg.Alerts.GroupBy, channels, cfg.Slack.DefaultChannel)

	metrics := bot.NewMetrics()
	httpClient := &http.Client{Timeout: 15 * time.Second, Transport: metrics.Transport(nil)}
	apiOpts := []slack.Option{slack.OptionAppLevelToken(sec.SlackAppToken), slack.OptionHTTPClient(httpClient)}
	if sec.SlackAPIURL != "" {
		apiOpts = append(apiOpts, slack.OptionAPIURL(sec.SlackAPIURL))
	}
	api := slack.New(sec.SlackBotToken, apiOpts...)

	kp, err := newKafka(cfg, store, getenv, log)
	if err != nil {
		return err
	}
	defer kp.clusters.Close()
	hs := healthService(cfg, store, getenv)
	hs.Lag = kp.samples
	handler := commands.New(cfg.Slack.Command, store)
	perPipeline := map[string][]string{}
	for _, p := range cfg.Pipelines {
		perPipeline[p.Name] = p.Remediators
	}
	handler.Authz = bot.NewRemediators(api, cfg.Slack.Remediators, perPipeline)
	handler.Directory = bot.NewChannels(api)
	handler.Audit = func(ctx context.Context, e state.AuditEntry) {
		if err := store.Audit(ctx, e); err != nil {
			log.Warn("audit", "err", err)
		}
	}
	handler.RegisterHealth(hs)
	handler.RegisterKafka(kp.monitor)
	cps := &checkpoints{cfg: cfg, kafka: kp, getenv: getenv}
	handler.RegisterCheckpoint(cps)
	diag := &diagnoser{cfg: cfg, store: store, kafka: kp, checkpoints: cps, getenv: getenv}
	handler.RegisterDiagnose(diag)
	// Incidents a failing probe opens are diagnosed in their thread, like alert-opened ones.
	hs.OnOpen = func(ctx context.Context, incident, pipeline string) {
		enrich(ctx, diag, store, log, incident, pipeline, false)
	}
	defer hs.Wait()
	watch := &watcher{cfg: cfg, store: store, kafka: kp, cps: cps, now: time.Now}
	handler.RegisterWatch(watch)
	handler.RegisterAudit(store)
	handler.RegisterIncidentDiagnose(func(ctx context.Context, incident, pipeline string) {
		enrich(ctx, diag, store, log, incident, pipeline, true)
	})
	// The incident lifecycle (issue 17): severity and owner, silences, the postmortem draft.
	handler.RegisterLifecycle(store)
	handler.RegisterSilences(store)
	handler.RegisterPostmortem(store)
	claimAfter := 30 * time.Second
	if v := getenv("STREAMWATCH_OUTBOX_CLAIM_AFTER"); v != "" {
		if claimAfter, err = time.ParseDuration(v); err != nil || claimAfter <= 0 {
			return fmt.Errorf("environment: STREAMWATCH_OUTBOX_CLAIM_AFTER: %q is not a positive duration", v)
		}
	}
	// One name per process: the outbox consumer and the scheduler's lock owner are the same replica.
	replica := replicaName()
	handler.RegisterRemediation(&remediation{cfg: cfg, getenv: getenv, now: time.Now, store: store, replica: replica}, store)
	b := bot.New(bot.Options{
		Log: log, Store: store, Router: router, Commands: handler, API: api,
		WebhookToken: sec.WebhookToken, AllowUnauthenticated: cfg.HTTP.AllowUnauthenticatedWebhooks,
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, Replica: replica, AllowedChannels: cfg.Slack.AllowedChannels,
		Metrics: metrics, HTTPClient: httpClient, ClaimAfter: claimAfter,
		Enrich: func(ctx context.Context, incident, pipeline string, again bool) {
			enrich(ctx, diag, store, log, incident, pipeline, again)
		},
	})

	ln, err := net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return fmt.Errorf("http.listen %s: %w", cfg.HTTP.Listen, err)
	}
	newServer := func(h http.Handler) *http.Server {
		return &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
	}
	srv := newServer(b.Routes())
	// With http.metrics_listen, /metrics, /healthz and /readyz leave the webhook address.
	var opsSrv *http.Server
	var opsLn net.Listener
	if cfg.HTTP.MetricsListen != "" {
		if opsLn, err = net.Listen("tcp", cfg.HTTP.MetricsListen); err != nil {
			ln.Close()
			return fmt.Errorf("http.metrics_listen %s: %w", cfg.HTTP.MetricsListen, err)
		}
		srv, opsSrv = newServer(b.WebhookRoutes()), newServer(b.OpsRoutes())
	}
	log.Info("streamwatch starting", "version", version, "http", ln.Addr().String(),
		"pipelines", len(cfg.Pipelines), "redis_tls", sec.Redis.TLSConfig != nil)
	if opsLn != nil {
		log.Info("metrics and health on their own address", "metrics_listen", opsLn.Addr().String())
	}

	botCtx, stopBot := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBot()
	botDone := make(chan error, 1)
	go func() { botDone <- b.Run(botCtx) }()
	sched := &bot.Scheduler{Store: store, Log: log, Replica: replica}
	if err := scheduleJobs(sched, cfg, hs, store, metrics, log); err != nil {
		return err
	}
	if err := kp.scheduleSampler(sched, cfg.Kafka.SampleInterval, metrics, log); err != nil {
		return err
	}
	sched.Add(bot.Job{Name: "watch", Schedule: cron.Every(watchEvery), Run: func(ctx context.Context, _ time.Time, _ int) error {
		return watch.tick(ctx, log)
	}})
	// Escalation (issue 17): once per tick across replicas; the state marks each incident
	// escalated in the same step, so that a restart or a second replica never calls twice.
	if e := cfg.Slack.Escalation; e.Enabled() {
		esc := state.Escalation{After: e.After, Mention: e.Mention, Severities: e.Levels()}
		sched.Add(bot.Job{Name: "escalate", Schedule: cron.Every(min(max(e.After/4, time.Second), 30*time.Second)),
			Run: func(ctx context.Context, _ time.Time, _ int) error {
				ids, err := store.Escalate(ctx, esc)
				if len(ids) > 0 {
					log.Info("escalated unacknowledged incidents", "incidents", ids, "mention", e.Mention)
				}
				return err
			}})
	}
	go sched.Run(botCtx)
	httpDone := make(chan error, 2)
	go func() { httpDone <- srv.Serve(ln) }()
	if opsSrv != nil {
		go func() { httpDone <- opsSrv.Serve(opsLn) }()
	}

	select {
	case <-ctx.Done():
	case err := <-httpDone:
		stopBot()
		<-botDone
		srv.Close()
		if opsSrv != nil {
			opsSrv.Close()
		}
		return fmt.Errorf("http server: %w", err)
	}
	log.Info("shutting down")
	b.Drain()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	if opsSrv != nil {
		if err := opsSrv.Shutdown(shutCtx); err != nil {
			log.Warn("metrics http shutdown", "err", err)
		}
	}
	stopBot()
	select {
	case <-botDone:
	case <-time.After(4 * time.Second):
		log.Warn("slack loop did not stop in time")
	}
	log.Info("stopped")
	return nil
}

// universalOptions completes REDIS_URL's options (config.ParseRedisURL: one server, or a cluster
// with IsClusterMode, which makes redis.NewUniversalClient build a ClusterClient) with timeouts
// short enough that a webhook answers 503 quickly while Redis is down. A timeout or retry count
// the URL sets (?dial_timeout=5s, ?max_retries=3) is kept.
func universalOptions(o *redis.UniversalOptions) *redis.UniversalOptions {
	u := *o
	if u.TLSConfig != nil {
		u.TLSConfig = u.TLSConfig.Clone()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&u.DialTimeout, 2*time.Second)
	def(&u.ReadTimeout, 3*time.Second)
	def(&u.WriteTimeout, 3*time.Second)
	if u.MaxRetries == 0 {
		u.MaxRetries = 1
	}
	if u.Protocol == 0 {
		// RESP2: streamwatch uses nothing of RESP3 (push messages, client-side caching), and
		// under RESP3 go-redis looks for pushed messages before reading every reply.
		u.Protocol = 2
	}
	return &u
}

var redisLogOnce sync.Once

// redisLogger sends go-redis's own messages (dial failures while Redis is down) to slog.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(_ context.Context, format string, v ...any) {
	r.l.Debug("go-redis", "msg", fmt.Sprintf(format, v...))
}

func replicaName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return strings.TrimSpace(host) + "-" + hex.EncodeToString(b)
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
