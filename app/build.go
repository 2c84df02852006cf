package app

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/heartbeat"
	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/scheduler"
	"github.com/streamwatch/streamwatch/state"
)

// build makes every part, in the order they depend on each other.
func (a *App) build() error {
	cfg, sec, getenv, log, now := a.opt.Config, a.opt.Secrets, a.opt.Getenv, a.log, a.opt.Now
	human.SetZone(cfg.Slack.Location()) // every time people read, from here on
	if sec.Redis == nil {
		return fmt.Errorf("app: no Redis in the secrets")
	}
	addRedisLog(log) // until close: go-redis's logger is one per process
	a.redisLog = true
	a.rdb = redis.NewUniversalClient(universalOptions(sec.Redis))
	store := state.New(a.rdb, cfg.Redis.KeyPrefix)
	store.SetClock(now)
	store.CommitTimeout = a.opt.CommitTimeout
	store.Coalesce = cfg.Slack.ThreadCoalesce
	store.AutoResolveAfter = cfg.Alerts.AutoResolveAfter
	store.Retention = cfg.Alerts.IncidentRetention
	store.FloodLimit, store.FloodQuietFor = int(cfg.Alerts.Flood.NewIncidentsPerMinute), cfg.Alerts.Flood.QuietFor
	store.FloodExempt = cfg.Alerts.Flood.ExemptSeverity.Level()
	store.CorrelatePipeline = cfg.Alerts.CorrelatePipeline
	store.MinReplicasAcked, store.ReplicaAckTimeout = int(cfg.Redis.MinReplicasAcked), cfg.Redis.ReplicaAckTimeout
	a.store = store

	m := metrics.New()
	store.OnReplicaWait = func(use string, took time.Duration, ok bool) {
		m.ReplicaWait.WithLabelValues(use).Observe(took.Seconds())
		if !ok {
			m.ReplicaWaitTimeouts.WithLabelValues(use).Inc()
		}
	}
	a.transport = http.DefaultTransport.(*http.Transport).Clone()
	httpClient := &http.Client{Timeout: a.opt.SlackTimeout, Transport: m.Transport(a.transport)}
	apiOpts := []slack.Option{slack.OptionAppLevelToken(sec.SlackAppToken), slack.OptionHTTPClient(httpClient)}
	if sec.SlackAPIURL != "" {
		apiOpts = append(apiOpts, slack.OptionAPIURL(sec.SlackAPIURL))
	}
	api := slack.New(sec.SlackBotToken, apiOpts...)

	monitor, samples, err := a.buildKafka(store)
	if err != nil {
		return err
	}
	// Charts: detection's rounds and the probes keep their numbers for them (charts.enabled).
	progress := state.NewProgress(store, cfg.Charts.Window)
	var probeStore pipeline.ProbeStore = store
	if cfg.Charts.Enabled {
		probeStore = chartedProbes{Store: store, progress: progress, log: log}
	}
	probes := pipeline.NewProbes(cfg, probeStore, getenv)
	probes.Words = commands.ProbeMessage
	probes.Lag, probes.Now = samples, now
	checkpoints := &pipeline.Checkpoints{Config: cfg, Getenv: getenv, Kafka: a.kafka, History: store, BrokerTimeout: a.opt.BrokerTimeout}
	a.diag = &pipeline.Diagnoser{Config: cfg, Getenv: getenv, Lag: monitor, Checkpoints: checkpoints, Probes: store}
	watcher := &pipeline.Watcher{Config: cfg, Store: store, Checkpoints: checkpoints, Kafka: a.kafka, Now: now, Log: log, Words: commands.WatchReport}
	repairs := &pipeline.Repairs{Config: cfg, Getenv: getenv, Now: now, Store: store, Replica: a.opt.Replica}

	handler := commands.New(cfg.Slack.Command, store)
	handler.Now = now
	perPipeline := map[string][]string{}
	for _, p := range cfg.Pipelines {
		perPipeline[p.Name] = p.Remediators
	}
	handler.Authz = bot.NewRemediators(api, cfg.Slack.Remediators, perPipeline)
	handler.Directory = bot.NewChannels(api)
	handler.Replication = store
	handler.Audit = func(ctx context.Context, e state.AuditEntry) {
		if err := store.Audit(ctx, e); err != nil {
			log.Warn("audit", "err", err)
		}
	}
	handler.RegisterHealth(probes)
	handler.RegisterKafka(&pipeline.Lags{Kafka: monitor})
	handler.RegisterCheckpoint(checkpoints)
	handler.RegisterDiagnose(a.diag)
	handler.RegisterWatch(watcher)
	handler.RegisterAudit(store)
	handler.RegisterRemediation(repairs, store)
	// The incident lifecycle: severity and owner, silences, the postmortem draft.
	handler.RegisterLifecycle(store)
	handler.RegisterSilences(store)
	handler.RegisterPostmortem(store)
	handler.RegisterChart(&pipeline.Charts{Config: cfg, Samples: progress, Incidents: store, Now: now}, store)

	// The automatic diagnosis of every incident opened for a pipeline (an alert, a failing
	// probe, detection), once, in its thread: the record script queues it, the "diagnose" job
	// hands it to pipeline.Verdicts; `incident diagnose` (the "Diagnose again" button) posts a
	// fresh one. The chart of its pipeline follows it, once per incident; each recovery reply
	// is followed by another.
	a.diagnoses = &background{limit: 4}
	verdicts := &pipeline.Verdicts{Diagnoser: a.diag, Store: store, Lease: 2 * a.opt.CommandTimeout}
	handler.RegisterIncidentDiagnose(verdicts)
	var recovered func(incident, name string)
	if cfg.Charts.Enabled {
		recovered = func(incident, name string) { a.postChart(handler, incident, name, "") }
	}
	watcher.Recovered = recovered
	// Detection judges every pipeline on each sampling round.
	var detector *pipeline.Detector
	if len(monitor.Pipelines()) > 0 {
		sampler, err := kafka.NewSampler(monitor, kafka.SamplerOptions{Interval: cfg.Kafka.SampleInterval, Logger: log})
		if err != nil {
			return err
		}
		detector = &pipeline.Detector{CheckpointTimeout: a.opt.CheckpointTimeout, Config: cfg, Getenv: getenv, Rounds: sampler, Kafka: a.kafka, Store: store, Now: now,
			Log: log, Recovered: recovered, Words: commands.DetectMessage,
			TimeToDetect: func(d time.Duration) { m.TimeToDetect.WithLabelValues(state.SourceDetect).Observe(d.Seconds()) }}
		if cfg.Charts.Enabled {
			detector.Progress = progress
		}
		probes.Notes = detector
	}
	m.WatchProgress(progressSource(cfg, detector, store))

	beats := heartbeat.New(cfg, store)
	if beats != nil {
		beats.Now, beats.Words = now, commands.HeartbeatMessage
		beats.TimeToDetect = func(d time.Duration) { m.TimeToDetect.WithLabelValues(state.SourceHeartbeat).Observe(d.Seconds()) }
	}
	pg, err := newPager(cfg, sec, log)
	if err != nil {
		return fmt.Errorf("slack.escalation.webhook (%s): %w", cfg.Slack.Escalation.Webhook.URLEnv, err)
	}
	var botPager bot.Pager // a nil *pager is not a nil Pager
	if pg != nil {
		botPager = pg
	}
	opts := bot.Options{
		Log: log, Store: store, Router: router(cfg), Commands: handler, API: api,
		WebhookToken: sec.WebhookToken, AllowUnauthenticated: cfg.HTTP.AllowUnauthenticatedWebhooks,
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, Replica: a.opt.Replica, AllowedChannels: cfg.Slack.AllowedChannels, DefaultChannel: cfg.Slack.DefaultChannel,
		Metrics: m, HTTPClient: httpClient, ClaimAfter: a.opt.ClaimAfter, DeliveryTimeout: a.opt.DeliveryTimeout, CommandTimeout: a.opt.CommandTimeout,
		Now: now, Pager: botPager, Descriptions: descriptions(cfg),
	}
	if beats != nil {
		opts.Heartbeats = beats
	}
	a.bot = bot.New(opts)

	a.sched = &scheduler.Scheduler{Store: store, Log: log, Replica: a.opt.Replica, Now: now}
	if err := scheduleJobs(a.sched, cfg, probes, watcher, store, m, log, pg); err != nil {
		return err
	}
	scheduleSampler(a.sched, detector, cfg.Kafka.SampleInterval, m)
	scheduleHeartbeats(a.sched, beats)
	scheduleHousekeeping(a.sched, store, m, log, now, a.opt.MaintainEvery)
	a.scheduleDiagnoses(verdicts, handler, a.opt.MaintainEvery)
	return a.listen()
}

