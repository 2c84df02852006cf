package slackfake

import (
	"encoding/json"
	"net/http"
	"time"
)

// response_url limits, as documented by Slack.
const (
	responseURLUses     = 5
	responseURLLifetime = 30 * time.Minute
)

// responseURL is a response_url the fake handed out in a payload.
type responseURL struct {
	envelopeID string
	channel    string
	user       string
	messageTS  string // the clicked message, for block actions
	created    time.Time
	uses       int
}

// newResponseURLLocked makes a response_url like Slack's
// (https://hooks.slack.com/commands/T…/1234/secret) that points at the fake.
func (s *Server) newResponseURLLocked(kind, envelopeID, channel, user, messageTS string) (string, *responseURL) {
	path := "/" + kind + "/" + s.opts.TeamID + "/" + s.randLocked("0123456789", 13) + "/" +
		s.randLocked(alnum+"abcdefghijklmnopqrstuvwxyz", 24)
	hook := &responseURL{envelopeID: envelopeID, channel: channel, user: user,
		messageTS: messageTS, created: s.opts.Clock()}
	s.hooks[path] = hook
	return s.base + path, hook
}

// responseBody is a message sent to a response_url, or as a slash command's ack payload.
type responseBody struct {
	Text            string          `json:"text"`
	Blocks          json.RawMessage `json:"blocks"`
	ResponseType    string          `json:"response_type"`
	ReplaceOriginal json.RawMessage `json:"replace_original"` // Slack takes true or "true"
	DeleteOriginal  json.RawMessage `json:"delete_original"`
	ThreadTS        string          `json:"thread_ts"`
}

func truthy(raw json.RawMessage) bool {
	s := string(raw)
	return s == "true" || s == `"true"`
}

// handleResponse serves POSTs to the response_urls the fake handed out.
//
// Accepted posts answer HTTP 200 {"ok":true}. Refusals answer like Slack's hooks do, with a
// plain-text error code: 404 used_url after 5 uses, 404 expired_url after 30 minutes (by
// Options.Clock), 404 invalid_url for a URL the fake never made, 400 invalid_payload, no_text
// or invalid_blocks for bad bodies. Only accepted posts count as uses.
func (s *Server) handleResponse(w http.ResponseWriter, r *http.Request) {
	var raw map[string]json.RawMessage
	decodeErr := json.NewDecoder(r.Body).Decode(&raw)
	params := map[string]string{}
	for k, v := range raw {
		params[k] = flatten(v)
	}
	var body responseBody
	if decodeErr == nil {
		b, _ := json.Marshal(raw)
		decodeErr = json.Unmarshal(b, &body)
	}

	s.mu.Lock()
	fault, hasFault := s.popFaultLocked("response_url")
	hook := s.hooks[r.URL.Path]
	post := ResponsePost{
		URL: s.base + r.URL.Path, Text: body.Text, ResponseType: body.ResponseType,
		ReplaceOriginal: truthy(body.ReplaceOriginal), DeleteOriginal: truthy(body.DeleteOriginal),
		ThreadTS: body.ThreadTS, At: s.opts.Clock(),
	}
	if hook != nil {
		post.EnvelopeID, post.Channel, post.User = hook.envelopeID, hook.channel, hook.user
	}
	refuse := func(status int, code string) answer { return answer{status: status, text: code} }
	var a answer
	switch {
	case hasFault && fault.failing():
		a = fault.answer()
	case hook == nil:
		a = refuse(http.StatusNotFound, "invalid_url")
	case s.opts.Clock().Sub(hook.created) > responseURLLifetime:
		a = refuse(http.StatusNotFound, "expired_url")
	case hook.uses >= responseURLUses:
		a = refuse(http.StatusNotFound, "used_url")
	case decodeErr != nil:
		a = refuse(http.StatusBadRequest, "invalid_payload")
	default:
		var code string
		post.Blocks, post.Mentions, code = s.respondLocked(hook, body, "response_url")
		if code != "" {
			a = refuse(http.StatusBadRequest, code)
		} else {
			hook.uses++
			a = okAnswer(nil)
		}
	}
	post.Status, post.Error = a.status, a.errCode()
	s.responses = append(s.responses, post)
	s.recordLocked("response_url", params, a)
	s.mu.Unlock()

	if hasFault && fault.Delay > 0 {
		s.hold(r, fault.Delay)
	}
	a.write(w)
}

// respondLocked applies a response (response_url post or ack payload) to the model: delete or
// replace the clicked message, post an in_channel message from the bot, or else an ephemeral
// message to the user. It returns the parsed blocks and mentions, or Slack's error code.
func (s *Server) respondLocked(to *responseURL, body responseBody, source string) (json.RawMessage, []string, string) {
	var blocks json.RawMessage
	if len(body.Blocks) > 0 && string(body.Blocks) != "null" {
		var berr *blockError
		if blocks, berr = parseBlocks(string(body.Blocks)); berr != nil {
			return nil, nil, berr.code
		}
	}
	found := mentions(body.Text, blocks)
	var original *Message
	if to.messageTS != "" {
		original = s.findLocked(to.channel, to.messageTS)
	}
	switch {
	case truthy(body.DeleteOriginal):
		if original != nil {
			msgs := s.channels[to.channel]
			for i, m := range msgs {
				if m == original {
					s.channels[to.channel] = append(msgs[:i:i], msgs[i+1:]...)
					break
				}
			}
		}
		return blocks, found, ""
	case body.Text == "" && blocks == nil:
		return nil, nil, "no_text"
	case truthy(body.ReplaceOriginal) && original != nil:
		original.Text, original.Blocks, original.Mentions = body.Text, s.fillBlockIDsLocked(blocks), found
		original.Edits++
	case body.ResponseType == "in_channel":
		threadTS := ""
		if body.ThreadTS != "" {
			if root := s.findLocked(to.channel, body.ThreadTS); root != nil {
				threadTS = root.TS
				if root.ThreadTS != "" {
					threadTS = root.ThreadTS
				}
			}
		}
		s.addBotMessageLocked(to.channel, threadTS, body.Text, s.fillBlockIDsLocked(blocks))
	default:
		s.addEphemeralLocked(to.channel, to.user, body.ThreadTS, body.Text, blocks, source)
	}
	return blocks, found, ""
}
