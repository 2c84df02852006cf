package bot

import (
	"context"
	"errors"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// Slack mishaps that would orphan an incident: a person deleted its root, or its channel no
// longer takes messages. The root is posted again (in its channel, or in slack.default_channel)
// with a line saying why, the incident records the new root (state.Relocate), and its thread
// continues there.

// orphanCase names the mishap a Slack error means for an incident's messages: message_not_found
// (the root is gone: chat.update's message_not_found, or a reply's thread_not_found),
// is_archived, channel_not_found or not_in_channel (the channel takes no messages); "" for any
// other error.
func orphanCase(err error) string {
	switch code := slackCode(err); code {
	case "message_not_found", "thread_not_found":
		return "message_not_found"
	case "is_archived", "channel_not_found", "not_in_channel":
		return code
	}
	return ""
}

// errRescued means the incident's root was posted again: the entry is delivered again at once,
// into the new thread.
var errRescued = errors.New("the incident's root was posted again")

// rescue is how far the rescue of one entry's incident got, so that a retry never posts the new
// root twice.
type rescue struct {
	channel, ts string
	noted       bool
}

// rescueTarget is where an incident whose root failed with case goes: its own channel when
// only the message is gone, else the default channel; "" when there is nowhere to go.
func (d *deliverer) rescueTarget(from, kase string) string {
	if kase == "message_not_found" {
		return from
	}
	if d.defaultChannel == "" || d.defaultChannel == from {
		return ""
	}
	return d.defaultChannel
}

// rescueRoot posts inc's root in to, and under it the line that says why, once per entry
// however often it is retried. It returns the new root's ts.
func (d *deliverer) rescueRoot(ctx context.Context, e state.Delivery, inc *state.Incident, from, to, kase string) (string, error) {
	r, ok := d.rescued[e.StreamID]
	if !ok || r.channel != to {
		ts, err := d.slack.Post(ctx, to, d.root(inc))
		if err != nil {
			return "", err
		}
		d.slackOK()
		r = rescue{channel: to, ts: ts}
		d.rescued[e.StreamID] = r
		d.metrics.SlackOrphaned.WithLabelValues(kase).Inc()
		d.log.Warn("incident's slack root posted again", "incident", inc.ID, "case", kase, "from", from, "to", to)
	}
	if !r.noted {
		if _, err := d.slack.Post(ctx, to, Message{Text: rescueNote(from, to, kase), ThreadTS: r.ts}); err != nil {
			return "", err
		}
		r.noted = true
		d.rescued[e.StreamID] = r
	}
	return r.ts, nil
}

// rescueNote is the line under a root posted again (commands.RescueNote).
func rescueNote(from, to, kase string) string { return commands.RescueNote(from, to, kase, markup{}) }

// orphaned handles a Slack error of an incident's entry: when it is a mishap the incident
// survives, the root is posted again and errRescued (or, for a root entry, the completion)
// returned; otherwise the error goes to slackErr.
func (d *deliverer) orphaned(ctx context.Context, e state.Delivery, inc *state.Incident, channel, method string, err error) error {
	kase := orphanCase(err)
	if kase == "" {
		return d.slackErr(ctx, e, channel, method, err)
	}
	if e.Kind == state.KindRoot && kase == "message_not_found" {
		return d.slackErr(ctx, e, channel, method, err) // a root post has no thread to lose
	}
	to := d.rescueTarget(channel, kase)
	if to == "" {
		d.metrics.SlackOrphaned.WithLabelValues(kase).Inc()
		return d.slackErr(ctx, e, channel, method, err) // nowhere to go: dropped, with the log line
	}
	d.metrics.SlackErrors.WithLabelValues(method, slackCode(err)).Inc()
	ts, rerr := d.rescueRoot(ctx, e, inc, channel, to, kase)
	if rerr != nil {
		// A transient error is retried; a default channel that takes nothing either drops the
		// entry, as any error no retry fixes does.
		return d.slackErr(ctx, e, to, "chat.postMessage", rerr)
	}
	if e.Kind == state.KindRoot {
		return d.out.Complete(ctx, e, ts, to)
	}
	if err := d.out.Relocate(ctx, e.Incident, to, ts); err != nil {
		return err
	}
	delete(d.replied, e.StreamID) // the reply goes into the new thread too
	return errRescued
}
