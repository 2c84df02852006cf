package slackfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Fault is an answer FailNext injects instead of the normal one.
//
// With Status or Error set the call has no effect: after Delay the client gets HTTP Status
// (429 carries Retry-After: RetryAfter seconds, at least 1, and {"ok":false,"error":"ratelimited"};
// other statuses a plain-text body, as Slack's 5xx pages are not JSON) or HTTP 200 with
// {"ok":false,"error":Error}.
//
// With only Delay set the call takes effect at once and its answer is held back for Delay (or
// until the client gives up): the "Slack did it, the answer was lost" case a client timeout
// produces in production.
type Fault struct {
	Status     int
	RetryAfter int // seconds, for Status 429
	Error      string
	Delay      time.Duration
}

func (f Fault) failing() bool { return (f.Status != 0 && f.Status != http.StatusOK) || f.Error != "" }

func (f Fault) answer() answer {
	switch {
	case f.Status == http.StatusTooManyRequests:
		return answer{status: f.Status, retryAfter: max(1, f.RetryAfter), body: map[string]any{"ok": false, "error": "ratelimited"}}
	case f.Status != 0 && f.Status != http.StatusOK:
		return answer{status: f.Status, text: fmt.Sprintf("slackfake: injected HTTP %d %s", f.Status, http.StatusText(f.Status))}
	default:
		return errAnswer(f.Error)
	}
}

// FailNext makes the next n calls of method (a Web API method such as "chat.postMessage", or
// "response_url") answer with f. Faults queue up: a second FailNext applies after the first's n
// calls.
func (s *Server) FailNext(method string, n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[method] = append(s.faults[method], f)
	}
}

// ClearFaults drops the faults still queued for method.
func (s *Server) ClearFaults(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.faults, method)
}

func (s *Server) popFaultLocked(method string) (Fault, bool) {
	q := s.faults[method]
	if len(q) == 0 {
		return Fault{}, false
	}
	s.faults[method] = q[1:]
	return q[0], true
}

// answer is what the fake sends back: JSON body (with "ok"), or plain text when text is set.
type answer struct {
	status     int
	retryAfter int
	body       map[string]any
	text       string
}

func okAnswer(fields map[string]any) answer {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["ok"] = true
	return answer{status: http.StatusOK, body: fields}
}

func errAnswer(code string) answer {
	return answer{status: http.StatusOK, body: map[string]any{"ok": false, "error": code}}
}

func (a answer) errCode() string {
	if a.text != "" && a.status != http.StatusOK {
		return a.text
	}
	if a.status == http.StatusTooManyRequests {
		return "ratelimited"
	}
	code, _ := a.body["error"].(string)
	return code
}

func (a answer) write(w http.ResponseWriter) {
	if a.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(a.retryAfter))
	}
	if a.text != "" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.text))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(a.status)
	_ = json.NewEncoder(w).Encode(a.body)
}

// handleAPI serves /api/{method}.
func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	params, bodyToken, perr := readParams(r)
	token, fromHeader := bearer(r)
	if !fromHeader {
		token = bodyToken
	}

	s.mu.Lock()
	fault, hasFault := s.popFaultLocked(method)
	var a answer
	switch {
	case hasFault && fault.failing():
		a = fault.answer()
	case perr != "":
		a = errAnswer(perr)
	case !knownMethods[method]:
		a = errAnswer("unknown_method")
		a.body["req_method"] = method
	default:
		if a = s.authLocked(method, token, fromHeader); a.status == 0 {
			a = s.callLocked(method, params)
		}
	}
	s.recordLocked(method, params, a)
	s.mu.Unlock()

	if hasFault && fault.Delay > 0 {
		s.hold(r, fault.Delay)
	}
	a.write(w)
}

// hold waits d, or less when the client gives up or the fake closes.
func (s *Server) hold(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	case <-s.done:
	}
}

func (s *Server) recordLocked(method string, params map[string]string, a answer) {
	if a.status == http.StatusTooManyRequests {
		s.ratelimits++
	}
	s.calls = append(s.calls, Call{Method: method, Params: params, Status: a.status, Error: a.errCode(), At: s.opts.Clock()})
	outcome := "ok"
	if code := a.errCode(); code != "" {
		outcome = code
	}
	s.logf("%s %v → %d %s", method, params, a.status, outcome)
	s.notifyLocked()
}

var knownMethods = map[string]bool{
	"auth.test": true, "apps.connections.open": true, "chat.postMessage": true,
	"chat.update": true, "chat.postEphemeral": true, "usergroups.users.list": true,
	"users.conversations": true, "files.getUploadURLExternal": true, "files.completeUploadExternal": true,
}

