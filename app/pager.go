package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/pagerduty"
	"github.com/streamwatch/streamwatch/state"
)

// pager sends escalations and the resolution of escalated incidents to
// slack.escalation.webhook (PagerDuty's Events API v2), so that a phone rings when nobody reads
// Slack. It retries what a retry can fix, a few times with backoff (cenkalti/backoff), and logs
// what it could not send; Slack goes on either way.
type pager struct {
	client *pagerduty.Client
	prefix string // redis.key_prefix: dedup keys are unique per deployment
	log    *slog.Logger
	// tries and first bound the retries: tries attempts, the first wait first.
	tries int
	first time.Duration
}

// newPager returns the pager of cfg, or nil when slack.escalation.webhook is off.
func newPager(cfg *config.Config, sec config.Secrets, log *slog.Logger) (*pager, error) {
	if cfg.Slack.Escalation.Webhook.URLEnv == "" || sec.EscalationWebhookURL == "" {
		return nil, nil
	}
	c, err := pagerduty.New(sec.EscalationWebhookURL, nil)
	if err != nil {
		return nil, err
	}
	return &pager{client: c, prefix: cfg.Redis.KeyPrefix, log: log, tries: 4, first: 500 * time.Millisecond}, nil
}

// DedupKey is the incident's key in PagerDuty.
func (p *pager) DedupKey(id string) string { return p.prefix + "/" + id }

// Notify sends e, retrying a 429, a 5xx or a network failure.
func (p *pager) Notify(ctx context.Context, e pagerduty.Event) error {
	b := backoff.NewExponentialBackOff(backoff.WithInitialInterval(p.first), backoff.WithMaxElapsedTime(0))
	err := backoff.Retry(func() error {
		err := p.client.Notify(ctx, e)
		if err != nil && !pagerduty.Retryable(err) {
			return backoff.Permanent(err)
		}
		return err
	}, backoff.WithContext(backoff.WithMaxRetries(b, uint64(p.tries-1)), ctx))
	if err != nil {
		p.log.Error("escalation webhook failed", "action", e.Action, "dedup_key", e.DedupKey, "err", err)
	}
	return err
}

// Escalated triggers each escalation store.Escalate made (every level, every repeat: under
// one dedup key PagerDuty keeps one incident open and adds to it).
func (p *pager) Escalated(ctx context.Context, store *state.Store, done []state.Escalated) {
	if p == nil {
		return
	}
	for _, x := range done {
		inc, err := store.Head(ctx, x.Incident)
		if err != nil {
			p.log.Error("escalation webhook: read incident", "incident", x.Incident, "err", err)
			continue
		}
		_ = p.Notify(ctx, triggerEvent(inc, p.DedupKey(inc.ID), x.Level))
	}
}

// triggerEvent is the trigger of an escalated incident.
func triggerEvent(inc *state.Incident, dedup string, level int) pagerduty.Event {
	source := inc.Pipeline
	if source == "" {
		source = "streamwatch " + inc.Channel
	}
	return pagerduty.Event{Action: pagerduty.Trigger, DedupKey: dedup, Summary: inc.ID + ": " + inc.Title,
		Severity: inc.Severity, Source: source, Level: level, Incident: inc.ID, At: inc.EscalatedAt}
}

// Resolved resolves an escalated incident in PagerDuty when it resolves in streamwatch (the
// deliverer calls it as it delivers the resolution). An incident that never escalated was
// never triggered.
func (p *pager) Resolved(ctx context.Context, inc *state.Incident) {
	if inc.EscalatedAt.IsZero() {
		return
	}
	_ = p.Notify(ctx, pagerduty.Event{Action: pagerduty.Resolve, DedupKey: p.DedupKey(inc.ID), Incident: inc.ID})
}
