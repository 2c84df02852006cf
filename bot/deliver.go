package bot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/state"
)

// deliverer holds one replica's retry bookkeeping for the outbox.
type deliverer struct {
	b         *Bot
	retryAt   map[string]time.Time // stream id → not before
	attempts  map[string]int
	replied   map[string]bool      // stream id → thread reply posted, root update still to do
	posted    map[string]string    // stream id → ts of a root or notice Slack took, bookkeeping still to do
	paused    map[string]time.Time // channel → not before (HTTP 429)
	lastClaim time.Time
	// lastMaintain is when maintain last ran; pendingAt is when the entries this replica
	// holds must be read again (zero: at the next pass).
	lastMaintain, pendingAt time.Time
	// lastSweep is when a slice of the sweep for incidents without a TTL last ran; swept is
	// true once the sweep is done.
	lastSweep time.Time
	swept     bool
	// flooded are the channels whose flood gauge is set (to 1 or back to 0).
	flooded map[string]bool
}

// runDelivery delivers the outbox until ctx ends. Entries of one incident go out in sequence
// order, across replicas; a failed entry is retried with backoff (or Slack's Retry-After) and
// holds back the later entries of its incident; entries of a replica that died are claimed.
func (b *Bot) runDelivery(ctx context.Context) {
	d := &deliverer{b: b, retryAt: map[string]time.Time{}, attempts: map[string]int{},
		replied: map[string]bool{}, posted: map[string]string{}, paused: map[string]time.Time{},
		flooded: map[string]bool{}}
	for ctx.Err() == nil {
		if err := b.opt.Store.EnsureOutbox(ctx); err == nil {
			break
		}
		if !sleep(ctx, time.Second) {
			return
		}
	}
	for ctx.Err() == nil {
		if err := d.pass(ctx); err != nil && ctx.Err() == nil {
			d.pendingAt = time.Time{} // the pass stopped half way: look at everything again
			b.log.Warn("outbox pass", "err", err)
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
	b := d.b
	st := b.opt.Store
	now := time.Now()
	// Housekeeping runs at most twice a Poll, not once per pass: during a storm of new
	// incidents a pass starts for every few entries.
	if now.Sub(d.lastMaintain) >= b.opt.Poll/2 {
		d.lastMaintain = now
		if err := d.maintain(ctx); err != nil {
			return err
		}
	}
	next := d.pendingAt // when the pending entries are not read in this pass, their time stands
	blocked := map[string]time.Time{}
	delivered := 0
	var pending []state.Delivery
	if !now.Before(d.pendingAt) {
		next = now.Add(pendingRecheck)
		var err error
		if pending, err = st.ReadOutbox(ctx, b.opt.Replica, true, 200, 0); err != nil {
			return err
		}
		n, err := d.deliverAll(ctx, pending, blocked, &next)
		if err != nil {
			return err
		}
		delivered += n
	}
	fresh, err := st.ReadOutbox(ctx, b.opt.Replica, false, 200, b.opt.Poll)
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
		sleep(ctx, min(time.Until(next), b.opt.Poll))
	}
	return nil
}

// pendingRecheck is the longest the deliverer goes without reading its pending entries.
const pendingRecheck = 5 * time.Second

// maintain ends floods and silences whose time is up, moves due coalesced updates into the outbox,
// auto-resolves, claims the entries of a stalled replica, sweeps a slice of old closed
// incidents and updates the gauges.
func (d *deliverer) maintain(ctx context.Context) error {
	b := d.b
	st := b.opt.Store
	if chans, err := st.EndFloods(ctx); err != nil {
		return err
	} else if len(chans) > 0 {
		b.log.Info("alert flood over: new alerts open their own incidents again", "channels", chans)
	}
	// Silences whose time is up end before the pump, so that what waited for them goes out now.
	if ids, err := st.ExpireSilences(ctx); err != nil {
		return err
	} else if len(ids) > 0 {
		b.log.Info("silences ended", "silences", ids)
	}
	if _, err := st.Pump(ctx); err != nil {
		return err
	}
	if ids, err := st.AutoResolveDue(ctx); err != nil {
		return err
	} else if len(ids) > 0 {
		b.log.Info("auto-resolved", "incidents", ids)
	}
	if time.Since(d.lastClaim) > b.opt.ClaimAfter/2 {
		d.lastClaim = time.Now()
		claimed, err := st.ClaimStale(ctx, b.opt.Replica, b.opt.ClaimAfter)
		if err != nil {
			return err
		}
		if len(claimed) > 0 {
			b.log.Info("claimed outbox entries of a stalled replica", "entries", len(claimed))
			d.pendingAt = time.Time{}
		}
	}
	if !d.swept && time.Since(d.lastSweep) > sweepEvery {
		d.lastSweep = time.Now()
		done, err := st.Sweep(ctx)
		if err != nil {
			return err
		}
		d.swept = done
	}
	if stats, err := st.Stats(ctx); err == nil {
		d.gauges(stats)
	}
	return nil
}

// sweepEvery paces the sweep that gives closed incidents of an older version their TTL: a
// slice of the keyspace every few seconds is no load, and the sweep runs once per database.
const sweepEvery = 5 * time.Second

// gauges publishes the state's gauges.
func (d *deliverer) gauges(stats state.Stats) {
	m := d.b.opt.Metrics
	m.OutboxDepth.Set(float64(stats.OutboxDepth))
	m.IncidentsOpen.Set(float64(stats.OpenIncidents))
	age := 0.0
	if !stats.OutboxOldest.IsZero() {
		age = max(time.Since(stats.OutboxOldest).Seconds(), 0)
	}
	m.OutboxOldest.Set(age)
	now := map[string]bool{}
	for _, ch := range stats.Floods {
		now[ch] = true
	}
	for ch := range d.flooded {
		if !now[ch] {
			m.Flood.WithLabelValues(ch).Set(0)
		}
	}
	for ch := range now {
		m.Flood.WithLabelValues(ch).Set(1)
		d.flooded[ch] = true
	}
}

// deliverAll delivers list in order and counts what it delivered; it stops at a Redis outage
// (the whole pass is retried), so that the log says "redis unavailable" once, not "slack
// delivery failed" per entry. blocked holds incidents whose earlier entry waits, with the time
// it waits for; next is lowered to the earliest time a waiting entry may go.
func (d *deliverer) deliverAll(ctx context.Context, list []state.Delivery, blocked map[string]time.Time, next *time.Time) (int, error) {
	now := time.Now()
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
		callCtx, cancel := context.WithTimeout(ctx, deliveryTimeout)
		err := d.deliver(callCtx, e)
		cancel()
		if errors.Is(err, state.ErrUnavailable) {
			return delivered, fmt.Errorf("outbox: %w", err)
		}
		if err != nil {
			d.attempts[e.StreamID]++
			delay := backoff(d.attempts[e.StreamID])
			var rl *slack.RateLimitedError
			if errors.As(err, &rl) && rl.RetryAfter > 0 {
				delay = rl.RetryAfter
			}
			if !errors.Is(err, errWaiting) && !errors.Is(err, errPaused) {
				d.b.log.Warn("slack delivery failed; will retry", "incident", e.Incident, "kind", e.Kind,
					"attempt", d.attempts[e.StreamID], "retry_in", delay, "err", err)
			}
			d.retryAt[e.StreamID] = time.Now().Add(delay)
			wait(e, d.retryAt[e.StreamID])
			continue
		}
		delivered++
		d.b.opt.Metrics.DeliveryLatency.Observe(streamAge(e.StreamID, time.Now()).Seconds())
		delete(d.retryAt, e.StreamID)
		delete(d.attempts, e.StreamID)
		delete(d.replied, e.StreamID)
		delete(d.posted, e.StreamID)
	}
	return delivered, nil
}

