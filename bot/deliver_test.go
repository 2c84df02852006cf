package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/internal/testclock"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/state"
)

// The deliverer against the real outbox (a redis-server) and a Slack that answers as each case
// says, on a clock the test moves.

// slackCall is one call the deliverer made, as the cases compare them: "post C1 root INC-1",
// "post C1 thread INC-1: 1 more occurrence…", "update C1 INC-1", "notice C1: …".
type slackCall string

// scriptedSlack is Messages answering each call with what answer says (nil: success). It keeps
// the calls that succeeded, in order, and every attempt.
type scriptedSlack struct {
	mu       sync.Mutex
	answer   func(attempt int, c slackCall) error
	attempts []slackCall
	done     []slackCall
	roots    map[string]string // ts → incident, for naming thread replies and updates
}

func (s *scriptedSlack) call(ctx context.Context, c slackCall) error {
	s.mu.Lock()
	s.attempts = append(s.attempts, c)
	n := len(s.attempts)
	s.mu.Unlock()
	var err error
	if s.answer != nil {
		err = s.answer(n, c)
	}
	if errors.Is(err, errHang) {
		<-ctx.Done() // a Slack that never answers: the delivery's timeout ends the call
		return ctx.Err()
	}
	if err == nil {
		s.mu.Lock()
		s.done = append(s.done, c)
		s.mu.Unlock()
	}
	return err
}

var errHang = errors.New("hang")

func (s *scriptedSlack) Post(ctx context.Context, channel string, m Message) (string, error) {
	s.mu.Lock()
	inc := s.roots[m.ThreadTS]
	s.mu.Unlock()
	var c slackCall
	switch {
	case m.ThreadTS != "":
		c = slackCall(fmt.Sprintf("post %s thread %s: %s", channel, inc, m.Text))
	case len(m.Blocks) > 0:
		c = slackCall(fmt.Sprintf("post %s root %s", channel, strings.TrimSuffix(strings.Fields(m.Text)[1], ":")))
	default:
		c = slackCall(fmt.Sprintf("notice %s: %s", channel, m.Text))
	}
	if err := s.call(ctx, c); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := fmt.Sprintf("1700000000.%06d", len(s.done))
	if len(m.Blocks) > 0 && m.ThreadTS == "" {
		s.roots[ts] = strings.TrimSuffix(strings.Fields(m.Text)[1], ":")
	}
	return ts, nil
}

func (s *scriptedSlack) Update(ctx context.Context, channel, ts string, m Message) error {
	s.mu.Lock()
	inc := s.roots[ts]
	s.mu.Unlock()
	return s.call(ctx, slackCall(fmt.Sprintf("update %s %s", channel, inc)))
}

func (s *scriptedSlack) calls() (done, attempts []slackCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]slackCall(nil), s.done...), append([]slackCall(nil), s.attempts...)
}

// deliveryWorld is a deliverer, its outbox and its Slack, on one clock.
type deliveryWorld struct {
	t     *testing.T
	ctx   context.Context
	store *state.Store
	slack *scriptedSlack
	d     *deliverer
	clock *testclock.Clock
	auth  *atomic.Bool
	rdb   *redis.Client // the store's Redis, for what only Redis can tell (the outbox's size)
	keys  string        // the store's key prefix
}

func newDeliveryWorld(t *testing.T, answer func(attempt int, c slackCall) error) *deliveryWorld {
	t.Helper()
	rdb, prefix := testredis.Client(t)
	w := &deliveryWorld{t: t, ctx: context.Background(), store: state.New(rdb, prefix), clock: testclock.New(time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)),
		slack: &scriptedSlack{answer: answer, roots: map[string]string{}}, auth: &atomic.Bool{}, rdb: rdb, keys: prefix}
	w.store.SetClock(w.clock.Now)
	w.store.Coalesce = 10 * time.Second
	if err := w.store.EnsureOutbox(w.ctx); err != nil {
		t.Fatal(err)
	}
	w.d = &deliverer{out: w.store, slack: w.slack, metrics: metrics.New(), log: slog.New(slog.DiscardHandler), replica: "r1",
		claimAfter: time.Minute, timeout: 50 * time.Millisecond, wait: -1, now: w.clock.Now, authBad: w.auth,
		retryAt: map[string]time.Time{}, attempts: map[string]int{}, replied: map[string]bool{}, posted: map[string]string{},
		rescued: map[string]rescue{}, paged: map[string]bool{},
		paused: map[string]time.Time{}}
	return w
}

