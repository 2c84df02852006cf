// Package slackfake is a faithful fake of the parts of Slack that streamwatch uses: the Web API
// methods the bot calls, response_url endpoints, and socket mode (apps.connections.open, the
// WebSocket, envelopes and acks). End-to-end tests and the demo point the real slack-go client at
// it with slack.OptionAPIURL(s.APIURL()) (or SLACK_API_URL).
//
// The fake listens on 127.0.0.1 on a free port. It records every call, keeps a per-channel model
// of messages and threads, injects slash commands, app mentions and button clicks shaped as
// Slack sends them, and injects faults: error answers, 429s with Retry-After, slow answers,
// dropped sockets and disconnect requests. Tests wait for what they expect with WaitFor or
// WaitAck instead of sleeping.
//
// The fake is stricter than Slack where leniency would hide a bug in the bot: a thread_ts naming
// no message gets thread_not_found (Slack posts at the top of the channel instead), and
// injections refuse to mention into a missing thread or click a button a message does not have.
package slackfake

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Options configure a Server. The zero value is usable: every empty field gets the default in
// its comment.
type Options struct {
	BotToken  string // "xoxb-fake": accepted by chat.*, auth.test and usergroups.*
	AppToken  string // "xapp-fake": accepted by apps.connections.open only
	BotUserID string // "U0BOT"
	BotID     string // "B0BOT"
	AppID     string // "A0STREAMWATCH"
	TeamID    string // "T0TEAM"
	// TeamDomain is the workspace's subdomain ("streamwatch").
	TeamDomain string

	// Channels maps the channel IDs that exist to their names. Nil means every channel ID
	// exists (its name is the ID in lower case). A call naming another channel gets
	// channel_not_found.
	Channels map[string]string
	// UserGroups maps usergroup IDs (S…) to their members, for usergroups.users.list.
	UserGroups map[string][]string
	// Members maps channel IDs to the users in them, for users.conversations. Nil means every
	// user is in every channel the model knows: those of Channels, or else those that have
	// messages. SetMembers changes a channel's members.
	Members map[string][]string

	// Clock gives message timestamps, call times, event times, rate-limit buckets and
	// response_url expiry (time.Now). Ack deadlines and pings use real time.
	Clock func() time.Time
	// Seed seeds the IDs the fake makes up (envelope, event, trigger IDs, tickets).
	Seed uint64

	// ChannelRateLimit is how many chat.postMessage calls per second a channel accepts (Slack
	// allows about 1); 0 turns the limit off. Beyond it the answer is HTTP 429 with Retry-After
	// and {"ok":false,"error":"ratelimited"}.
	ChannelRateLimit float64
	// ChannelBurst is how many messages a quiet channel accepts at once (3).
	ChannelBurst int

	// AckTimeout is how long Slack waits for an ack before it retries an envelope (3s). An ack
	// later than this is recorded with Late set.
	AckTimeout time.Duration
	// RedeliverUnacked makes the fake redeliver an envelope that was not acked within
	// AckTimeout, with retry_attempt 1, 2, 3 and retry_reason "timeout", as Slack does.
	RedeliverUnacked bool
	// PingInterval is how often the fake sends a WebSocket ping on every socket (5s).
	// slack-go's socketmode client reconnects when it sees no ping for 30s.
	PingInterval time.Duration
	// ConnectWait bounds how long an injection waits for a socket-mode connection when none is
	// open (5s); the caller's context may end the wait earlier.
	ConnectWait time.Duration

	// Logf, when set, receives one line per call and per socket event.
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.BotToken, "xoxb-fake")
	def(&o.AppToken, "xapp-fake")
	def(&o.BotUserID, "U0BOT")
	def(&o.BotID, "B0BOT")
	def(&o.AppID, "A0STREAMWATCH")
	def(&o.TeamID, "T0TEAM")
	def(&o.TeamDomain, "streamwatch")
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.ChannelBurst <= 0 {
		o.ChannelBurst = 3
	}
	if o.AckTimeout <= 0 {
		o.AckTimeout = 3 * time.Second
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 5 * time.Second
	}
	if o.ConnectWait <= 0 {
		o.ConnectWait = 5 * time.Second
	}
	return o
}