// deliveryTimeout bounds one delivery (its Slack calls and bookkeeping).
const deliveryTimeout = 10 * time.Second

// errWaiting means an entry must wait for an earlier one of its incident.
var errWaiting = errors.New("waiting for an earlier delivery of the incident")

func backoff(attempt int) time.Duration {
	d := 250 * time.Millisecond << min(attempt, 8)
	return min(d, time.Minute)
}

// deliver posts one entry. A nil error means it is done (delivered, or dropped for good with
// a log line); an error means retry later.
func (d *deliverer) deliver(ctx context.Context, e state.Delivery) error {
	b := d.b
	st := b.opt.Store
	// The entry names its channel: a paused channel's entries wait without a read of Redis,
	// which during a storm of new incidents is most of them.
	if err := d.pausedErr(e.Channel); err != nil {
		return err
	}
	if e.Kind == state.KindNotice {
		if _, done := d.posted[e.StreamID]; !done {
			if _, _, err := b.opt.API.PostMessageContext(ctx, e.Channel, slack.MsgOptionText(clip(escape(valid(e.Detail)), maxThreadText), false),
				slack.MsgOptionDisableLinkUnfurl()); err != nil {
				return d.slackErr(ctx, e, e.Channel, "chat.postMessage", err)
			}
			d.slackOK()
			d.posted[e.StreamID] = ""
		}
		return st.Drop(ctx, e)
	}
	inc, err := st.Get(ctx, e.Incident)
	if errors.Is(err, state.ErrNotFound) {
		// Closed long ago and expired (alerts.incident_retention) before Slack took this.
		b.log.Warn("outbox entry of an incident that no longer exists; dropped", "incident", e.Incident, "kind", e.Kind)
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
			_, ts, err = b.opt.API.PostMessageContext(ctx, inc.Channel, slack.MsgOptionText(rootText(inc), false),
				slack.MsgOptionBlocks(rootBlocks(inc)...), slack.MsgOptionDisableLinkUnfurl())
			if err != nil {
				return d.slackErr(ctx, e, inc.Channel, "chat.postMessage", err)
			}
			d.slackOK()
			d.posted[e.StreamID] = ts
		}
		return st.Complete(ctx, e, ts, inc.Channel)
	case state.KindFlush, state.KindEvent:
		if prog.RootTS == "" {
			b.log.Error("incident has no root message; thread update dropped", "incident", e.Incident, "kind", e.Kind)
			return st.Complete(ctx, e, "", "")
		}
		// A quiet incident's repeats only edit the root (a probe failing all night says so
		// once); its other events still reply.
		quietRepeat := e.Kind == state.KindFlush && inc.Quiet
		if text := threadText(e); text != "" && !quietRepeat && !d.replied[e.StreamID] {
			if _, _, err := b.opt.API.PostMessageContext(ctx, prog.Channel, slack.MsgOptionText(text, false),
				slack.MsgOptionTS(prog.RootTS), slack.MsgOptionDisableLinkUnfurl()); err != nil {
				return d.slackErr(ctx, e, prog.Channel, "chat.postMessage", err)
			}
			d.slackOK()
			d.replied[e.StreamID] = true
		}
		if _, _, _, err := b.opt.API.UpdateMessageContext(ctx, prog.Channel, prog.RootTS,
			slack.MsgOptionText(rootText(inc), false), slack.MsgOptionBlocks(rootBlocks(inc)...)); err != nil {
			return d.slackErr(ctx, e, prog.Channel, "chat.update", err)
		}
		d.slackOK()
		return st.Complete(ctx, e, "", "")
	}
	b.log.Error("unknown outbox entry dropped", "kind", e.Kind, "incident", e.Incident)
	return st.Complete(ctx, e, "", "")
}