// alert records an alert of key into channel.
func (w *deliveryWorld) alert(key, channel string) {
	w.t.Helper()
	if _, err := w.store.RecordAlert(w.ctx, state.AlertRecord{Key: key, Fingerprint: key, Title: "client replied sms", Severity: 3,
		Channel: channel, Source: "test", Detail: "detail of " + key}); err != nil {
		w.t.Fatal(err)
	}
}

// news records another alert (fingerprint fp) under key a moment later: news for the key's
// incident, which its thread hears about, where an identical re-send only updates the root.
// (Alerts recorded at the very moment an incident opens are its opening, not news.)
func (w *deliveryWorld) news(key, fp, channel string) {
	w.t.Helper()
	w.clock.Add(time.Millisecond)
	if _, err := w.store.RecordAlert(w.ctx, state.AlertRecord{Key: key, Fingerprint: fp, Title: "client replied sms", Severity: 3,
		Channel: channel, Source: "test", Detail: "detail of " + fp}); err != nil {
		w.t.Fatal(err)
	}
}

// passes runs the deliverer's passes, the clock moving step before each, for at most d of the
// clock. Before each pass the due coalesced updates move into the outbox, as the app's maintain
// job does (app/jobs.go).
func (w *deliveryWorld) passes(step, d time.Duration) {
	w.t.Helper()
	for end := w.clock.Now().Add(d); w.clock.Now().Before(end); {
		w.clock.Add(step)
		if _, err := w.store.Pump(w.ctx); err != nil {
			w.t.Fatal(err)
		}
		if err := w.d.pass(w.ctx); err != nil {
			w.t.Fatal(err)
		}
	}
}

// passesUntil runs the deliverer's passes, the clock moving step before each, until cond
// holds; it fails the test when within of the clock passes first.
func (w *deliveryWorld) passesUntil(step, within time.Duration, what string, cond func() bool) {
	w.t.Helper()
	for end := w.clock.Now().Add(within); !cond(); {
		if !w.clock.Now().Before(end) {
			w.t.Fatalf("%s did not happen within %s of passes", what, within)
		}
		w.passes(step, step)
	}
}

// failing answers err to the first n calls that contain what, and success to every other.
func failing(what string, n int, err error) func(int, slackCall) error {
	var mu sync.Mutex
	return func(_ int, c slackCall) error {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(string(c), what) && n > 0 {
			n--
			return err
		}
		return nil
	}
}

func rateLimited(after time.Duration) error { return &slack.RateLimitedError{RetryAfter: after} }