// authLocked checks the token the way Slack does; a zero answer means the call may proceed.
// apps.connections.open takes only an app-level token, and only in the Authorization header;
// every other method takes the bot token, in the header or as a "token" form field.
func (s *Server) authLocked(method, token string, fromHeader bool) answer {
	wantApp := method == "apps.connections.open"
	switch {
	case token == "" || (wantApp && !fromHeader):
		return errAnswer("not_authed")
	case token == s.opts.BotToken && wantApp, token == s.opts.AppToken && !wantApp:
		return errAnswer("not_allowed_token_type")
	case token != s.opts.BotToken && token != s.opts.AppToken:
		return errAnswer("invalid_auth")
	}
	return answer{}
}

func (s *Server) callLocked(method string, p map[string]string) answer {
	switch method {
	case "auth.test":
		return okAnswer(map[string]any{
			"url": "https://" + s.opts.TeamDomain + ".slack.com/", "team": s.opts.TeamDomain,
			"user": "streamwatch", "team_id": s.opts.TeamID, "user_id": s.opts.BotUserID,
			"bot_id": s.opts.BotID, "is_enterprise_install": false,
		})
	case "apps.connections.open":
		ticket := s.randLocked("0123456789abcdef", 32)
		s.tickets[ticket] = true
		return okAnswer(map[string]any{
			"url": "ws" + strings.TrimPrefix(s.base, "http") + "/link/?ticket=" + ticket + "&app_id=" + s.opts.AppID,
		})
	case "chat.postMessage":
		return s.postMessageLocked(p)
	case "chat.update":
		return s.updateLocked(p)
	case "chat.postEphemeral":
		return s.postEphemeralLocked(p)
	case "usergroups.users.list":
		users, ok := s.groups[p["usergroup"]]
		if !ok {
			return errAnswer("no_such_subteam")
		}
		return okAnswer(map[string]any{"users": append([]string{}, users...)})
	case "users.conversations":
		return s.userConversationsLocked(p)
	case "files.getUploadURLExternal":
		return s.getUploadURLLocked(p)
	case "files.completeUploadExternal":
		return s.completeUploadLocked(p)
	}
	return errAnswer("unknown_method")
}

// content checks a message's text and blocks arguments as chat.postMessage does.
func (s *Server) contentLocked(p map[string]string) (string, json.RawMessage, answer) {
	text := p["text"]
	blocks, berr := parseBlocks(p["blocks"])
	switch {
	case berr != nil:
		return "", nil, berr.answer()
	case text == "" && blocks == nil && p["attachments"] == "":
		return "", nil, errAnswer("no_text")
	case utf8.RuneCountInString(text) > maxTextLen:
		return "", nil, errAnswer("msg_too_long")
	}
	return text, s.fillBlockIDsLocked(blocks), answer{}
}

// postMessageLocked answers chat.postMessage.
//
// A thread_ts naming no message in the channel gets thread_not_found. Slack is laxer (it posts
// the message at the top of the channel), but a wrong thread_ts is always a bug in the bot, and
// a loud error finds it sooner. A thread_ts naming a reply lands in that reply's thread.
func (s *Server) postMessageLocked(p map[string]string) answer {
	ch := p["channel"]
	if a := s.writableLocked(ch); a.status != 0 {
		return a
	}
	if wait, ok := s.takeTokenLocked(ch); !ok {
		return answer{status: http.StatusTooManyRequests, retryAfter: wait,
			body: map[string]any{"ok": false, "error": "ratelimited"}}
	}
	text, blocks, a := s.contentLocked(p)
	if a.status != 0 {
		return a
	}
	threadTS, a := s.threadLocked(ch, p["thread_ts"])
	if a.status != 0 {
		return a
	}
	m := s.addBotMessageLocked(ch, threadTS, text, blocks)
	return okAnswer(map[string]any{"channel": ch, "ts": m.TS, "message": s.wireLocked(m)})
}

// threadLocked resolves a thread_ts argument to the thread's root ts.
func (s *Server) threadLocked(ch, threadTS string) (string, answer) {
	if threadTS == "" {
		return "", answer{}
	}
	root := s.findLocked(ch, threadTS)
	if root == nil {
		return "", errAnswer("thread_not_found")
	}
	if root.ThreadTS != "" {
		return root.ThreadTS, answer{}
	}
	return root.TS, answer{}
}

func (s *Server) addBotMessageLocked(ch, threadTS, text string, blocks json.RawMessage) *Message {
	m := &Message{
		Channel: ch, TS: s.nextTSLocked(), ThreadTS: threadTS, User: s.opts.BotUserID,
		BotID: s.opts.BotID, Text: text, Blocks: blocks, Mentions: mentions(text, blocks),
	}
	s.channels[ch] = append(s.channels[ch], m)
	return m
}

