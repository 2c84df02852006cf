package slackfake

import (
	"encoding/json"
	"slices"
	"time"
)

// Call is one request the fake answered: a Web API method or a response_url POST (Method
// "response_url").
type Call struct {
	Method string
	// Params are the request's arguments, flattened: form values as sent, JSON fields as strings
	// (nested objects and arrays as compact JSON, e.g. "blocks"). The token is left out.
	Params map[string]string
	Status int    // HTTP status of the answer
	Error  string // the answer's "error" ("" when ok)
	At     time.Time
}

// Message is a message in a channel, as the fake's model holds it: posted by the bot
// (chat.postMessage, an in_channel response) or by a user (an injected app mention).
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // the root's ts for a thread reply; "" for a root
	User     string
	BotID    string // set when the bot posted it
	Text     string
	Blocks   json.RawMessage // compact JSON array, nil without blocks
	Edits    int             // chat.update and replace_original calls that changed it
	// Mentions lists every mention that notifies someone, in text or blocks: "<@U…>",
	// "<!here>", "<!channel>", "<!everyone>", "<!subteam^S…>".
	Mentions []string
	// Files are the ids of the files the message shares (files.completeUploadExternal).
	Files []string
	// Deleted marks a tombstone: a root a person deleted while it had replies (DeleteMessage).
	Deleted bool
}

// Ephemeral is a message only one user sees.
type Ephemeral struct {
	Channel  string
	User     string
	TS       string // message_ts; ephemerals from response_url and acks get one too
	ThreadTS string
	Text     string
	Blocks   json.RawMessage
	Mentions []string
	// Source is how it was posted: "chat.postEphemeral", "response_url" or "ack".
	Source string
}

// ResponsePost is one POST to a response_url, accepted or not.
type ResponsePost struct {
	URL             string
	EnvelopeID      string // the envelope whose payload carried the URL
	Channel         string
	User            string
	Text            string
	Blocks          json.RawMessage
	ResponseType    string // "ephemeral" (the default) or "in_channel"
	ReplaceOriginal bool
	DeleteOriginal  bool
	ThreadTS        string
	Mentions        []string
	Status          int    // HTTP status of the answer
	Error           string // "" when accepted, else e.g. "used_url", "expired_url", "no_text"
	At              time.Time
}

// Ack is one acknowledgement the client sent on a socket.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // nil when the ack carried none
	Attempt    int             // retry_attempt of the delivery it answered
	Latency    time.Duration   // real time since that delivery
	Late       bool            // Latency exceeded Options.AckTimeout: Slack would have retried
	Unknown    bool            // no envelope with this ID was ever sent
	At         time.Time
}

// Calls returns every call so far, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallsTo returns the calls of one method ("chat.postMessage", "response_url", …).
func (s *Server) CallsTo(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Messages returns a channel's messages, roots and thread replies together, oldest first.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.channels[channel]))
	for _, m := range s.channels[channel] {
		out = append(out, *m)
	}
	return out
}

// Thread returns a thread's root followed by its replies, oldest first; nil when rootTS names
// no message in channel.
func (s *Server) Thread(channel, rootTS string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.channels[channel] {
		if m.TS == rootTS || m.ThreadTS == rootTS {
			out = append(out, *m)
		}
	}
	if len(out) == 0 || out[0].TS != rootTS {
		return nil
	}
	return out
}

// Message returns the message with ts in channel.
func (s *Server) Message(channel, ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.findLocked(channel, ts); m != nil {
		return *m, true
	}
	return Message{}, false
}

// Ephemerals returns every ephemeral message, oldest first.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemerals)
}

// ResponsePosts returns every POST to a response_url, oldest first.
func (s *Server) ResponsePosts() []ResponsePost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.responses)
}

// Acks returns every ack received, oldest first.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.acks)
}

// RateLimited counts the HTTP 429 answers so far: the per-channel limit's and injected ones.
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ratelimits
}

// SetUserGroup sets the members usergroups.users.list answers for a usergroup.
func (s *Server) SetUserGroup(id string, users []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = slices.Clone(users)
	s.notifyLocked()
}

func (s *Server) findLocked(channel, ts string) *Message {
	for _, m := range s.channels[channel] {
		if m.TS == ts {
			return m
		}
	}
	return nil
}