// buildKafka makes the Kafka clients (created once, connecting lazily: a cluster that is down
// does not stop start-up), the monitor the commands and the diagnosis use, and its sample
// store in Redis.
func (a *App) buildKafka(store *state.Store) (*kafka.Monitor, *pipeline.LagSamples, error) {
	cfg := a.opt.Config
	var opts []kafka.ClusterOptions
	for _, name := range slices.Sorted(maps.Keys(cfg.Kafka.Clusters)) {
		c := cfg.Kafka.Clusters[name]
		opts = append(opts, kafka.ClusterOptions{Name: name, Brokers: c.Brokers, Version: c.Version, ClientID: c.ClientID,
			Timeout: c.Timeout,
			TLS:     kafka.TLSOptions{Enabled: c.TLS.Enabled, CAFile: c.TLS.CAFile, CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile},
			SASL:    kafka.SASLOptions{Mechanism: c.SASL.Mechanism, Username: c.SASL.Username, PasswordEnv: c.SASL.PasswordEnv}})
	}
	clusters, err := kafka.NewClusters(opts, kafka.ClustersOptions{Getenv: a.opt.Getenv, Logger: a.log})
	if err != nil {
		return nil, nil, fmt.Errorf("kafka: %w", err)
	}
	a.kafka = clusters
	var pipes []kafka.Pipeline
	for _, p := range cfg.Pipelines {
		if p.Kafka.Enabled() {
			pipes = append(pipes, kafka.Pipeline{Name: p.Name, Cluster: p.Kafka.Cluster, Topics: p.Kafka.Topics,
				Group: p.Kafka.Group, StallAfter: p.Kafka.StallAfter, AllowedLag: p.Kafka.AllowedLag, PublishGroup: p.Kafka.PublishGroup})
		}
	}
	samples := pipeline.NewLagSamples(store, pipes)
	monitor, err := kafka.NewMonitor(clusters, samples, pipes, kafka.MonitorOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("kafka: %w", err)
	}
	return monitor, samples, nil
}