// updateLocked answers chat.update. Omitted arguments keep the message's text or blocks, as on
// Slack; blocks "[]" removes them.
func (s *Server) updateLocked(p map[string]string) answer {
	ch := p["channel"]
	if a := s.writableLocked(ch); a.status != 0 {
		return a
	}
	m := s.findLocked(ch, p["ts"])
	if m == nil || m.Deleted {
		return errAnswer("message_not_found")
	}
	if m.User != s.opts.BotUserID {
		return errAnswer("cant_update_message")
	}
	text, hasText := p["text"]
	if !hasText {
		text = m.Text
	}
	blocks, berr := parseBlocks(p["blocks"])
	if _, hasBlocks := p["blocks"]; !hasBlocks {
		blocks = m.Blocks
	} else if berr != nil {
		return berr.answer()
	}
	if text == "" && blocks == nil && p["attachments"] == "" {
		return errAnswer("no_text")
	}
	if utf8.RuneCountInString(text) > maxTextLen {
		return errAnswer("msg_too_long")
	}
	m.Text, m.Blocks, m.Mentions = text, s.fillBlockIDsLocked(blocks), mentions(text, blocks)
	m.Edits++
	return okAnswer(map[string]any{"channel": ch, "ts": m.TS, "text": m.Text, "message": s.wireLocked(m)})
}

func (s *Server) postEphemeralLocked(p map[string]string) answer {
	ch := p["channel"]
	if a := s.writableLocked(ch); a.status != 0 {
		return a
	}
	if p["user"] == "" {
		return errAnswer("user_not_found")
	}
	text, blocks, a := s.contentLocked(p)
	if a.status != 0 {
		return a
	}
	e := s.addEphemeralLocked(ch, p["user"], p["thread_ts"], text, blocks, "chat.postEphemeral")
	return okAnswer(map[string]any{"message_ts": e.TS})
}

func (s *Server) addEphemeralLocked(ch, user, threadTS, text string, blocks json.RawMessage, source string) Ephemeral {
	e := Ephemeral{
		Channel: ch, User: user, TS: s.nextTSLocked(), ThreadTS: threadTS, Text: text,
		Blocks: blocks, Mentions: mentions(text, blocks), Source: source,
	}
	s.ephemerals = append(s.ephemerals, e)
	return e
}

// wireLocked renders a message the way the Web API returns one.
func (s *Server) wireLocked(m *Message) map[string]any {
	w := map[string]any{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS, "team": s.opts.TeamID}
	if m.BotID != "" {
		w["bot_id"], w["app_id"] = m.BotID, s.opts.AppID
	}
	if m.Blocks != nil {
		w["blocks"] = m.Blocks
	}
	if len(m.Files) > 0 {
		files := make([]map[string]any, len(m.Files))
		for i, id := range m.Files {
			files[i] = map[string]any{"id": id}
		}
		w["files"] = files
	}
	if m.ThreadTS != "" {
		w["thread_ts"] = m.ThreadTS
		if root := s.findLocked(m.Channel, m.ThreadTS); root != nil {
			w["parent_user_id"] = root.User
		}
	}
	return w
}

// bucket is a channel's token bucket for the per-channel rate limit.
type bucket struct {
	tokens float64
	at     time.Time
}

// takeTokenLocked spends one of a channel's tokens, or reports how many whole seconds until one
// is available.
func (s *Server) takeTokenLocked(ch string) (retryAfter int, ok bool) {
	rate := s.opts.ChannelRateLimit
	if rate <= 0 {
		return 0, true
	}
	now, burst := s.opts.Clock(), float64(s.opts.ChannelBurst)
	b := s.buckets[ch]
	if b == nil {
		b = &bucket{tokens: burst, at: now}
		s.buckets[ch] = b
	}
	if elapsed := now.Sub(b.at).Seconds(); elapsed > 0 {
		b.tokens = math.Min(burst, b.tokens+elapsed*rate)
	}
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return max(1, int(math.Ceil((1-b.tokens)/rate))), false
}

// bearer returns the token of an "Authorization: Bearer …" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if t, ok := strings.CutPrefix(h, "Bearer "); ok {
		return strings.TrimSpace(t), true
	}
	return "", false
}

// readParams reads a call's arguments from a form (query or body) or a JSON body and flattens
// them; it returns the form's "token" field separately (a JSON body's is ignored, as on Slack)
// and Slack's error code for an unreadable body.
func readParams(r *http.Request) (params map[string]string, token, errCode string) {
	params = map[string]string{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/json" {
		var body map[string]json.RawMessage
		// slack-go posts apps.connections.open as JSON with an empty body.
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
			return params, "", "invalid_json"
		}
		for k, v := range body {
			if k != "token" {
				params[k] = flatten(v)
			}
		}
		return params, "", ""
	}
	var err error
	if ct == "multipart/form-data" {
		err = r.ParseMultipartForm(1 << 20)
	} else {
		err = r.ParseForm()
	}
	if err != nil {
		return params, "", "invalid_form_data"
	}
	for k, v := range r.Form {
		if len(v) > 0 {
			params[k] = v[0]
		}
	}
	token = params["token"]
	delete(params, "token")
	return params, token, ""
}

// flatten turns a JSON value into a parameter string: strings as themselves, null as "", all
// else as compact JSON.
func flatten(v json.RawMessage) string {
	var str string
	if json.Unmarshal(v, &str) == nil {
		return str
	}
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) != nil {
		return string(v)
	}
	return buf.String()
}
