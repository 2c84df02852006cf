package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/state"
)

// Outbox is what the deliverer reads and records (state.Store): the entries, the incidents
// they belong to, and the housekeeping that moves due entries into it.
type Outbox interface {
	EnsureOutbox(ctx context.Context) error
	ReadOutbox(ctx context.Context, consumer string, pending bool, count int64, block time.Duration) ([]state.Delivery, error)
	ClaimStale(ctx context.Context, consumer string, minIdle time.Duration) ([]state.Delivery, error)
	Head(ctx context.Context, id string) (*state.Incident, error)
	Complete(ctx context.Context, d state.Delivery, rootTS, channel string) error
	Drop(ctx context.Context, d state.Delivery) error
	Relocate(ctx context.Context, id, channel, ts string) error
}

// Messages are the Slack calls the deliverer makes (slackMessages over slack-go's client).
// Errors are slack-go's: *slack.RateLimitedError, slack.StatusCodeError, slack.SlackErrorResponse.
type Messages interface {
	// Post posts m into channel, in the thread of m.ThreadTS when set, and returns its ts.
	Post(ctx context.Context, channel string, m Message) (string, error)
	// Update replaces the message ts of channel with m.
	Update(ctx context.Context, channel, ts string, m Message) error
}

// Pager hears of incidents that close (resolved, or merged into another), as the deliverer
// delivers that news: the escalation webhook resolves what it triggered. It must not hold the
// delivery long (it runs under the delivery's timeout).
type Pager interface {
	Resolved(ctx context.Context, inc *state.Incident)
}

// Message is a message's text (the notification, or all of it) and its blocks, or the text
// that introduces the file it shares (files.go).
type Message struct {
	Text     string
	Blocks   []slack.Block
	ThreadTS string
	File     *Upload
}

// slackMessages is Messages over slack-go's Web API client; posts never unfurl links.
type slackMessages struct{ api *slack.Client }

func (s slackMessages) Post(ctx context.Context, channel string, m Message) (string, error) {
	if m.File != nil {
		return "", s.upload(ctx, channel, m)
	}
	opts := []slack.MsgOption{slack.MsgOptionText(m.Text, false), slack.MsgOptionDisableLinkUnfurl()}
	if len(m.Blocks) > 0 {
		opts = append(opts, slack.MsgOptionBlocks(m.Blocks...))
	}
	if m.ThreadTS != "" {
		opts = append(opts, slack.MsgOptionTS(m.ThreadTS))
	}
	_, ts, err := s.api.PostMessageContext(ctx, channel, opts...)
	return ts, err
}

func (s slackMessages) Update(ctx context.Context, channel, ts string, m Message) error {
	_, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(m.Text, false), slack.MsgOptionBlocks(m.Blocks...))
	return err
}

// deliverer delivers the outbox to Slack for one replica, and holds its retry bookkeeping.
type deliverer struct {
	out     Outbox
	slack   Messages
	metrics *metrics.Metrics
	log     *slog.Logger
	replica string
	// claimAfter is how long an entry may sit with a replica before another claims it;
	// timeout bounds one delivery.
	claimAfter, timeout time.Duration
	// wait is how long a pass waits for new entries when it has nothing to do (Options.Poll;
	// less than zero: not at all).
	wait    time.Duration
	now     func() time.Time
	authBad *atomic.Bool // Slack refused the tokens (for /readyz)

	retryAt  map[string]time.Time // stream id → not before
	attempts map[string]int
	replied  map[string]bool   // stream id → thread reply posted, root update still to do
	posted   map[string]string // stream id → ts of a root or notice Slack took, bookkeeping still to do
	rescued  map[string]rescue // stream id → the root posted again for its incident (orphans.go)
	paged    map[string]bool   // stream id → the pager heard of the closing it carries
	pager    Pager             // nil: no escalation webhook
	describe map[string]string // pipeline → pipelines[].description
	// defaultChannel is slack.default_channel: where an incident whose channel takes no more
	// messages moves.
	defaultChannel string
	paused         map[string]time.Time // channel → not before (HTTP 429)
	lastClaim      time.Time
	// pendingAt is when the entries this replica holds must be read again (zero: at the next
	// pass).
	pendingAt time.Time
}

