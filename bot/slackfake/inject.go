package slackfake

import (
	"context"
	"fmt"
	"strings"
)

// SlashCommand is a slash command a user types.
type SlashCommand struct {
	ChannelID string
	UserID    string
	Text      string // what follows the command: "lag sms-replies"
	Command   string // "/streamwatch"
}

// Mention is a user's message that mentions the bot, delivered as an app_mention event.
type Mention struct {
	ChannelID string
	UserID    string
	// Text as typed. Slack sends app_mention only for text that mentions the app, so
	// "<@BotUserID> " is put in front of text that does not.
	Text string
	// ThreadTS puts the message in a thread: the ts of a message in the channel (a reply's ts
	// means its thread). SendAppMention fails when no such message exists.
	ThreadTS string
}

// BlockAction is a click on an interactive element (usually a button) of a message in the
// model.
type BlockAction struct {
	UserID    string
	ChannelID string
	MessageTS string
	ActionID  string
	Value     string // "" means the element's own value; for an overflow menu, the option's value
}

// SendSlashCommand delivers a slash_commands envelope (accepts_response_payload true) with a
// fresh response_url. A slash command carries no thread, as on Slack.
func (s *Server) SendSlashCommand(ctx context.Context, cmd SlashCommand) (Envelope, error) {
	if cmd.Command == "" {
		cmd.Command = "/streamwatch"
	}
	s.mu.Lock()
	if !s.channelExistsLocked(cmd.ChannelID) {
		s.mu.Unlock()
		return Envelope{}, fmt.Errorf("slackfake: slash command in channel %q: channel_not_found", cmd.ChannelID)
	}
	id := s.envelopeIDLocked()
	url, hook := s.newResponseURLLocked("commands", id, cmd.ChannelID, cmd.UserID, "")
	payload := marshal(struct {
		Token               string `json:"token"`
		TeamID              string `json:"team_id"`
		TeamDomain          string `json:"team_domain"`
		ChannelID           string `json:"channel_id"`
		ChannelName         string `json:"channel_name"`
		UserID              string `json:"user_id"`
		UserName            string `json:"user_name"`
		Command             string `json:"command"`
		Text                string `json:"text"`
		APIAppID            string `json:"api_app_id"`
		IsEnterpriseInstall string `json:"is_enterprise_install"` // a string: the payload is a form, as JSON
		ResponseURL         string `json:"response_url"`
		TriggerID           string `json:"trigger_id"`
	}{
		Token: verificationToken, TeamID: s.opts.TeamID, TeamDomain: s.opts.TeamDomain,
		ChannelID: cmd.ChannelID, ChannelName: s.channelNameLocked(cmd.ChannelID),
		UserID: cmd.UserID, UserName: lower(cmd.UserID), Command: cmd.Command, Text: cmd.Text,
		APIAppID: s.opts.AppID, IsEnterpriseInstall: "false", ResponseURL: url,
		TriggerID: s.triggerIDLocked(),
	})
	env := &envelope{
		Envelope:        Envelope{ID: id, Type: "slash_commands", Payload: payload, ResponseURL: url},
		acceptsResponse: true, hook: hook,
	}
	s.addEnvelopeLocked(env)
	s.mu.Unlock()
	return env.Envelope, s.deliver(ctx, env, 0, "")
}