// router routes alerts to pipelines and channels (alerts.routes, pipelines[].channel).
func router(cfg *config.Config) *alerts.Router {
	routes := make([]alerts.Route, len(cfg.Alerts.Routes))
	for i, r := range cfg.Alerts.Routes {
		routes[i] = alerts.Route{Match: r.Match, MatchRE: r.MatchRE, Pipeline: r.Pipeline}
	}
	channels := map[string]string{}
	for _, p := range cfg.Pipelines {
		channels[p.Name] = p.Channel
	}
	return alerts.NewRouter(routes, cfg.Alerts.GroupBy, channels, cfg.Slack.DefaultChannel)
}

// listen takes the listeners it was given, or opens http.listen (and http.metrics_listen),
// and makes their servers: with a metrics address, /metrics, /healthz and /readyz leave the
// webhook address.
func (a *App) listen() error {
	cfg := a.opt.Config
	ln, ops := a.opt.Listener, a.opt.MetricsListener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.HTTP.Listen); err != nil {
			return fmt.Errorf("http.listen %s: %w", cfg.HTTP.Listen, err)
		}
	}
	a.servers = append(a.servers, served{name: "http", ln: ln})
	if ops == nil && cfg.HTTP.MetricsListen != "" {
		var err error
		if ops, err = net.Listen("tcp", cfg.HTTP.MetricsListen); err != nil {
			return fmt.Errorf("http.metrics_listen %s: %w", cfg.HTTP.MetricsListen, err)
		}
	}
	if ops == nil {
		a.servers[0].srv = a.server(a.bot.Routes())
		return nil
	}
	a.servers[0].srv = a.server(a.bot.WebhookRoutes())
	a.servers = append(a.servers, served{name: "metrics", ln: ops, srv: a.server(a.bot.OpsRoutes())})
	return nil
}

func (a *App) server(h http.Handler) *http.Server {
	t := a.opt.HTTP
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
}

// descriptions maps each pipeline to its description (pipelines[].description).
func descriptions(cfg *config.Config) map[string]string {
	out := map[string]string{}
	for _, p := range cfg.Pipelines {
		if p.Description != "" {
			out[p.Name] = p.Description
		}
	}
	return out
}
