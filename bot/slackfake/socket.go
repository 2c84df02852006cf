package slackfake

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Socket-mode constants: Slack retries an unacked envelope 3 times; it closes a connection it
// asked to refresh shortly after saying so.
const (
	maxRetryAttempt = 3
	disconnectGrace = 2 * time.Second
	writeTimeout    = 5 * time.Second
)

// ErrClosed is returned by injections after Close.
var ErrClosed = errors.New("slackfake: server closed")

// socketConn is one socket-mode WebSocket.
type socketConn struct {
	id   int
	ws   *websocket.Conn
	wmu  sync.Mutex    // gorilla allows one writer at a time
	done chan struct{} // closed when the read loop ends
}

func (c *socketConn) write(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.ws.WriteMessage(websocket.TextMessage, data)
}

// envelope is a socket-mode request the fake sent, kept for acks and redelivery.
type envelope struct {
	Envelope
	acceptsResponse bool
	hook            *responseURL // where an ack payload's message goes (slash commands)
	attempt         int          // retry_attempt of the latest delivery
	sentAt          time.Time    // real time of the latest delivery
	acked           bool         // the latest delivery was acked
	timer           *time.Timer  // auto-redelivery, with Options.RedeliverUnacked
}

// Envelope describes an injected socket-mode request.
type Envelope struct {
	ID          string
	Type        string // "slash_commands", "events_api" or "interactive"
	Payload     json.RawMessage
	ResponseURL string // slash commands and block actions
	MessageTS   string // app mentions: ts of the user's message that mentions the bot
	EventID     string // app mentions
}