// TestDeliverer: the order Slack sees, what is retried and when, what is dropped.
func TestDeliverer(t *testing.T) {
	cases := []struct {
		name   string
		answer func(attempt int, c slackCall) error
		// run records alerts and runs passes; want are the calls Slack took, in order.
		run  func(w *deliveryWorld)
		want []slackCall
		// attempts, when set, are every call the deliverer made, failed ones included.
		attempts []slackCall
		check    func(t *testing.T, w *deliveryWorld)
	}{
		{name: "roots in order, then the coalesced news and the root's update",
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				w.alert("b", "C1")
				w.news("a", "a2", "C1")
				w.passes(100*time.Millisecond, time.Second)
			},
			want: []slackCall{"post C1 root INC-1", "post C1 root INC-2",
				"post C1 thread INC-1: • New alert: detail of a2", "update C1 INC-1"}},
		{name: "identical re-sends only update the root, once a window",
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				w.passes(100*time.Millisecond, 500*time.Millisecond)
				for range 50 {
					w.alert("a", "C1")
				}
				w.passes(time.Second, 25*time.Second) // the first window is due at once, then every 10 s
				for range 30 {
					w.alert("a", "C1")
				}
				w.passes(time.Second, 25*time.Second)
			},
			want: []slackCall{"post C1 root INC-1", "update C1 INC-1", "update C1 INC-1"}},
		{name: "a storm of news: one thread reply and one update a window",
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				w.passes(100*time.Millisecond, 500*time.Millisecond)
				for i := range 50 {
					w.news("a", fmt.Sprintf("a%d", i), "C1")
				}
				w.passes(time.Second, 25*time.Second)
				for i := range 30 {
					w.news("a", fmt.Sprintf("b%d", i), "C1")
				}
				w.passes(time.Second, 25*time.Second)
			},
			want: []slackCall{"post C1 root INC-1", "post C1 thread INC-1: • New alert: detail of a40\n• New alert: detail of a41\n• New alert: detail of a42\n• New alert: detail of a43\n• New alert: detail of a44\n• New alert: detail of a45\n• New alert: detail of a46\n• New alert: detail of a47\n• New alert: detail of a48\n• New alert: detail of a49\n… and 40 more (`incident show INC-1` lists every alert)", "update C1 INC-1", "post C1 thread INC-1: • New alert: detail of b20\n• New alert: detail of b21\n• New alert: detail of b22\n• New alert: detail of b23\n• New alert: detail of b24\n• New alert: detail of b25\n• New alert: detail of b26\n• New alert: detail of b27\n• New alert: detail of b28\n• New alert: detail of b29\n… and 20 more (`incident show INC-1` lists every alert)", "update C1 INC-1"}},
		{name: "429 pauses the channel for Retry-After; the order holds",
			answer: func(attempt int, _ slackCall) error {
				if attempt == 1 {
					return rateLimited(5 * time.Second)
				}
				return nil
			},
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				w.alert("b", "C1")
				w.alert("c", "C2")
				w.passes(time.Second, 3*time.Second)
				if done, _ := w.slack.calls(); len(done) != 1 || done[0] != "post C2 root INC-3" {
					w.t.Fatalf("while C1 is paused Slack took %q, want only C2's root", done)
				}
				w.passes(time.Second, 4*time.Second)
			},
			want:     []slackCall{"post C2 root INC-3", "post C1 root INC-1", "post C1 root INC-2"},
			attempts: []slackCall{"post C1 root INC-1", "post C2 root INC-3", "post C1 root INC-1", "post C1 root INC-2"}},
		{name: "5xx and timeouts are retried with backoff and hold back the incident's later messages",
			answer: func(attempt int, _ slackCall) error {
				switch attempt {
				case 1:
					return slack.StatusCodeError{Code: http.StatusInternalServerError, Status: "500 Internal Server Error"}
				case 2:
					return slack.StatusCodeError{Code: http.StatusServiceUnavailable, Status: "503 Service Unavailable"}
				case 3:
					return errHang
				}
				return nil
			},
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				w.news("a", "a2", "C1")
				w.passes(100*time.Millisecond, 10*time.Second)
			},
			want: []slackCall{"post C1 root INC-1", "post C1 thread INC-1: • New alert: detail of a2", "update C1 INC-1"},
			attempts: []slackCall{"post C1 root INC-1", "post C1 root INC-1", "post C1 root INC-1", "post C1 root INC-1",
				"post C1 thread INC-1: • New alert: detail of a2", "update C1 INC-1"}},
		{name: "a transient failure backs off its incident only; the others' messages go out meanwhile",
			answer: failing("root INC-1", 4, slack.StatusCodeError{Code: http.StatusServiceUnavailable, Status: "503 Service Unavailable"}),
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				w.alert("b", "C1")
				w.news("b", "b2", "C1")
				w.passes(100*time.Millisecond, 10*time.Second)
			},
			want: []slackCall{"post C1 root INC-2", "post C1 thread INC-2: • New alert: detail of b2", "update C1 INC-2",
				"post C1 root INC-1"}},
		{name: "an error no retry fixes drops the message and holds nothing back",
			answer: func(_ int, c slackCall) error {
				if strings.Contains(string(c), " C0GONE") {
					return slack.SlackErrorResponse{Err: "channel_not_found"}
				}
				return nil
			},
			run: func(w *deliveryWorld) {
				w.alert("a", "C0GONE")
				w.alert("b", "C1")
				w.alert("a", "C0GONE")
				if err := w.store.EnqueueNotice(w.ctx, "C0GONE", "a notice nobody will read"); err != nil {
					w.t.Fatal(err)
				}
				w.passes(100*time.Millisecond, 2*time.Second)
			},
			want: []slackCall{"post C1 root INC-2"},
			check: func(t *testing.T, w *deliveryWorld) {
				if ds, err := w.store.ReadOutbox(w.ctx, "other", false, 100, -1); err != nil || len(ds) != 0 {
					t.Errorf("the outbox still holds %+v (%v)", ds, err)
				}
				if n, _ := w.store.OutboxDepth(w.ctx); n != 0 {
					t.Errorf("outbox depth %d after dropping what Slack refused", n)
				}
			}},
		{name: "a notice waits out its paused channel without a read of the incident",
			answer: func(attempt int, _ slackCall) error {
				if attempt == 1 {
					return rateLimited(2 * time.Second)
				}
				return nil
			},
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				if err := w.store.EnqueueNotice(w.ctx, "C1", "Checkpoint probe of sms-replies FAILED (NOT_FOUND): gone"); err != nil {
					w.t.Fatal(err)
				}
				if err := w.store.EnqueueNotice(w.ctx, "C2", "Checkpoint probe of orders recovered: OK"); err != nil {
					w.t.Fatal(err)
				}
				w.passes(500*time.Millisecond, 4*time.Second)
			},
			want: []slackCall{"notice C2: Checkpoint probe of orders recovered: OK", "post C1 root INC-1",
				"notice C1: Checkpoint probe of sms-replies FAILED (NOT_FOUND): gone"}},
		{name: "the entries of a replica that stopped half way are claimed and delivered once",
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				w.alert("b", "C1")
				// Another replica took both entries and died before delivering them.
				if ds, err := w.store.ReadOutbox(w.ctx, "r0", false, 100, -1); err != nil || len(ds) != 2 {
					w.t.Fatalf("r0 read %d entries: %v", len(ds), err)
				}
				w.d.claimAfter = 30 * time.Millisecond // idle time is Redis's: real time
				wait.For(w.t, 10*time.Second, "r1 delivering r0's entries", func() bool {
					w.passes(100*time.Millisecond, 100*time.Millisecond)
					done, _ := w.slack.calls()
					return len(done) == 2
				})
				w.passes(100*time.Millisecond, time.Second)
			},
			want: []slackCall{"post C1 root INC-1", "post C1 root INC-2"}},
		{name: "invalid_auth says the tokens are refused until Slack takes a call again",
			answer: func(attempt int, _ slackCall) error {
				if attempt == 1 {
					return slack.SlackErrorResponse{Err: "invalid_auth"}
				}
				return nil
			},
			run: func(w *deliveryWorld) {
				w.alert("a", "C1")
				w.clock.Add(100 * time.Millisecond)
				if err := w.d.pass(w.ctx); err != nil {
					w.t.Fatal(err)
				}
				if !w.auth.Load() {
					w.t.Fatal("invalid_auth did not mark the tokens refused")
				}
				w.passes(100*time.Millisecond, 2*time.Second)
			},
			want: []slackCall{"post C1 root INC-1"},
			check: func(t *testing.T, w *deliveryWorld) {
				if w.auth.Load() {
					t.Error("a call Slack took did not clear the refusal")
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newDeliveryWorld(t, c.answer)
			c.run(w)
			done, attempts := w.slack.calls()
			if fmt.Sprint(done) != fmt.Sprint(c.want) {
				t.Errorf("Slack took\n%q\nwant\n%q\n(attempts %q)", done, c.want, attempts)
			}
			if c.attempts != nil && fmt.Sprint(attempts) != fmt.Sprint(c.attempts) {
				t.Errorf("attempts\n%q\nwant\n%q", attempts, c.attempts)
			}
			if c.check != nil {
				c.check(t, w)
			}
		})
	}
}

