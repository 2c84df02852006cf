package bot

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
	"github.com/streamwatch/streamwatch/commands"
)

// runSocket keeps a socket-mode connection up until ctx ends: slack-go reconnects on Slack's
// refresh requests by itself; this loop restarts it, with backoff, when it gives up.
func (b *Bot) runSocket(ctx context.Context) {
	sm := socketmode.New(b.opt.API, socketmode.OptionLog(slogAdapter{b.log}))
	var consumer sync.WaitGroup
	consumer.Go(func() { b.consume(ctx, sm) })
	defer consumer.Wait()
	backoff := time.Second
	for ctx.Err() == nil {
		err := sm.RunContext(ctx)
		b.connected.Store(false)
		if ctx.Err() != nil {
			return
		}
		if isInvalidAuth(err) {
			b.authBad.Store(true)
			b.log.Error("slack refused the tokens (invalid_auth): check SLACK_BOT_TOKEN and SLACK_APP_TOKEN; retrying slowly")
			backoff = 5 * time.Minute
		} else {
			b.log.Warn("slack socket stopped; reconnecting", "err", err, "in", backoff)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if backoff < time.Minute {
			backoff *= 2
		}
	}
}

func isInvalidAuth(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), "not_allowed_token_type"))
}

func (b *Bot) consume(ctx context.Context, sm *socketmode.Client) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-sm.Events:
			if !ok {
				return
			}
			b.handleEvent(ctx, sm, ev)
		}
	}
}

func (b *Bot) handleEvent(ctx context.Context, sm *socketmode.Client, ev socketmode.Event) {
	switch ev.Type {
	case socketmode.EventTypeConnected:
		b.connected.Store(true)
		b.authBad.Store(false)
		b.log.Info("slack socket connected")
	case socketmode.EventTypeDisconnect, socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError:
		b.connected.Store(false)
	case socketmode.EventTypeInvalidAuth:
		b.connected.Store(false)
		b.authBad.Store(true)
	case socketmode.EventTypeSlashCommand, socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive:
		if ev.Request == nil {
			return
		}
		// Ack at once: Slack retries an envelope that is not acked within 3 s.
		if err := sm.Ack(*ev.Request); err != nil {
			b.log.Warn("ack envelope", "err", err)
		}
		if !b.firstDelivery(ctx, "env:"+ev.Request.EnvelopeID) {
			b.log.Info("redelivered envelope ignored", "envelope", ev.Request.EnvelopeID, "retry_attempt", ev.Request.RetryAttempt)
			return
		}
		b.requests.Go(func() { b.handleRequest(ctx, ev) })
	}
}

// firstDelivery is false for an envelope or event some replica already took. When Redis is
// down the bot answers anyway: twice is better than never.
func (b *Bot) firstDelivery(ctx context.Context, id string) bool {
	first, err := b.opt.Store.FirstDelivery(ctx, id)
	if err != nil {
		b.log.Warn("envelope dedup unavailable", "err", err)
		return true
	}
	return first
}

func (b *Bot) handleRequest(ctx context.Context, ev socketmode.Event) {
	switch data := ev.Data.(type) {
	case slack.SlashCommand:
		b.slashCommand(ctx, data)
	case slackevents.EventsAPIEvent:
		if cb, ok := data.Data.(*slackevents.EventsAPICallbackEvent); ok && cb.EventID != "" {
			if !b.firstDelivery(ctx, "event:"+cb.EventID) {
				return
			}
		}
		if m, ok := data.InnerEvent.Data.(*slackevents.AppMentionEvent); ok {
			b.mention(ctx, m)
		}
	case slack.InteractionCallback:
		if data.Type == slack.InteractionTypeBlockActions {
			b.blockActions(ctx, data)
		}
	}
}

func (b *Bot) allowed(channel string) bool {
	if len(b.opt.AllowedChannels) == 0 {
		return true
	}
	for _, c := range b.opt.AllowedChannels {
		if c == channel {
			return true
		}
	}
	return false
}

// serve is the one way a Slack user's request runs, whichever way it came: a slash command, a
// mention, or a button, which stands for the command it runs. The channel rule comes first
// (outside slack.allowed_channels: refused and audited); then the command, whose handler
// applies the remediator rules and audits.
func (b *Bot) serve(ctx context.Context, req commands.Request) (commands.Reply, bool) {
	// Replies put zero-width spaces beside *, _ and ~ (see text.go); a command copied from a
	// reply comes back with them.
	req.Text = unslack(strings.ReplaceAll(req.Text, zwsp, ""))
	if !b.allowed(req.ChannelID) {
		b.audit(ctx, req, "command", req.ChannelID, "refused", "channel not in slack.allowed_channels: "+firstWords(req.Text, 3))
		return commands.ChannelRefused(), false
	}
	return b.shareFile(ctx, b.run(ctx, req)), true
}

func (b *Bot) slashCommand(ctx context.Context, sc slack.SlashCommand) {
	req := commands.Request{UserID: sc.UserID, UserName: sc.UserName, ChannelID: sc.ChannelID, Text: sc.Text, Via: "command"}
	reply, _ := b.serve(ctx, req)
	b.respond(ctx, sc.ResponseURL, sc.ChannelID, sc.UserID, reply)
}