// errPaused means Slack asked to wait before posting to the entry's channel again.
var errPaused = errors.New("slack paused the channel")

// pausedErr is a rate-limit error while Slack has paused channel (HTTP 429), else nil.
func (d *deliverer) pausedErr(channel string) error {
	if until, ok := d.paused[channel]; ok && channel != "" && time.Now().Before(until) {
		return fmt.Errorf("%w: %w", errPaused, &slack.RateLimitedError{RetryAfter: time.Until(until)})
	}
	return nil
}

// slackOK records that Slack accepted the tokens again.
func (d *deliverer) slackOK() { d.b.authBad.Store(false) }

// slackErr decides whether a Slack error is worth retrying; errors no retry can fix drop the
// entry with an error log so that the incident's later messages are not held back forever.
func (d *deliverer) slackErr(ctx context.Context, e state.Delivery, channel, method string, err error) error {
	d.b.opt.Metrics.SlackErrors.WithLabelValues(method, slackCode(err)).Inc()
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		d.paused[channel] = time.Now().Add(rl.RetryAfter)
		return err
	}
	if permanent(err) {
		d.b.log.Error("slack rejected a delivery; dropped", "method", method, "incident", e.Incident,
			"kind", e.Kind, "channel", channel, "err", err)
		if e.Kind == state.KindNotice {
			return d.b.opt.Store.Drop(ctx, e)
		}
		return d.b.opt.Store.Complete(ctx, e, "", "")
	}
	if isInvalidAuth(err) {
		d.b.authBad.Store(true)
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