// SendAppMention records the user's message in the channel and delivers an events_api envelope
// with an app_mention event for it. The returned Envelope's MessageTS is the message's ts.
func (s *Server) SendAppMention(ctx context.Context, m Mention) (Envelope, error) {
	s.mu.Lock()
	if !s.channelExistsLocked(m.ChannelID) {
		s.mu.Unlock()
		return Envelope{}, fmt.Errorf("slackfake: app mention in channel %q: channel_not_found", m.ChannelID)
	}
	threadTS := ""
	if m.ThreadTS != "" {
		root := s.findLocked(m.ChannelID, m.ThreadTS)
		if root == nil {
			s.mu.Unlock()
			return Envelope{}, fmt.Errorf("slackfake: app mention in thread %s of %s: thread_not_found", m.ThreadTS, m.ChannelID)
		}
		threadTS = root.TS
		if root.ThreadTS != "" {
			threadTS = root.ThreadTS
		}
	}
	text := m.Text
	if botRef := "<@" + s.opts.BotUserID + ">"; !strings.Contains(text, botRef) {
		text = botRef + " " + text
	}
	msg := &Message{Channel: m.ChannelID, TS: s.nextTSLocked(), ThreadTS: threadTS, User: m.UserID,
		Text: text, Mentions: mentions(text, nil)}
	s.channels[m.ChannelID] = append(s.channels[m.ChannelID], msg)

	eventID := "Ev" + s.randLocked(alnum, 10)
	type appMention struct {
		ClientMsgID string `json:"client_msg_id"`
		Type        string `json:"type"`
		Text        string `json:"text"`
		User        string `json:"user"`
		TS          string `json:"ts"`
		Team        string `json:"team"`
		ThreadTS    string `json:"thread_ts,omitempty"`
		Channel     string `json:"channel"`
		EventTS     string `json:"event_ts"`
	}
	type authorization struct {
		EnterpriseID        *string `json:"enterprise_id"`
		TeamID              string  `json:"team_id"`
		UserID              string  `json:"user_id"`
		IsBot               bool    `json:"is_bot"`
		IsEnterpriseInstall bool    `json:"is_enterprise_install"`
	}
	payload := marshal(struct {
		Token              string          `json:"token"`
		TeamID             string          `json:"team_id"`
		APIAppID           string          `json:"api_app_id"`
		Event              appMention      `json:"event"`
		Type               string          `json:"type"`
		EventID            string          `json:"event_id"`
		EventTime          int64           `json:"event_time"`
		Authorizations     []authorization `json:"authorizations"`
		IsExtSharedChannel bool            `json:"is_ext_shared_channel"`
		EventContext       string          `json:"event_context"`
	}{
		Token: verificationToken, TeamID: s.opts.TeamID, APIAppID: s.opts.AppID,
		Event: appMention{
			ClientMsgID: s.uuidLocked(), Type: "app_mention", Text: text, User: m.UserID, TS: msg.TS,
			Team: s.opts.TeamID, ThreadTS: threadTS, Channel: m.ChannelID, EventTS: msg.TS,
		},
		Type: "event_callback", EventID: eventID, EventTime: s.opts.Clock().Unix(),
		Authorizations: []authorization{{TeamID: s.opts.TeamID, UserID: s.opts.BotUserID, IsBot: true}},
		EventContext:   "4-" + s.randLocked(alnum+"abcdefghijklmnopqrstuvwxyz", 40),
	})
	env := &envelope{Envelope: Envelope{ID: s.envelopeIDLocked(), Type: "events_api", Payload: payload,
		MessageTS: msg.TS, EventID: eventID}}
	s.addEnvelopeLocked(env)
	s.mu.Unlock()
	return env.Envelope, s.deliver(ctx, env, 0, "")
}