// newDeliverer returns the deliverer of the bot's outbox.
func (b *Bot) newDeliverer() *deliverer {
	return &deliverer{out: b.outbox(), slack: slackMessages{b.opt.API}, metrics: b.opt.Metrics, log: b.log, replica: b.opt.Replica,
		claimAfter: b.opt.ClaimAfter, timeout: b.opt.DeliveryTimeout, wait: b.opt.Poll, now: b.opt.Now, authBad: &b.authBad,
		retryAt: map[string]time.Time{}, attempts: map[string]int{}, replied: map[string]bool{}, posted: map[string]string{},
		rescued: map[string]rescue{}, paged: map[string]bool{}, pager: b.opt.Pager, describe: b.opt.Descriptions, defaultChannel: b.opt.DefaultChannel, paused: map[string]time.Time{}}
}

// run delivers the outbox until ctx ends. Entries of one incident go out in sequence order,
// across replicas; a failed entry is retried with backoff (or Slack's Retry-After) and holds
// back the later entries of its incident; entries of a replica that died are claimed.
func (d *deliverer) run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := d.out.EnsureOutbox(ctx); err == nil {
			break
		}
		if !sleep(ctx, time.Second) {
			return
		}
	}
	for ctx.Err() == nil {
		if err := d.pass(ctx); err != nil && ctx.Err() == nil {
			d.pendingAt = time.Time{} // the pass stopped half way: look at everything again
			d.log.Warn("outbox pass", "err", err)
			sleep(ctx, time.Second)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (d *deliverer) pass(ctx context.Context) error {
	now := d.now()
	if err := d.claim(ctx); err != nil {
		return err
	}
	next := d.pendingAt // when the pending entries are not read in this pass, their time stands
	blocked := map[string]time.Time{}
	delivered := 0
	var pending []state.Delivery
	if !now.Before(d.pendingAt) {
		next = now.Add(pendingRecheck)
		var err error
		if pending, err = d.out.ReadOutbox(ctx, d.replica, true, 200, 0); err != nil {
			return err
		}
		n, err := d.deliverAll(ctx, pending, blocked, &next)
		if err != nil {
			return err
		}
		delivered += n
	}
	fresh, err := d.out.ReadOutbox(ctx, d.replica, false, 200, d.wait)
	if err != nil {
		return err
	}
	n, err := d.deliverAll(ctx, fresh, blocked, &next)
	if err != nil {
		return err
	}
	delivered += n
	d.pendingAt = next
	if delivered == 0 && len(pending)+len(fresh) > 0 {
		// Only waiting entries (backoff, a channel Slack paused): do not spin on every new
		// entry; let them gather and read them in one go.
		sleep(ctx, min(next.Sub(d.now()), d.wait))
	}
	return nil
}

// pendingRecheck is the longest the deliverer goes without reading its pending entries.
const pendingRecheck = 5 * time.Second

// claim takes over the entries of a replica that stalled, twice per claimAfter. (The incident
// housekeeping, the floods and silences ending, the coalesced updates, is the app's scheduled
// maintain job, app/jobs.go.)
func (d *deliverer) claim(ctx context.Context) error {
	if d.now().Sub(d.lastClaim) <= d.claimAfter/2 {
		return nil
	}
	d.lastClaim = d.now()
	claimed, err := d.out.ClaimStale(ctx, d.replica, d.claimAfter)
	if err != nil {
		return err
	}
	if len(claimed) > 0 {
		d.log.Info("claimed outbox entries of a stalled replica", "entries", len(claimed))
		d.pendingAt = time.Time{}
	}
	return nil
}

// deliverAll delivers list in order and counts what it delivered; it stops at a Redis outage
// (the whole pass is retried), so that the log says "redis unavailable" once, not "slack
// delivery failed" per entry. blocked holds incidents whose earlier entry waits, with the time
// it waits for; next is lowered to the earliest time a waiting entry may go.
func (d *deliverer) deliverAll(ctx context.Context, list []state.Delivery, blocked map[string]time.Time, next *time.Time) (int, error) {
	now := d.now()
	delivered := 0
	wait := func(e state.Delivery, until time.Time) {
		if e.Kind != state.KindNotice {
			blocked[e.Incident] = until
		}
		if until.Before(*next) {
			*next = until
		}
	}
	for _, e := range list {
		if ctx.Err() != nil {
			return delivered, nil
		}
		if until, ok := blocked[e.Incident]; ok && e.Kind != state.KindNotice {
			wait(e, until)
			continue
		}
		if at := d.retryAt[e.StreamID]; now.Before(at) {
			wait(e, at)
			continue
		}
		// One slow Slack call must not hold every other incident's messages for long.
		callCtx, cancel := context.WithTimeout(ctx, d.timeout)
		err := d.deliver(callCtx, e)
		cancel()
		if errors.Is(err, state.ErrUnavailable) {
			return delivered, fmt.Errorf("outbox: %w", err)
		}
		if errors.Is(err, errRescued) {
			// The root is posted again: the entry goes into the new thread at once, in the
			// next pass, and the incident's later entries after it.
			d.retryAt[e.StreamID] = now
			wait(e, now)
			continue
		}
		if err != nil {
			d.attempts[e.StreamID]++
			delay := backoff(d.attempts[e.StreamID])
			var rl *slack.RateLimitedError
			if errors.As(err, &rl) && rl.RetryAfter > 0 {
				delay = rl.RetryAfter
			}
			if !errors.Is(err, errWaiting) && !errors.Is(err, errPaused) {
				d.log.Warn("slack delivery failed; will retry", "incident", e.Incident, "kind", e.Kind,
					"attempt", d.attempts[e.StreamID], "retry_in", delay, "err", err)
			}
			d.retryAt[e.StreamID] = d.now().Add(delay)
			wait(e, d.retryAt[e.StreamID])
			continue
		}
		delivered++
		if q := e.Queued(); !q.IsZero() {
			d.metrics.DeliveryLatency.Observe(d.now().Sub(q).Seconds())
		}
		delete(d.retryAt, e.StreamID)
		delete(d.attempts, e.StreamID)
		delete(d.replied, e.StreamID)
		delete(d.posted, e.StreamID)
		delete(d.rescued, e.StreamID)
		delete(d.paged, e.StreamID)
	}
	return delivered, nil
}

// errWaiting means an entry must wait for an earlier one of its incident.
var errWaiting = errors.New("waiting for an earlier delivery of the incident")

func backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(attempt, 8)
	return min(d, time.Minute)
}

// deliver posts one entry. A nil error means it is done (delivered, or dropped for good with
// a log line); an error means retry later.
func (d *deliverer) deliver(ctx context.Context, e state.Delivery) error {
	st := d.out
	// The entry names its channel: a paused channel's entries wait without a read of Redis,
	// which during a storm of new incidents is most of them.
	if err := d.pausedErr(e.Channel); err != nil {
		return err
	}
	if e.Kind == state.KindNotice {
		if _, done := d.posted[e.StreamID]; !done {
			if _, err := d.slack.Post(ctx, e.Channel, Message{Text: noticeText(e.Detail)}); err != nil {
				return d.slackErr(ctx, e, e.Channel, "chat.postMessage", err)
			}
			d.slackOK()
			d.posted[e.StreamID] = ""
		}
		return st.Drop(ctx, e)
	}
	inc, err := st.Head(ctx, e.Incident)
	if errors.Is(err, state.ErrNotFound) {
		// Closed long ago and expired (alerts.incident_retention) before Slack took this.
		d.log.Warn("outbox entry of an incident that no longer exists; dropped", "incident", e.Incident, "kind", e.Kind)
		return st.Complete(ctx, e, "", "")
	}
	if err != nil {
		return err
	}
	prog := inc.Delivery()
	if e.Seq <= prog.Delivered {
		return st.Complete(ctx, e, "", "") // delivered before; only the ack was lost
	}
	if e.Seq > prog.Delivered+1 {
		return errWaiting
	}
	if err := d.pausedErr(prog.Channel); err != nil {
		return err // an entry queued before entries named their channel
	}
	switch e.Kind {
	case state.KindRoot:
		// A root Slack took is never posted again, even when recording its ts failed.
		ts, done := d.posted[e.StreamID]
		if !done {
			ts, err = d.slack.Post(ctx, inc.Channel, d.root(inc))
			if err != nil {
				return d.orphaned(ctx, e, inc, inc.Channel, "chat.postMessage", err)
			}
			d.slackOK()
			d.posted[e.StreamID] = ts
		}
		return st.Complete(ctx, e, ts, inc.Channel)
	case state.KindFlush, state.KindEvent, state.KindUpdate: // an update has no thread text: it edits the root
		if prog.RootTS == "" {
			d.log.Error("incident has no root message; thread update dropped", "incident", e.Incident, "kind", e.Kind)
			return st.Complete(ctx, e, "", "")
		}
		// The phone stops ringing once: before Slack, which may be what nobody reads.
		if closes := e.Name == state.EventResolved || e.Name == state.EventMergedInto; closes && d.pager != nil && !d.paged[e.StreamID] {
			d.pager.Resolved(ctx, inc)
			d.paged[e.StreamID] = true
		}
		// A quiet incident's repeats only edit the root (a probe failing all night says so
		// once); its other events still reply.
		quietRepeat := e.Kind == state.KindFlush && inc.Quiet
		if text := threadText(e); text != "" && !quietRepeat && !d.replied[e.StreamID] {
			m := Message{Text: text, ThreadTS: prog.RootTS, File: threadFile(e)}
			if _, err := d.slack.Post(ctx, prog.Channel, m); err != nil {
				return d.orphaned(ctx, e, inc, prog.Channel, map[bool]string{true: "files.upload", false: "chat.postMessage"}[m.File != nil], err)
			}
			d.slackOK()
			d.replied[e.StreamID] = true
		}
		if err := d.slack.Update(ctx, prog.Channel, prog.RootTS, d.root(inc)); err != nil {
			return d.orphaned(ctx, e, inc, prog.Channel, "chat.update", err)
		}
		d.slackOK()
		d.lifecycleClocks(e, inc)
		return st.Complete(ctx, e, "", "")
	}
	d.log.Error("unknown outbox entry dropped", "kind", e.Kind, "incident", e.Incident)
	return st.Complete(ctx, e, "", "")
}

// lifecycleClocks observes an incident's time to acknowledge and to resolve when the event
// that says so is delivered: once per incident across replicas (the outbox delivers once).
func (d *deliverer) lifecycleClocks(e state.Delivery, inc *state.Incident) {
	if e.Kind != state.KindEvent || inc.FirstSeen.IsZero() {
		return
	}
	switch {
	case e.Name == state.EventAcknowledged && !inc.AckAt.IsZero():
		d.metrics.TimeToAcknowledge.WithLabelValues(inc.Source).Observe(inc.AckAt.Sub(inc.FirstSeen).Seconds())
	case e.Name == state.EventResolved && !inc.ResolvedAt.IsZero():
		d.metrics.TimeToResolve.WithLabelValues(inc.Source).Observe(inc.ResolvedAt.Sub(inc.FirstSeen).Seconds())
	}
}

// root is the incident's root message, its pipeline described (pipelines[].description).
func (d *deliverer) root(inc *state.Incident) Message {
	return Message{Text: rootText(inc), Blocks: rootBlocks(inc, d.describe[inc.Pipeline])}
}

// errPaused means Slack asked to wait before posting to the entry's channel again.
var errPaused = errors.New("slack paused the channel")

// pausedErr is a rate-limit error while Slack has paused channel (HTTP 429), else nil.
func (d *deliverer) pausedErr(channel string) error {
	if until, ok := d.paused[channel]; ok && channel != "" && d.now().Before(until) {
		return fmt.Errorf("%w: %w", errPaused, &slack.RateLimitedError{RetryAfter: until.Sub(d.now())})
	}
	return nil
}

// slackOK records that Slack accepted the tokens again.
func (d *deliverer) slackOK() { d.authBad.Store(false) }

// slackErr decides whether a Slack error is worth retrying; errors no retry can fix drop the
// entry with an error log so that the incident's later messages are not held back forever.
func (d *deliverer) slackErr(ctx context.Context, e state.Delivery, channel, method string, err error) error {
	d.metrics.SlackErrors.WithLabelValues(method, slackCode(err)).Inc()
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		d.paused[channel] = d.now().Add(rl.RetryAfter)
		return err
	}
	if permanent(err) {
		d.log.Error("slack rejected a delivery; dropped", "method", method, "incident", e.Incident,
			"kind", e.Kind, "channel", channel, "err", err)
		if e.Kind == state.KindNotice {
			return d.out.Drop(ctx, e)
		}
		return d.out.Complete(ctx, e, "", "")
	}
	if isInvalidAuth(err) {
		d.authBad.Store(true)
	}
	return err
}

// slackCode is a bounded label for a Slack error.
func slackCode(err error) string {
	var rl *slack.RateLimitedError
	var se slack.SlackErrorResponse
	var sc slack.StatusCodeError
	switch {
	case errors.As(err, &rl):
		return "ratelimited"
	case errors.As(err, &se):
		return se.Err
	case errors.As(err, &sc):
		return "http_" + strconv.Itoa(sc.Code)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	if msg := err.Error(); len(msg) < 40 && !strings.ContainsAny(msg, " :/") {
		return msg // slack-go returns bare codes such as "channel_not_found"
	}
	return "other"
}

// permanent is true for Slack errors that no retry can fix.
func permanent(err error) bool {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		err = errors.New(se.Err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return false
	}
	for _, code := range []string{"channel_not_found", "not_in_channel", "is_archived", "msg_too_long",
		"invalid_blocks", "no_text", "message_not_found", "cant_update_message", "invalid_arguments"} {
		if strings.Contains(err.Error(), code) {
			return true
		}
	}
	return false
}