var mentionPrefix = regexp.MustCompile(`^\s*<@[A-Z0-9]+(\|[^>]*)?>\s*`)

func (b *Bot) mention(ctx context.Context, m *slackevents.AppMentionEvent) {
	text := mentionPrefix.ReplaceAllString(m.Text, "")
	req := commands.Request{UserID: m.User, ChannelID: m.Channel, ThreadTS: m.ThreadTimeStamp, Text: text, Via: "mention"}
	reply, _ := b.serve(ctx, req)
	thread := m.ThreadTimeStamp
	if thread == "" {
		thread = m.TimeStamp
	}
	t, blocks := replyBlocks(reply)
	if _, _, err := b.opt.API.PostMessageContext(ctx, m.Channel, slack.MsgOptionText(t, false),
		slack.MsgOptionBlocks(blocks...), slack.MsgOptionTS(thread), slack.MsgOptionDisableLinkUnfurl()); err != nil {
		b.log.Error("reply to mention", "err", err, "channel", m.Channel)
	}
}

func (b *Bot) run(ctx context.Context, req commands.Request) commands.Reply {
	ctx, cancel := context.WithTimeout(ctx, b.opt.CommandTimeout)
	defer cancel()
	start := time.Now()
	reply, name := b.opt.Commands.Dispatch(ctx, req)
	if name == "" {
		name = "unknown"
	}
	b.opt.Metrics.CommandSeconds.WithLabelValues(name).Observe(time.Since(start).Seconds())
	b.log.Info("command", "user", req.UserID, "channel", req.ChannelID, "command", firstWords(req.Text, 2),
		"usage", reply.Usage, "took", time.Since(start))
	return reply
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

// respond answers through a response_url (ephemeral unless the reply is public), falling back
// to an ephemeral message.
func (b *Bot) respond(ctx context.Context, responseURL, channel, user string, reply commands.Reply) {
	text, blocks := replyBlocks(reply)
	msg := &slack.WebhookMessage{Text: text, Blocks: &slack.Blocks{BlockSet: blocks}, ResponseType: slack.ResponseTypeEphemeral}
	if reply.Public {
		msg.ResponseType = slack.ResponseTypeInChannel
	}
	if responseURL != "" {
		err := slack.PostWebhookCustomHTTPContext(ctx, responseURL, b.opt.HTTPClient, msg)
		if err == nil {
			return
		}
		b.log.Warn("reply through response_url failed; posting ephemeral", "err", err)
	}
	if _, err := b.opt.API.PostEphemeralContext(ctx, channel, user,
		slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)); err != nil {
		b.log.Error("reply", "err", err, "channel", channel)
	}
}

// blockActions handles clicks. Every button stands for a command and runs as that command
// typed by the person who clicked, in the channel of the click: the root message's
// Acknowledge, Resolve and Diagnose again are `incident ack|resolve|diagnose ID`; a reply's
// buttons carry their command.
func (b *Bot) blockActions(ctx context.Context, cb slack.InteractionCallback) {
	name := cb.User.Name
	if name == "" {
		name = cb.User.ID
	}
	for _, a := range cb.ActionCallback.BlockActions {
		var text string
		root := true
		switch a.ActionID {
		case actionAck:
			text = "incident ack " + a.Value
		case actionUnack:
			text = "incident unack " + a.Value
		case actionResolve:
			text = "incident resolve " + a.Value
		case actionDiagnose:
			text = "incident diagnose " + a.Value
		case actionSilence:
			text = "incident silence " + a.Value + " for 1h"
		case actionSilenceOf:
			id, what, _ := strings.Cut(a.SelectedOption.Value, " ")
			if what == "morning" {
				text = "incident silence " + id + " until morning"
			} else {
				text = "incident silence " + id + " for " + what
			}
		case actionUnsilence:
			text = "silence expire " + a.Value
		default:
			if !strings.HasPrefix(a.ActionID, commandAction) {
				continue
			}
			text, root = a.Value, false
		}
		req := commands.Request{UserID: cb.User.ID, UserName: name, ChannelID: cb.Channel.ID,
			ThreadTS: cb.Container.ThreadTs, Text: text, Via: "button"}
		reply, allowed := b.serve(ctx, req)
		if !root {
			b.respond(ctx, cb.ResponseURL, cb.Channel.ID, cb.User.ID, reply)
			continue
		}
		// The root message changes by itself; only a refusal or a failure needs an answer.
		if !allowed || strings.HasPrefix(reply.Text, "Sorry") || reply.Usage {
			text, blocks := replyBlocks(reply)
			if _, err := b.opt.API.PostEphemeralContext(ctx, cb.Channel.ID, cb.User.ID, slack.MsgOptionText(text, false),
				slack.MsgOptionBlocks(blocks...)); err != nil {
				b.log.Warn("ephemeral answer to button", "err", err)
			}
		}
	}
}

func (b *Bot) audit(ctx context.Context, req commands.Request, action, target, outcome, detail string) {
	if err := b.opt.Store.Audit(ctx, auditEntry(req, action, target, outcome, detail)); err != nil {
		b.log.Warn("audit", "err", err)
	}
}