// Server is the fake. Create it with New, then Start it; Close releases everything. All methods
// are safe for concurrent use.
type Server struct {
	opts     Options
	upgrader websocket.Upgrader
	srv      *http.Server
	base     string // "http://127.0.0.1:PORT"

	wg   sync.WaitGroup // socket loops and timers, so Close returns only after they end
	done chan struct{}  // closed by Close

	mu         sync.Mutex
	closed     bool
	changed    chan struct{} // closed and replaced on every change
	rng        *rand.Rand
	lastTS     int64 // microseconds of the newest ts handed out
	calls      []Call
	channels   map[string][]*Message
	ephemerals []Ephemeral
	responses  []ResponsePost
	hooks      map[string]*responseURL // by URL path
	faults     map[string][]Fault
	buckets    map[string]*bucket
	ratelimits int
	groups     map[string][]string
	members    map[string][]string // nil: everyone is everywhere (Options.Members)
	archived   map[string]bool     // channels archived (ArchiveChannel)
	removed    map[string]bool     // channels the bot was removed from (RemoveBot)
	tickets    map[string]bool
	conns      []*socketConn
	connSeq    int
	rr         int
	envelopes  map[string]*envelope
	acks       []Ack
	// files.getUploadURLExternal's uploads, by upload URL ticket and by file id; shared files
	uploads     map[string]*upload
	uploadsByID map[string]*upload
	files       []File
}

// New returns a Server that is not yet listening.
func New(opts Options) *Server {
	opts = opts.withDefaults()
	s := &Server{
		opts:      opts,
		done:      make(chan struct{}),
		changed:   make(chan struct{}),
		rng:       rand.New(rand.NewPCG(opts.Seed, 0x5eed)),
		channels:  map[string][]*Message{},
		hooks:     map[string]*responseURL{},
		faults:    map[string][]Fault{},
		buckets:   map[string]*bucket{},
		groups:    map[string][]string{},
		tickets:   map[string]bool{},
		envelopes: map[string]*envelope{},
		uploads:   map[string]*upload{}, uploadsByID: map[string]*upload{},
	}
	for id, users := range opts.UserGroups {
		s.groups[id] = append([]string(nil), users...)
	}
	if opts.Members != nil {
		s.members = map[string][]string{}
		for ch, users := range opts.Members {
			s.members[ch] = append([]string(nil), users...)
		}
	}
	s.upgrader = websocket.Upgrader{
		// slack-go dials with Origin https://api.slack.com, which never matches our host.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	return s
}

// Start listens on 127.0.0.1 on a free port and serves in the background.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("slackfake: listen: %w", err)
	}
	s.base = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("serve: %v", err)
		}
	}()
	return nil
}

// routes lists every path the fake serves.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.handleAPI)           // Web API methods: /api/chat.postMessage, …
	mux.HandleFunc("/link/", s.handleLink)         // socket-mode WebSockets, from apps.connections.open
	mux.HandleFunc("/commands/", s.handleResponse) // response_url of slash commands
	mux.HandleFunc("/actions/", s.handleResponse)  // response_url of block actions
	mux.HandleFunc("/upload/v1/", s.handleUpload)  // upload URLs of files.getUploadURLExternal
	return mux
}

// APIURL is the Web API base URL, with its trailing slash: "http://127.0.0.1:PORT/api/". Use it as
// slack.OptionAPIURL or SLACK_API_URL.
func (s *Server) APIURL() string { return s.base + "/api/" }

// Close stops serving, closes every socket and waits for the fake's goroutines to end.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	conns := append([]*socketConn(nil), s.conns...)
	for _, env := range s.envelopes {
		if env.timer != nil && env.timer.Stop() {
			s.wg.Done()
		}
	}
	s.notifyLocked()
	s.mu.Unlock()

	if s.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
		}
	}
	for _, c := range conns {
		_ = c.ws.Close()
	}
	s.wg.Wait()
}

// WaitFor returns when cond(s) is true, re-checking after every change to the fake (a call, a
// message, an ack, a socket opening or closing), or with an error when ctx ends. cond may call
// any getter of s.
func (s *Server) WaitFor(ctx context.Context, cond func(*Server) bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond(s) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("slackfake: wait for condition: %w", ctx.Err())
		}
	}
}

// notifyLocked wakes every WaitFor. Callers hold s.mu.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// goLocked runs f on a goroutine that Close waits for, unless the fake is closed. Callers hold s.mu.
func (s *Server) goLocked(f func()) bool {
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf("slackfake: "+format, args...)
	}
}

// nextTSLocked hands out a message timestamp ("1732970000.000100"): the clock's time in
// microseconds, bumped so that every ts is unique and increasing even with a frozen clock.
func (s *Server) nextTSLocked() string {
	now := s.opts.Clock().UnixMicro()
	if now <= s.lastTS {
		now = s.lastTS + 1
	}
	s.lastTS = now
	return fmt.Sprintf("%d.%06d", now/1e6, now%1e6)
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func (s *Server) randLocked(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[s.rng.IntN(len(alphabet))]
	}
	return string(b)
}

func (s *Server) channelNameLocked(id string) string {
	if name, ok := s.opts.Channels[id]; ok {
		return name
	}
	if len(id) > 0 && id[0] == 'D' {
		return "directmessage"
	}
	return lower(id)
}

func (s *Server) channelExistsLocked(id string) bool {
	if id == "" {
		return false
	}
	if s.opts.Channels == nil {
		return true
	}
	_, ok := s.opts.Channels[id]
	return ok
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