// SendBlockAction delivers an interactive envelope with a block_actions payload for a click on
// the element with a.ActionID in the message a.MessageTS (which must exist in the model, with
// that element in its blocks), carrying the message as it is now and a fresh response_url whose
// replace_original and delete_original act on that message.
func (s *Server) SendBlockAction(ctx context.Context, a BlockAction) (Envelope, error) {
	s.mu.Lock()
	msg := s.findLocked(a.ChannelID, a.MessageTS)
	ephemeral := false
	if msg == nil {
		// A button on an ephemeral message (a command's reply, seen only by its user).
		for i := len(s.ephemerals) - 1; i >= 0; i-- {
			if e := s.ephemerals[i]; e.TS == a.MessageTS && e.Channel == a.ChannelID {
				msg = &Message{Channel: e.Channel, TS: e.TS, ThreadTS: e.ThreadTS, Text: e.Text, Blocks: e.Blocks}
				ephemeral = true
				break
			}
		}
	}
	if msg == nil {
		s.mu.Unlock()
		return Envelope{}, fmt.Errorf("slackfake: block action on message %s in %s: message_not_found", a.MessageTS, a.ChannelID)
	}
	blockID, elem, ok := findAction(msg.Blocks, a.ActionID)
	if !ok {
		s.mu.Unlock()
		return Envelope{}, fmt.Errorf("slackfake: block action on message %s in %s: no element with action_id %q", a.MessageTS, a.ChannelID, a.ActionID)
	}
	action := map[string]any{"action_id": a.ActionID, "block_id": blockID, "type": "button",
		"action_ts": s.nextTSLocked()}
	for _, k := range []string{"type", "text", "value", "style"} {
		if v, ok := elem[k]; ok {
			action[k] = v
		}
	}
	if a.Value != "" {
		action["value"] = a.Value
	}
	if elem["type"] == "overflow" {
		// A menu's click carries the option chosen (BlockAction.Value names it), not a value.
		delete(action, "value")
		opts, _ := elem["options"].([]any)
		for _, o := range opts {
			if om, ok := o.(map[string]any); ok && om["value"] == a.Value {
				action["selected_option"] = om
			}
		}
		if action["selected_option"] == nil {
			s.mu.Unlock()
			return Envelope{}, fmt.Errorf("slackfake: overflow %q has no option with value %q", a.ActionID, a.Value)
		}
	}
	id := s.envelopeIDLocked()
	url, hook := s.newResponseURLLocked("actions", id, a.ChannelID, a.UserID, msg.TS)
	container := map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": a.ChannelID,
		"is_ephemeral": ephemeral}
	if msg.ThreadTS != "" {
		container["thread_ts"] = msg.ThreadTS
	}
	payload := marshal(withMessage(map[string]any{
		"type":                  "block_actions",
		"user":                  map[string]any{"id": a.UserID, "username": lower(a.UserID), "name": lower(a.UserID), "team_id": s.opts.TeamID},
		"api_app_id":            s.opts.AppID,
		"token":                 verificationToken,
		"container":             container,
		"trigger_id":            s.triggerIDLocked(),
		"team":                  map[string]any{"id": s.opts.TeamID, "domain": s.opts.TeamDomain},
		"enterprise":            nil,
		"is_enterprise_install": false,
		"channel":               map[string]any{"id": a.ChannelID, "name": s.channelNameLocked(a.ChannelID)},
		"state":                 map[string]any{"values": map[string]any{}},
		"response_url":          url,
		"actions":               []any{action},
	}, s.wireLocked(msg), ephemeral))
	env := &envelope{Envelope: Envelope{ID: id, Type: "interactive", Payload: payload, ResponseURL: url}, hook: hook}
	s.addEnvelopeLocked(env)
	s.mu.Unlock()
	return env.Envelope, s.deliver(ctx, env, 0, "")
}

// withMessage adds the clicked message to a block_actions payload; Slack leaves it out for
// ephemeral messages.
func withMessage(payload map[string]any, msg any, ephemeral bool) map[string]any {
	if !ephemeral {
		payload["message"] = msg
	}
	return payload
}

// verificationToken is the deprecated verification token Slack still puts in payloads.
const verificationToken = "fakeVerificationToken"

func (s *Server) addEnvelopeLocked(env *envelope) {
	s.envelopes[env.ID] = env
}

func (s *Server) envelopeIDLocked() string { return s.uuidLocked() }

func (s *Server) uuidLocked() string {
	const hexdigits = "0123456789abcdef"
	return s.randLocked(hexdigits, 8) + "-" + s.randLocked(hexdigits, 4) + "-4" + s.randLocked(hexdigits, 3) +
		"-a" + s.randLocked(hexdigits, 3) + "-" + s.randLocked(hexdigits, 12)
}

func (s *Server) triggerIDLocked() string {
	return s.randLocked("0123456789", 13) + "." + s.randLocked("0123456789", 13) + "." +
		s.randLocked("0123456789abcdef", 32)
}