// TestSlackErrors: which Slack errors a retry can fix, and the bounded label each is counted
// under.
func TestSlackErrors(t *testing.T) {
	for _, c := range []struct {
		err       error
		permanent bool
		code      string
	}{
		{slack.SlackErrorResponse{Err: "channel_not_found"}, true, "channel_not_found"},
		{slack.SlackErrorResponse{Err: "msg_too_long"}, true, "msg_too_long"},
		{errors.New("not_in_channel"), true, "not_in_channel"},
		{slack.SlackErrorResponse{Err: "internal_error"}, false, "internal_error"},
		{rateLimited(time.Second), false, "ratelimited"},
		{slack.StatusCodeError{Code: 502, Status: "502 Bad Gateway"}, false, "http_502"},
		{fmt.Errorf("post: %w", context.DeadlineExceeded), false, "timeout"},
		{errors.New("read tcp 10.0.0.5:443: connection reset by peer"), false, "other"},
		{&timeoutError{}, false, "timeout"},
	} {
		if got := permanent(c.err); got != c.permanent {
			t.Errorf("permanent(%v) = %v", c.err, got)
		}
		if got := slackCode(c.err); got != c.code {
			t.Errorf("slackCode(%v) = %q, want %q", c.err, got, c.code)
		}
	}
}

