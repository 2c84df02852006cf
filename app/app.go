// Package app is the whole of streamwatch's serve command: New builds every part from a
// configuration and the secrets (Redis, Kafka, the pipeline features, the command grammar, the
// Slack side, the scheduler, the HTTP servers), and Run runs them until its context ends, then
// stops and waits for every goroutine it started. main parses flags and the environment and
// calls it; tests build it with their own listeners, clock and timeouts.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/scheduler"
	"github.com/streamwatch/streamwatch/state"
)

// Options configure the app. Config and Secrets are required; zero values of the rest get
// the defaults in parentheses.
type Options struct {
	Config  *config.Config
	Secrets config.Secrets
	// Getenv reads the variables the configuration names (Kafka SASL passwords, S3
	// credentials) when they are needed (os.Getenv).
	Getenv func(string) string
	Log    *slog.Logger // (discarded)
	// Version is logged at start.
	Version string

	// Listener serves http.listen; nil: New listens on Config.HTTP.Listen. The app owns the
	// listeners it is given: Run, or a failing New, closes them.
	Listener net.Listener
	// MetricsListener serves /metrics, /healthz and /readyz apart from the webhooks; nil: New
	// listens on Config.HTTP.MetricsListen when it is set, else they share Listener.
	MetricsListener net.Listener

	// Now is the clock of the command replies, the deliverer's webhook signatures, the
	// scheduler, the probes, the recovery watches and the repair policy (time.Now).
	Now func() time.Time
	// Replica names this process as an outbox consumer and a lock owner (host name and a
	// random suffix).
	Replica string
	// ClaimAfter is how long an outbox entry may sit with a replica before another claims it
	// (30s).
	ClaimAfter time.Duration
	// The timeouts, each with its default here (defaults): SlackTimeout bounds one Slack Web
	// API call (15s); DeliveryTimeout one outbox delivery, its Slack calls and bookkeeping
	// (10s); CommandTimeout one command, mention or click (60s); CommitTimeout one shared run
	// of the record script for a batch of webhooks (10s); CheckpointTimeout the read of one
	// checkpoint in a detection round (10s); BrokerTimeout the reads of the brokers a
	// checkpoint is compared with (10s). The Kafka clusters' own (kafka.clusters.*.timeout)
	// and diagnose.timeout are in the configuration.
	SlackTimeout, DeliveryTimeout, CommandTimeout   time.Duration
	CommitTimeout, CheckpointTimeout, BrokerTimeout time.Duration
	// HTTP are the HTTP servers' timeouts.
	HTTP HTTPTimeouts
	// ShutdownTimeout bounds the wait for in-flight webhooks at shutdown (5s); ShutdownDeadline
	// the whole shutdown (10s, as the README promises): past it Run returns, and the log names
	// the parts that have not stopped.
	ShutdownTimeout, ShutdownDeadline time.Duration
	// MaintainEvery is the period of the incident housekeeping (app/jobs.go: floods and
	// silences ending, due coalesced updates, auto-resolution), run by one replica per tick
	// (100ms).
	MaintainEvery time.Duration
}

// HTTPTimeouts are the HTTP servers' timeouts; zero values get the defaults in parentheses.
type HTTPTimeouts struct {
	ReadHeader time.Duration // (5s) a slow client cannot hold a connection open with a trickle
	Read       time.Duration // (30s)
	Write      time.Duration // (30s)
	Idle       time.Duration // (2m)
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ClaimAfter, 30*time.Second)
	def(&o.SlackTimeout, 15*time.Second)
	def(&o.DeliveryTimeout, 10*time.Second)
	def(&o.CommandTimeout, 60*time.Second)
	def(&o.CommitTimeout, 10*time.Second)
	def(&o.CheckpointTimeout, 10*time.Second)
	def(&o.BrokerTimeout, 10*time.Second)
	def(&o.ShutdownTimeout, 5*time.Second)
	def(&o.ShutdownDeadline, 10*time.Second)
	def(&o.MaintainEvery, 100*time.Millisecond)
	def(&o.HTTP.ReadHeader, 5*time.Second)
	def(&o.HTTP.Read, 30*time.Second)
	def(&o.HTTP.Write, 30*time.Second)
	def(&o.HTTP.Idle, 2*time.Minute)
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Replica == "" {
		o.Replica = replicaName()
	}
}

// App is streamwatch, built and not yet running.
type App struct {
	opt   Options
	log   *slog.Logger
	rdb   redis.UniversalClient
	store *state.Store
	kafka *kafka.Clusters
	// transport carries the Slack Web API calls and response_url posts; its idle
	// connections close at shutdown.
	transport *http.Transport
	bot       *bot.Bot
	sched     *scheduler.Scheduler
	diag      *pipeline.Diagnoser
	servers   []served
	// diagnoses runs the automatic diagnoses of opened incidents.
	diagnoses *background
	// running is the configuration as Reload last applied it (nil: Options.Config).
	running  *config.Config
	reloadMu sync.Mutex
	// redisLog is true while the app's log hears go-redis's messages (addRedisLog).
	redisLog bool
}

// served is an HTTP server and the listener it serves.
type served struct {
	name string
	srv  *http.Server
	ln   net.Listener
}