// wireEnvelope is an envelope as Slack writes it on the socket.
type wireEnvelope struct {
	EnvelopeID             string          `json:"envelope_id"`
	Payload                json.RawMessage `json:"payload"`
	Type                   string          `json:"type"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	RetryAttempt           int             `json:"retry_attempt"`
	RetryReason            string          `json:"retry_reason"`
}

// marshal encodes v without Go's HTML escaping: Slack writes "<@U…>", not "\u003c@U…\u003e".
func marshal(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("slackfake: marshal %T: %v", v, err)) // only the fake's own types get here
	}
	return bytes.TrimSpace(buf.Bytes())
}

// handleLink serves the WebSocket URL apps.connections.open handed out. Each ticket opens one
// socket; the first message is hello.
func (s *Server) handleLink(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[ticket]
	delete(s.tickets, ticket)
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "server closed", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1) // Close waits for this socket's read loop
	defer s.wg.Done()
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid_ticket", http.StatusUnauthorized)
		return
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	c := &socketConn{ws: ws, done: make(chan struct{})}
	defer close(c.done)
	defer ws.Close()

	// The socket is registered with its write lock held until hello is written, so that no
	// envelope overtakes hello, yet a client that has seen hello can count on Connected.
	c.wmu.Lock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.wmu.Unlock()
		return
	}
	s.connSeq++
	c.id = s.connSeq
	s.conns = append(s.conns, c)
	n := len(s.conns)
	s.goLocked(func() { s.pingLoop(c) })
	s.logf("socket %d open (%d open)", c.id, n)
	s.notifyLocked()
	s.mu.Unlock()
	hello := marshal(map[string]any{
		"type": "hello", "num_connections": n,
		"debug_info":      map[string]any{"host": "applink-slackfake", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": s.opts.AppID},
	})
	_ = ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	err = ws.WriteMessage(websocket.TextMessage, hello)
	c.wmu.Unlock()
	if err != nil {
		s.mu.Lock()
		s.removeConnLocked(c)
		s.mu.Unlock()
		return
	}

	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			s.logf("socket %d: read: %v", c.id, err)
			break
		}
		s.receive(c, data)
	}
	s.mu.Lock()
	s.removeConnLocked(c)
	s.logf("socket %d closed (%d open)", c.id, len(s.conns))
	s.mu.Unlock()
}

func (s *Server) removeConnLocked(c *socketConn) {
	if i := slices.Index(s.conns, c); i >= 0 {
		s.conns = slices.Delete(s.conns, i, i+1)
		s.notifyLocked()
	}
}

func (s *Server) pingLoop(c *socketConn) {
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-s.done:
			return
		case <-t.C:
			if c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(writeTimeout)) != nil {
				return
			}
		}
	}
}

// receive records an ack: {"envelope_id":"…"} with an optional "payload".
func (s *Server) receive(c *socketConn, data []byte) {
	var msg struct {
		EnvelopeID string          `json:"envelope_id"`
		Payload    json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.EnvelopeID == "" {
		s.logf("socket %d: ignoring a message that is not an ack: %s", c.id, data)
		return
	}
	if string(msg.Payload) == "null" {
		msg.Payload = nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ack := Ack{EnvelopeID: msg.EnvelopeID, Payload: msg.Payload, At: s.opts.Clock()}
	env := s.envelopes[msg.EnvelopeID]
	if env == nil {
		ack.Unknown = true
	} else {
		ack.Attempt = env.attempt
		ack.Latency = time.Since(env.sentAt)
		ack.Late = ack.Latency > s.opts.AckTimeout
		env.acked = true
		s.stopTimerLocked(env)
		// A slash command's ack payload is a message, shown like a response_url post.
		if env.acceptsResponse && env.hook != nil && len(msg.Payload) > 0 {
			var body responseBody
			if json.Unmarshal(msg.Payload, &body) == nil && (body.Text != "" || len(body.Blocks) > 0) {
				if _, _, code := s.respondLocked(env.hook, body, "ack"); code != "" {
					s.logf("ack %s: payload refused: %s", msg.EnvelopeID, code)
				}
			}
		}
	}
	s.acks = append(s.acks, ack)
	s.logf("socket %d: ack %s (attempt %d, %v)", c.id, msg.EnvelopeID, ack.Attempt, ack.Latency)
	s.notifyLocked()
}

func (s *Server) stopTimerLocked(env *envelope) {
	if env.timer != nil && env.timer.Stop() {
		s.wg.Done() // the timer's function will not run
	}
	env.timer = nil
}

// deliver sends env to one open socket (round-robin), waiting up to Options.ConnectWait (or
// until ctx ends) for one to open.
func (s *Server) deliver(ctx context.Context, env *envelope, attempt int, reason string) error {
	wait := time.NewTimer(s.opts.ConnectWait)
	defer wait.Stop()
	data := marshal(wireEnvelope{
		EnvelopeID: env.ID, Payload: env.Payload, Type: env.Type,
		AcceptsResponsePayload: env.acceptsResponse, RetryAttempt: attempt, RetryReason: reason,
	})
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		changed := s.changed
		var c *socketConn
		if len(s.conns) > 0 {
			c = s.conns[s.rr%len(s.conns)]
			s.rr++
			// Bookkeeping comes before the write: the client may ack before the write returns.
			s.sentLocked(env, attempt)
		}
		s.mu.Unlock()

		if c == nil {
			var err error
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				err = fmt.Errorf("slackfake: deliver %s envelope %s: no socket-mode connection: %w", env.Type, env.ID, ctx.Err())
			case <-wait.C:
				err = fmt.Errorf("slackfake: deliver %s envelope %s: no socket-mode connection within %v", env.Type, env.ID, s.opts.ConnectWait)
			case <-s.done:
				err = ErrClosed
			}
			s.mu.Lock()
			s.stopTimerLocked(env)
			s.mu.Unlock()
			return err
		}
		if err := c.write(data); err != nil {
			s.logf("socket %d: write envelope %s: %v", c.id, env.ID, err)
			s.mu.Lock()
			s.removeConnLocked(c)
			s.mu.Unlock()
			_ = c.ws.Close()
			continue
		}
		s.logf("socket %d: sent %s envelope %s (attempt %d)", c.id, env.Type, env.ID, attempt)
		return nil
	}
}

// sentLocked records a delivery of env and, with Options.RedeliverUnacked, arms its ack timer.
func (s *Server) sentLocked(env *envelope, attempt int) {
	env.attempt, env.sentAt, env.acked = attempt, time.Now(), false
	s.stopTimerLocked(env)
	if s.opts.RedeliverUnacked && attempt < maxRetryAttempt && !s.closed {
		s.wg.Add(1)
		env.timer = time.AfterFunc(s.opts.AckTimeout, func() {
			defer s.wg.Done()
			s.onAckTimeout(env, attempt)
		})
	}
	s.notifyLocked()
}

func (s *Server) onAckTimeout(env *envelope, attempt int) {
	s.mu.Lock()
	due := !s.closed && !env.acked && env.attempt == attempt
	if due {
		env.timer = nil
	}
	s.mu.Unlock()
	if due {
		if err := s.deliver(context.Background(), env, attempt+1, "timeout"); err != nil {
			s.logf("redeliver %s: %v", env.ID, err)
		}
	}
}

// Redeliver sends an envelope again, as Slack does when an ack is late: the same envelope_id and
// payload with retry_attempt one higher and retry_reason "timeout", to the next socket in turn.
// It works on acked envelopes too, to test that the client handles each envelope once.
func (s *Server) Redeliver(ctx context.Context, envelopeID string) error {
	s.mu.Lock()
	env := s.envelopes[envelopeID]
	var attempt int
	if env != nil {
		attempt = env.attempt + 1
	}
	s.mu.Unlock()
	if env == nil {
		return fmt.Errorf("slackfake: redeliver %s: no such envelope", envelopeID)
	}
	return s.deliver(ctx, env, attempt, "timeout")
}

// WaitAck waits for the first ack of an envelope.
func (s *Server) WaitAck(ctx context.Context, envelopeID string) (Ack, error) {
	var ack Ack
	err := s.WaitFor(ctx, func(s *Server) bool {
		for _, a := range s.Acks() {
			if a.EnvelopeID == envelopeID {
				ack = a
				return true
			}
		}
		return false
	})
	if err != nil {
		return Ack{}, fmt.Errorf("slackfake: wait for ack of %s: %w", envelopeID, err)
	}
	return ack, nil
}

// Connected counts the open socket-mode connections.
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// DropSockets closes every socket abruptly, without a close frame, as a network failure would,
// and returns how many it closed.
func (s *Server) DropSockets() int {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	for _, c := range conns {
		s.removeConnLocked(c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.Close()
	}
	return len(conns)
}

// SendDisconnect sends {"type":"disconnect","reason":reason} on every open socket. Slack's
// reasons are "warning" (a refresh is coming), "refresh_requested" and "link_disabled"; after
// any reason but "warning" the fake closes the socket if the client has not within 2 seconds.
func (s *Server) SendDisconnect(reason string) error {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	if len(conns) == 0 {
		return errors.New("slackfake: send disconnect: no socket-mode connection")
	}
	msg := marshal(map[string]any{"type": "disconnect", "reason": reason,
		"debug_info": map[string]any{"host": "applink-slackfake"}})
	for _, c := range conns {
		if err := c.write(msg); err != nil {
			s.logf("socket %d: write disconnect: %v", c.id, err)
			continue
		}
		if reason == "warning" {
			continue
		}
		s.mu.Lock()
		s.goLocked(func() {
			t := time.NewTimer(disconnectGrace)
			defer t.Stop()
			select {
			case <-t.C:
				_ = c.ws.Close()
			case <-c.done:
			case <-s.done:
			}
		})
		s.mu.Unlock()
	}
	return nil
}