// timeoutError is a net.Error that timed out.
type timeoutError struct{}

func (*timeoutError) Error() string   { return "i/o timeout" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

// TestDeliveredOutboxStaysBounded: 10,000 messages delivered through the deliverer leave an
// empty outbox stream of a few kilobytes at most: what Slack has, Redis no longer keeps.
func TestDeliveredOutboxStaysBounded(t *testing.T) {
	w := newDeliveryWorld(t, nil)
	// Not a test of timeouts: 10,000 Redis round trips under -race on a busy machine must not
	// trip the world's 50 ms delivery bound (which turned this test red under load).
	w.d.timeout = 10 * time.Second
	for i := range 100 {
		w.alert(fmt.Sprint("k", i), "C1")
	}
	for i := range 100 {
		for j := range 99 {
			if _, err := w.store.Note(w.ctx, fmt.Sprint("INC-", i+1), "note", "U1", fmt.Sprint("note ", j), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := w.store.OutboxDepth(w.ctx); err != nil || n != 10000 {
		t.Fatalf("queued %d (%v), want 10,000", n, err)
	}
	for range 1000 {
		if n, err := w.store.OutboxDepth(w.ctx); err != nil {
			t.Fatal(err)
		} else if n == 0 {
			break
		}
		w.passes(time.Millisecond, time.Millisecond)
	}
	done, _ := w.slack.calls()
	threads := 0
	for _, c := range done {
		if strings.Contains(string(c), " thread ") {
			threads++
		}
	}
	if threads != 9900 {
		t.Fatalf("Slack got %d thread replies of the 9,900 notes (%d calls)", threads, len(done))
	}
	stream := "{" + w.keys + "}:outbox"
	n, _ := w.rdb.XLen(w.ctx, stream).Result()
	mem, _ := w.rdb.MemoryUsage(w.ctx, stream).Result()
	pending, _ := w.rdb.XPending(w.ctx, stream, "deliver").Result()
	if n != 0 || pending == nil || pending.Count != 0 || mem > 4096 {
		t.Fatalf("after 10,000 deliveries the outbox holds %d entries (%v pending) in %d bytes", n, pending, mem)
	}
}
