// Package bot is streamwatch's Slack and HTTP side: it serves the routes (routes.go: alert
// webhooks, health, metrics), runs the socket-mode loop (socket.go), turns envelopes into
// commands.Requests and renders their Replies, and the sentences commands words for
// incidents' roots and threads, as Block Kit and mrkdwn (render*.go), and delivers the
// outbox to Slack (deliver.go), surviving a deleted root or an archived channel (orphans.go);
// the deliverer also runs the incidents' housekeeping (ending floods and silences, sweeping).
package bot

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/state"
)

// Options configure a Bot. Zero values get defaults.
type Options struct {
	Log      *slog.Logger
	Store    *state.Store
	Router   *alerts.Router
	Commands *commands.Handler
	// API is the Slack Web API client (bot token; app token for socket mode).
	API *slack.Client
	// WebhookToken is the bearer token webhooks must present; "" with AllowUnauthenticated.
	WebhookToken         string
	AllowUnauthenticated bool
	MaxBodyBytes         int64
	// Replica names this process as an outbox consumer; unique per replica.
	Replica string
	// ClaimAfter is how long an outbox entry may sit with a consumer before another claims it.
	ClaimAfter time.Duration
	// Poll is how long the deliverer waits for new outbox entries before it looks at its
	// retries again (200ms).
	Poll time.Duration
	// DefaultChannel is slack.default_channel: where an incident moves when its channel is
	// archived, gone, or the bot was removed from it.
	DefaultChannel string
	// Descriptions are the pipelines' descriptions (pipelines[].description), shown where a
	// root message names its pipeline.
	Descriptions map[string]string
	// Pager, when set, hears of the resolution of each incident as it is delivered
	// (slack.escalation.webhook resolves what escalation triggered).
	Pager Pager
	// AllowedChannels, when not empty, are the only channels where commands are answered.
	AllowedChannels []string
	// Heartbeats, when set, notes the arrival of expected alerts (alerts.heartbeats), which
	// then open no incident.
	Heartbeats Heartbeats
	// Metrics receives the bot's measurements; nil makes a fresh set.
	Metrics *metrics.Metrics
	// HTTPClient makes response_url posts; the Slack API client has its own.
	HTTPClient *http.Client
	// DeliveryTimeout bounds one outbox delivery: its Slack calls and bookkeeping (10s);
	// CommandTimeout one command, mention or click (60s). app.Options sets both.
	DeliveryTimeout, CommandTimeout time.Duration
	Now                             func() time.Time
}

// Bot ties Slack, the webhooks and the state together.
type Bot struct {
	opt       Options
	log       *slog.Logger
	connected atomic.Bool
	authBad   atomic.Bool
	draining  atomic.Bool
	// requests are the commands, mentions and clicks being answered; Run waits for them.
	requests sync.WaitGroup
}

// New returns a Bot; Run starts it.
func New(opt Options) *Bot {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.MaxBodyBytes <= 0 {
		opt.MaxBodyBytes = 1 << 20
	}
	if opt.ClaimAfter <= 0 {
		opt.ClaimAfter = 30 * time.Second
	}
	if opt.DeliveryTimeout <= 0 {
		opt.DeliveryTimeout = 10 * time.Second
	}
	if opt.CommandTimeout <= 0 {
		opt.CommandTimeout = 60 * time.Second
	}
	if opt.Poll <= 0 {
		opt.Poll = 200 * time.Millisecond
	}
	if opt.Replica == "" {
		opt.Replica = "streamwatch"
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Metrics == nil {
		opt.Metrics = metrics.New()
	}
	if opt.HTTPClient == nil {
		opt.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	return &Bot{opt: opt, log: opt.Log}
}

// Connected reports whether the socket-mode connection is up.
func (b *Bot) Connected() bool { return b.connected.Load() }

// Drain makes /readyz answer 503 and webhooks refuse new alerts with 503, ahead of shutdown.
func (b *Bot) Drain() { b.draining.Store(true) }

// Run runs the socket-mode loop and the outbox deliverer until ctx ends, and returns once
// they and every request they started have stopped.
func (b *Bot) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { b.newDeliverer().run(ctx) })
	b.runSocket(ctx)
	wg.Wait()
	b.requests.Wait()
	return nil
}