// New builds the app. Nothing runs until Run; on error, what New opened is closed.
func New(opt Options) (a *App, err error) {
	if opt.Config == nil {
		return nil, errors.New("app: no configuration")
	}
	opt.defaults()
	a = &App{opt: opt, log: opt.Log}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if err := a.build(); err != nil {
		return nil, err
	}
	return a, nil
}

// Addr is the address the webhooks are served on.
func (a *App) Addr() net.Addr { return a.servers[0].ln.Addr() }

// Run runs the app until ctx ends or an HTTP server fails, then shuts down in order: stop
// taking webhooks, let in-flight requests finish, stop Slack, the deliverer, the scheduler
// and the automatic diagnoses, and wait for all of them. An App runs once.
func (a *App) Run(ctx context.Context) error {
	defer a.close()
	cfg := a.opt.Config
	a.log.Info("streamwatch starting", "version", a.opt.Version, "http", a.Addr().String(),
		"pipelines", len(cfg.Pipelines), "redis_tls", a.opt.Secrets.Redis.TLSConfig != nil,
		"redis", config.DescribeRedis(a.opt.Secrets.Redis), "redis_min_replicas_acked", cfg.Redis.MinReplicasAcked)
	if len(a.servers) > 1 {
		a.log.Info("metrics and health on their own address", "metrics_listen", a.servers[1].ln.Addr().String())
	}
	pingCtx, cancelPing := context.WithTimeout(ctx, 3*time.Second)
	if err := a.store.Ping(pingCtx); err != nil {
		// Not fatal: webhooks answer 503 and /readyz says why until Redis answers.
		a.log.Warn("redis does not answer yet", "err", err)
	} else if err := a.store.IndexChannels(pingCtx); err != nil {
		// Not fatal either: the first incident list builds the index.
		a.log.Warn("could not index the open incidents by channel yet", "err", err)
	}
	cancelPing()

	// The Slack side, the scheduler and the diagnoses outlive ctx until the webhooks are
	// drained: what a webhook accepted during shutdown still reaches the outbox.
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	a.diagnoses.start(runCtx)
	var slack, sched sync.WaitGroup
	slack.Go(func() { _ = a.bot.Run(runCtx) })
	sched.Go(func() { a.sched.Run(runCtx) })
	failed := make(chan error, len(a.servers))
	var serving sync.WaitGroup
	for _, s := range a.servers {
		serving.Go(func() {
			if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
				failed <- fmt.Errorf("%s server: %w", s.name, err)
			}
		})
	}

	var err error
	select {
	case <-ctx.Done():
	case err = <-failed:
	}
	a.log.Info("shutting down")
	deadline := time.Now().Add(a.opt.ShutdownDeadline)
	a.bot.Drain()
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.opt.ShutdownTimeout)
	for _, s := range a.servers {
		if err := s.srv.Shutdown(shutCtx); err != nil {
			a.log.Warn("http shutdown: closing the connections still open", "server", s.name, "err", err)
			_ = s.srv.Close()
		}
	}
	cancel()
	serving.Wait()
	stop()
	if waitParts(a.log, deadline, []part{{"the Slack side and the deliverer", slack.Wait}, {"the scheduler", sched.Wait},
		{"the automatic diagnoses", a.diagnoses.wait}, {"checks past their deadline", a.diag.Wait}}) {
		a.log.Info("stopped")
	}
	return err
}

// part is a part of the app Run waits for at shutdown.
type part struct {
	name string
	wait func()
}

// waitParts waits for every part until deadline, saying in the log what it still waits for
// every few seconds; it reports whether they all stopped. Past the deadline it logs the parts
// still running and returns: the process exits within the deadline the README states, and
// the goroutines of a part that hangs end with it.
func waitParts(log *slog.Logger, deadline time.Time, parts []part) bool {
	done := make([]chan struct{}, len(parts))
	for i, p := range parts {
		done[i] = make(chan struct{})
		go func() { defer close(done[i]); p.wait() }()
	}
	running := func() []string {
		var names []string
		for i, p := range parts {
			select {
			case <-done[i]:
			default:
				names = append(names, p.name)
			}
		}
		return names
	}
	end := time.NewTimer(time.Until(deadline))
	defer end.Stop()
	tick := time.NewTicker(shutdownNag)
	defer tick.Stop()
	for i := range parts {
		for waiting := true; waiting; {
			select {
			case <-done[i]:
				waiting = false
			case <-tick.C:
				log.Warn("shutdown still waits", "for", running())
			case <-end.C:
				log.Error("shutdown deadline passed: stopping without these parts", "running", running())
				return false
			}
		}
	}
	return true
}

// shutdownNag is how often the log says what shutdown still waits for.
const shutdownNag = 3 * time.Second

// close releases what New opened: listeners nobody served, the Kafka and Redis clients,
// idle Slack connections.
func (a *App) close() {
	for _, ln := range []net.Listener{a.opt.Listener, a.opt.MetricsListener} {
		if ln != nil {
			_ = ln.Close()
		}
	}
	for _, s := range a.servers {
		_ = s.ln.Close()
	}
	if a.kafka != nil {
		_ = a.kafka.Close()
	}
	if a.rdb != nil {
		_ = a.rdb.Close()
	}
	if a.redisLog {
		a.redisLog = false
		removeRedisLog(a.log)
	}
	if a.transport != nil {
		a.transport.CloseIdleConnections()
	}
}

func replicaName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return strings.TrimSpace(host) + "-" + hex.EncodeToString(b)
}
