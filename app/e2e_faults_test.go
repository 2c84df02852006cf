package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamwatch/streamwatch/app"
	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// Fault tests (issue 8): the real bot in-process against a real redis-server and the Slack
// fake, with Redis, Slack and clients misbehaving. They wait on conditions; the only timers are
// the retry backoff of the simulated webhook sender and a slow-loris client's trickle.

// genericDetail is a generic alert with a description, which thread replies quote.
func genericDetail(title, key, description string) string {
	b, _ := json.Marshal(map[string]any{"source": "test", "title": title, "severity": "Severity 3",
		"status": "firing", "labels": map[string]string{"alertname": title}, "dedup_key": key,
		"annotations": map[string]string{"description": description}})
	return string(b)
}

// webhookAnswer is one webhook answer as a sender sees it.
type webhookAnswer struct {
	status     int
	retryAfter string
	body       string
	err        error
}

func postWebhook(ctx context.Context, url, auth, body string) webhookAnswer {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return webhookAnswer{err: err}
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return webhookAnswer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return webhookAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b), err: err}
}

// incidentOf reads the incident the answer of a one-alert webhook names.
func incidentOf(body string) string {
	var res struct {
		Incidents []struct{ Incident string } `json:"incidents"`
	}
	if json.Unmarshal([]byte(body), &res) != nil || len(res.Incidents) != 1 {
		return ""
	}
	return res.Incidents[0].Incident
}

// stormSender is an Alertmanager-like sender: it retries 5xx answers and transport errors with
// exponential backoff until the webhook answers 2xx, and counts what it saw.
type stormSender struct {
	url string

	mu          sync.Mutex
	accepted    map[string]string // dedup key → incident the 2xx answer named
	unavailable int               // 503 answers
	noRetry     int               // 503 answers without Retry-After
	other       map[int]int       // other non-2xx statuses
	transport   []string          // transport errors
	refused     []string          // 4xx: a bug in the test or the bot; not retried
	watchers    []stormWatch
}

// stormWatch closes ch once cond holds over the counters.
type stormWatch struct {
	cond func(s *stormSender) bool
	ch   chan struct{}
}

func newStormSender(url string) *stormSender {
	return &stormSender{url: url, accepted: map[string]string{}, other: map[int]int{}}
}

// when returns a channel closed once cond holds (checked after every answer).
func (s *stormSender) when(cond func(s *stormSender) bool) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := stormWatch{cond: cond, ch: make(chan struct{})}
	if cond(s) {
		close(w.ch)
		return w.ch
	}
	s.watchers = append(s.watchers, w)
	return w.ch
}

func (s *stormSender) noteLocked() {
	kept := s.watchers[:0]
	for _, w := range s.watchers {
		if w.cond(s) {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	s.watchers = kept
}

// send delivers one alert, retrying like Alertmanager; it returns the accepting answer's body
// or "" when the sender gave up (ctx ended, or a 4xx).
func (s *stormSender) send(ctx context.Context, key, body string) string {
	backoff := 10 * time.Millisecond
	for {
		a := postWebhook(ctx, s.url, "Bearer "+webhookToken, body)
		s.mu.Lock()
		switch {
		case a.err != nil:
			if ctx.Err() == nil {
				s.transport = append(s.transport, a.err.Error())
			}
		case a.status/100 == 2:
			s.accepted[key] = incidentOf(a.body)
			s.noteLocked()
			s.mu.Unlock()
			return a.body
		case a.status == http.StatusServiceUnavailable:
			s.unavailable++
			if a.retryAfter == "" {
				s.noRetry++
			}
		case a.status/100 == 4:
			s.refused = append(s.refused, fmt.Sprintf("%s: %d %s", key, a.status, a.body))
			s.noteLocked()
			s.mu.Unlock()
			return ""
		default:
			s.other[a.status]++
		}
		s.noteLocked()
		s.mu.Unlock()
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ""
		case <-t.C:
		}
		backoff = min(2*backoff, 400*time.Millisecond)
	}
}

// closedWithin fails the test unless ch is closed within d.
func closedWithin(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
	}
}

var incidentInRoot = regexp.MustCompile(` (INC-[0-9]+): `)

// rootsByIncident counts a channel's root messages per incident.
func rootsByIncident(s *slackfake.Server, channel string) map[string]int {
	out := map[string]int{}
	for _, m := range roots(s, channel) {
		if id := incidentInRoot.FindStringSubmatch(m.Text); id != nil {
			out[id[1]]++
		}
	}
	return out
}

// TestE2EFaultsRedisRestartDuringAlertStorm: 1,000 alerts with distinct keys from eight
// retrying senders while redis-server is killed and restarted (with an fsync'ed append-only
// file, so that what it acknowledged survives). While Redis is down webhooks answer 503 with
// Retry-After; every alert answered 2xx is in Redis afterwards, as exactly one incident; the bot
// recovers by itself: every incident gets its root message, and a later alert lands.
func TestE2EFaultsRedisRestartDuringAlertStorm(t *testing.T) {
	srv, err := testredis.Start("--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close) // after the instance stops: cleanups run last-registered first
	prefix := testredis.Prefix()
	// Flood protection off: this test is about each key's own incident surviving the restart.
	in := start(t, setup{redisURL: srv.URL, prefix: prefix, alertsExtra: "  flood: {new_incidents_per_minute: 0}\n"})

	const total, senders = 1000, 8
	sender := newStormSender(in.url + "/webhooks/generic")
	someAccepted := sender.when(func(s *stormSender) bool { return len(s.accepted) >= 200 })
	refusedWhileDown := sender.when(func(s *stormSender) bool { return s.unavailable >= 3*senders })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	keys := make(chan int)
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range keys {
				key := fmt.Sprintf("storm-%04d", i)
				sender.send(ctx, key, generic("storm alert "+key, key))
			}
		}()
	}
	go func() {
		defer close(keys)
		for i := range total {
			select {
			case keys <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	stormDone := make(chan struct{})
	go func() { wg.Wait(); close(stormDone) }()

	closedWithin(t, someAccepted, 30*time.Second, "200 alerts accepted before the outage")
	srv.Stop()
	sender.mu.Lock()
	acceptedBefore := len(sender.accepted)
	sender.mu.Unlock()
	closedWithin(t, refusedWhileDown, 30*time.Second, "webhooks refused while Redis is down")
	sender.mu.Lock()
	acceptedDown := len(sender.accepted) - acceptedBefore
	sender.mu.Unlock()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	closedWithin(t, stormDone, 90*time.Second, "every alert of the storm accepted")

	sender.mu.Lock()
	accepted := maps.Clone(sender.accepted)
	unavailable, noRetry, other := sender.unavailable, sender.noRetry, fmt.Sprint(sender.other)
	transport, refused := slices.Clone(sender.transport), slices.Clone(sender.refused)
	sender.mu.Unlock()
	t.Logf("%d alerts accepted (%d before the kill, %d answered after it, %d after the restart); "+
		"%d answers 503 (%d without Retry-After), other statuses %s, %d transport errors",
		len(accepted), acceptedBefore, acceptedDown, len(accepted)-acceptedBefore-acceptedDown, unavailable, noRetry, other, len(transport))
	if len(refused) > 0 {
		t.Fatalf("%d alerts refused with 4xx, e.g. %s", len(refused), refused[0])
	}
	if len(accepted) != total {
		t.Fatalf("%d of %d alerts accepted", len(accepted), total)
	}
	if unavailable == 0 {
		t.Fatal("no webhook answered 503 while Redis was down: the test proves nothing")
	}
	if noRetry > 0 {
		t.Errorf("%d of %d 503 answers had no Retry-After", noRetry, unavailable)
	}
	if len(transport) > 0 {
		t.Errorf("%d transport errors, e.g. %s\nserver log lines about http:\n%s", len(transport), transport[0],
			grepLines(in.logs.String(), `"http`, "panic"))
	}
	if other != "map[]" {
		t.Errorf("answers other than 2xx and 503: %s\nlog lines:\n%s", other, grepLines(in.logs.String(), `"level":"ERROR"`))
	}

	// Every acknowledged alert is in Redis, as one open incident per key, the one its answer named.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	store := state.New(rdb, prefix)
	open, err := store.ListOpen(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string][]string{}
	for _, inc := range open {
		byKey[inc.Key] = append(byKey[inc.Key], inc.ID)
	}
	var lost, split, renamed []string
	for key, id := range accepted {
		switch ids := byKey[key]; {
		case len(ids) == 0:
			lost = append(lost, key)
		case len(ids) > 1:
			split = append(split, fmt.Sprintf("%s: %v", key, ids))
		case ids[0] != id:
			renamed = append(renamed, fmt.Sprintf("%s: answered %s, stored %s", key, id, ids[0]))
		}
	}
	if len(lost)+len(split)+len(renamed) > 0 {
		t.Fatalf("after the restart: %d accepted alerts lost %v; %d keys with several incidents %v; %d keys with another incident %v",
			len(lost), firstFive(lost), len(split), firstFive(split), len(renamed), firstFive(renamed))
	}
	if len(open) != total {
		t.Fatalf("%d open incidents for %d keys", len(open), total)
	}

	// The bot recovered by itself: a later alert lands, and every incident has its root.
	body := sender.send(ctx, "after-restart", generic("after the restart", "after-restart"))
	later := incidentOf(body)
	if later == "" {
		t.Fatalf("the alert after the restart was not accepted: %q", body)
	}
	// Waits while the roots keep coming (a busy machine delivers slower); fails once none came
	// for 30 s, which is a stuck deliverer, not a slow one.
	for seen := -1; ; {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = in.slack.WaitFor(wctx, func(s *slackfake.Server) bool {
			r := rootsByIncident(s, "C0DEFAULT")
			return len(r) == total+1 && r[later] > 0 || len(r) > seen
		})
		cancel()
		r := rootsByIncident(in.slack, "C0DEFAULT")
		if err != nil || len(r) == total+1 && r[later] > 0 {
			break
		}
		seen = len(r)
	}
	r := rootsByIncident(in.slack, "C0DEFAULT")
	if err != nil {
		t.Fatalf("%d of %d incidents have a root message after the restart (%s's: %d)\nlog lines:\n%s",
			len(r), total+1, later, r[later], grepLines(in.logs.String(), "outbox", "delivery"))
	}
	var twice []string
	for id, n := range r {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s×%d", id, n))
		}
	}
	slices.Sort(twice)
	// A root Slack took while Redis could not record it must not be posted again on the retry.
	if len(twice) > 0 {
		t.Errorf("%d incidents got two root messages across the restart: %v", len(twice), firstFive(twice))
	}
}

// firstFive returns up to five elements, for messages.
func firstFive(s []string) []string { return s[:min(5, len(s))] }

// threadTexts are the texts of a thread's replies, in order.
func threadTexts(s *slackfake.Server, ch, ts string) []string {
	var out []string
	for _, m := range replies(s, ch, ts) {
		out = append(out, m.Text)
	}
	return out
}

// TestE2EFaultsSlack5xxAndTimeout: chat.postMessage first holds its answer beyond the bot's
// Slack client timeout (the post takes effect, the answer is lost), then answers 500, 502
// and 503 to whichever deliveries come next. Every message is delivered later, in order; a 5xx
// post has no effect and is not repeated; the timed-out one may be posted twice (at-least-once
// delivery: the bot cannot know that Slack took it).
//
// The app runs with a 2 s Slack client timeout (15 s in production) inside a 3 s delivery
// timeout (10 s), so that the client's timeout is what cuts the held call.
func TestE2EFaultsSlack5xxAndTimeout(t *testing.T) {
	const slackTimeout = 2 * time.Second
	s := newSlack(t, slackfake.Options{})
	in := start(t, setup{slack: s, options: func(o *app.Options) { o.SlackTimeout, o.DeliveryTimeout = slackTimeout, 3*time.Second }})
	in.ok("/webhooks/generic", genericDetail("slow slack", "slow-1", "first"))
	waitFor(t, s, "INC-1's root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	root := roots(s, "C0DEFAULT")[0]
	before := len(s.CallsTo("chat.postMessage"))

	const hold = 2 * slackTimeout // beyond the client's timeout
	s.FailNext("chat.postMessage", 1, slackfake.Fault{Delay: hold})
	for _, status := range []int{500, 502, 503} {
		s.FailNext("chat.postMessage", 1, slackfake.Fault{Status: status})
	}
	begin := time.Now()
	in.ok("/webhooks/generic", genericDetail("slow slack", "slow-1", "dup-one"))
	waitFor(t, s, "the thread reply's first attempt", func(s *slackfake.Server) bool {
		return len(s.CallsTo("chat.postMessage")) > before
	})
	ctx := context.Background()
	if p := askIn(t, s, "U0BOB", "C0DEFAULT", "incident ack INC-1"); !strings.Contains(p.Text, "INC-1 acknowledged") {
		t.Fatalf("the ack's answer: %q", p.Text)
	}
	in.ok("/webhooks/generic", genericDetail("slow slack", "slow-1", "dup-two"))
	// Another incident, while the held call blocks the deliverer.
	otherPosted := time.Now()
	in.ok("/webhooks/generic", genericDetail("another incident", "slow-2", "other"))

	// Each changed description is news for the thread.
	want := []string{"• Changed", "Acknowledged by u0bob.", "• Changed"}
	wantDetail := []string{"dup-one", "", "dup-two"}
	inOrder := func(texts []string) bool {
		i := 0
		for _, txt := range texts {
			if i < len(want) && strings.HasPrefix(txt, want[i]) && strings.Contains(txt, wantDetail[i]) {
				i++
			}
		}
		return i == len(want)
	}
	var otherAt time.Time
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	err := s.WaitFor(wctx, func(s *slackfake.Server) bool {
		if otherAt.IsZero() && len(roots(s, "C0DEFAULT")) >= 2 {
			otherAt = time.Now()
		}
		m, _ := s.Message("C0DEFAULT", root.TS)
		return inOrder(threadTexts(s, "C0DEFAULT", root.TS)) && strings.Contains(m.Text, "3 occurrences") &&
			strings.Contains(m.Text, "acknowledged by u0bob") && len(roots(s, "C0DEFAULT")) == 2
	})
	texts := threadTexts(s, "C0DEFAULT", root.TS)
	if err != nil {
		t.Fatalf("thread of INC-1 after the faults: %q\nroot: %q\nlog lines:\n%s", texts, mustMessage(s, "C0DEFAULT", root.TS).Text,
			grepLines(in.logs.String(), "slack delivery"))
	}
	elapsed := time.Since(begin)

	var statuses []string
	for _, c := range s.CallsTo("chat.postMessage")[before:] {
		statuses = append(statuses, fmt.Sprintf("%d at %v (%.25s)", c.Status, c.At.Sub(begin).Round(100*time.Millisecond), c.Params["text"]))
	}
	t.Logf("INC-1's thread %q after %v; chat.postMessage answers from the faults on: %v", texts, elapsed.Round(100*time.Millisecond), statuses)
	if joined := strings.Join(statuses, " "); !strings.Contains(joined, "500 at") || !strings.Contains(joined, "503 at") {
		t.Fatalf("the injected 5xx answers were not all used: %v", statuses)
	}
	// Each message once, except the timed-out post, which Slack made and the bot could not know.
	seen := map[string]int{}
	for _, txt := range texts {
		seen[txt]++
	}
	for txt, n := range seen {
		switch {
		case n > 1 && strings.Contains(txt, "dup-one"):
			t.Logf("the timed-out thread reply was posted %d times: Slack took the first post, whose answer was lost; the retry posted it again", n)
		case n > 1:
			t.Errorf("%q posted %d times", txt, n)
		}
	}
	if len(texts) > len(want)+1 {
		t.Errorf("%d thread replies, want %d (+1 for the timed-out post): %q", len(texts), len(want), texts)
	}
	if rootsByIncident(s, "C0DEFAULT")["INC-1"] != 1 || rootsByIncident(s, "C0DEFAULT")["INC-2"] != 1 {
		t.Errorf("roots: %v", rootsByIncident(s, "C0DEFAULT"))
	}
	if !otherAt.IsZero() {
		t.Logf("INC-2's root (another incident) appeared %v after its alert, while INC-1's post was held", otherAt.Sub(otherPosted).Round(100*time.Millisecond))
	}
}

// TestE2EFaultsSlowLoris: clients that open a connection and trickle an incomplete request
// header do not stop webhooks from being served, and the server closes their connections
// after its read-header timeout (app.Options.HTTP.ReadHeader; 1 s here).
func TestE2EFaultsSlowLoris(t *testing.T) {
	const readHeader = time.Second // 5 s in production
	in := start(t, setup{options: func(o *app.Options) { o.HTTP.ReadHeader = readHeader }})
	addr := strings.TrimPrefix(in.url, "http://")
	const loris = 32
	type closed struct {
		after time.Duration
		err   error
	}
	results := make(chan closed, loris)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	begin := time.Now()
	for range loris {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		opened := time.Now()
		if _, err := io.WriteString(conn, "POST /webhooks/generic HTTP/1.1\r\nHost: "+addr+"\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		go func() { // one more header byte every 100 ms, never the end of the header
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					if _, err := conn.Write([]byte("a")); err != nil {
						return
					}
				}
			}
		}()
		go func() { // a read ends when the server closes the connection
			_ = conn.SetReadDeadline(opened.Add(4 * readHeader))
			b, err := io.ReadAll(conn)
			if err == nil && len(b) > 0 {
				err = fmt.Errorf("answered %q", b)
			}
			results <- closed{after: time.Since(opened), err: err}
		}()
	}
	// Meanwhile webhooks are served (how fast is for benchmarks, not a bound here).
	for i := range 20 {
		in.ok("/webhooks/generic", generic("served during loris", fmt.Sprint("loris-", i)))
	}
	servedIn := time.Since(begin)
	var slowest time.Duration
	for range loris {
		r := <-results
		var ne net.Error
		switch {
		case errors.As(r.err, &ne) && ne.Timeout():
			t.Fatalf("a slow-loris connection was still open after %v", r.after.Round(time.Millisecond))
		case r.after < readHeader*8/10:
			t.Fatalf("a slow-loris connection was closed after %v, before the %v read-header timeout: %v", r.after, readHeader, r.err)
		}
		slowest = max(slowest, r.after)
	}
	t.Logf("20 webhooks served in %v beside %d slow-loris connections; the server closed them all within %v",
		servedIn.Round(time.Millisecond), loris, slowest.Round(time.Millisecond))
}

// TestE2EFaultsSecretsNeverLeak: a whole scenario with known secret values — the Slack bot and
// app tokens, the webhook token and a Redis password — through webhooks of every kind,
// commands, mentions, buttons, invalid tokens, a Redis outage and Slack errors; no secret
// appears in any log line, HTTP answer or anything the bot sent to Slack.
func TestE2EFaultsSecretsNeverLeak(t *testing.T) {
	const redisPassword = "redis-e2e-pass-3d8f"
	srv, err := testredis.Start("--requirepass", redisPassword, "--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	redisURL := "redis://:" + redisPassword + "@" + srv.Addr + "/0"
	s := newSlack(t, slackfake.Options{})
	in := start(t, setup{redisURL: redisURL, slack: s})
	ctx := context.Background()
	var answers []string // every HTTP answer body the bot gave
	keep := func(code int, body string) { answers = append(answers, fmt.Sprint(code, " ", body)) }

	// Webhooks of every kind.
	am, err := os.ReadFile("testdata/alertmanager-sms.json")
	if err != nil {
		t.Fatal(err)
	}
	gf, err := os.ReadFile("../integrations/alerts/testdata/grafana-webhook.json")
	if err != nil {
		t.Fatal(err)
	}
	keep(200, in.ok("/webhooks/alertmanager", string(am)))
	keep(200, in.ok("/webhooks/grafana", string(gf)))
	keep(200, in.ok("/webhooks/generic", generic("disk almost full", "disk-1")))
	keep(200, in.ok("/webhooks/generic", generic("disk almost full", "disk-1")))
	body := generic("signed alert", "signed-1")
	req, _ := http.NewRequest("POST", in.url+"/webhooks/generic", strings.NewReader(body))
	req.Header.Set(bot.SignatureHeader, bot.Sign(webhookToken, []byte(body), time.Now()))
	keep(doRequest(t, req))

	// Invalid tokens, some of them containing or being a real secret.
	for _, auth := range []string{"Bearer nope", "Bearer " + botToken, "Bearer " + appToken, "Bearer " + webhookToken + "x",
		"Basic " + webhookToken, "bearer  " + redisPassword} {
		a := postWebhook(ctx, in.url+"/webhooks/generic", auth, generic("x", "y"))
		if a.status != http.StatusUnauthorized {
			t.Fatalf("Authorization %q… answered %d", auth[:8], a.status)
		}
		keep(a.status, a.body)
	}
	for _, sig := range []string{"t=" + fmt.Sprint(time.Now().Unix()) + ",v1=" + webhookToken, "t=1,v1=" + botToken, webhookToken} {
		req, _ := http.NewRequest("POST", in.url+"/webhooks/generic", strings.NewReader(generic("x", "y")))
		req.Header.Set(bot.SignatureHeader, sig)
		code, b := doRequest(t, req)
		if code != http.StatusUnauthorized {
			t.Fatalf("a forged signature answered %d", code)
		}
		keep(code, b)
	}

	waitFor(t, s, "the roots", func(s *slackfake.Server) bool {
		return len(roots(s, "C0PIPE")) == 1 && len(roots(s, "C0DEFAULT")) == 2
	})
	root := roots(s, "C0PIPE")[0]

	// Commands, a mention, buttons.
	for _, text := range []string{"help", "incident list", "incident show INC-1", "incident ack INC-2", "frobnicate"} {
		env, err := s.SendSlashCommand(ctx, slackfake.SlashCommand{ChannelID: "C0PIPE", UserID: "U0ALICE", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, s, "the answer to "+strings.Fields(text)[0], func(s *slackfake.Server) bool {
			for _, p := range s.ResponsePosts() {
				if p.EnvelopeID == env.ID {
					return true
				}
			}
			return false
		})
	}
	if _, err := s.SendAppMention(ctx, slackfake.Mention{ChannelID: "C0PIPE", UserID: "U0BOB", Text: "<@U0BOT> incident show", ThreadTS: root.TS}); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"incident_ack", "incident_resolve"} {
		if _, err := s.SendBlockAction(ctx, slackfake.BlockAction{UserID: "U0BOB", ChannelID: "C0PIPE", MessageTS: root.TS, ActionID: action}); err != nil {
			t.Fatal(err)
		}
		word := map[string]string{"incident_ack": "acknowledged by", "incident_resolve": "resolved by"}[action]
		waitFor(t, s, "the root to say "+word, func(s *slackfake.Server) bool {
			m, _ := s.Message("C0PIPE", root.TS)
			return strings.Contains(m.Text, word)
		})
	}

	// Slack errors, a dropped socket, and a Redis outage: the error paths log.
	s.FailNext("chat.postMessage", 1, slackfake.Fault{Status: 500})
	s.FailNext("chat.postMessage", 1, slackfake.Fault{Error: "invalid_auth"})
	body = in.ok("/webhooks/generic", generic("after slack errors", "slack-errors"))
	keep(200, body)
	afterErrors := incidentOf(body)
	waitFor(t, s, "the root after the Slack errors", func(s *slackfake.Server) bool { return rootsByIncident(s, "C0DEFAULT")[afterErrors] > 0 })
	// A reconnect clears the invalid_auth the delivery saw.
	opens := len(s.CallsTo("apps.connections.open"))
	s.DropSockets()
	waitFor(t, s, "a new socket", func(s *slackfake.Server) bool {
		return len(s.CallsTo("apps.connections.open")) > opens && s.Connected() == 1
	})
	srv.Stop()
	a := postWebhook(ctx, in.url+"/webhooks/generic", "Bearer "+webhookToken, generic("while redis is down", "down-1"))
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("with Redis down the webhook answered %d %s", a.status, a.body)
	}
	keep(a.status, a.body)
	for _, path := range []string{"/readyz", "/metrics"} {
		resp, err := http.Get(in.url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		keep(resp.StatusCode, string(b))
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	in.waitReady()
	body = in.ok("/webhooks/generic", generic("after the outage", "down-2"))
	keep(200, body)
	afterOutage := incidentOf(body)
	waitFor(t, s, "the root after the outage", func(s *slackfake.Server) bool { return rootsByIncident(s, "C0DEFAULT")[afterOutage] > 0 })

	secrets := map[string]string{"SLACK_BOT_TOKEN": botToken, "SLACK_APP_TOKEN": appToken,
		"STREAMWATCH_WEBHOOK_TOKEN": webhookToken, "the Redis password": redisPassword}
	var found []string
	look := func(where, text string) {
		for name, secret := range secrets {
			// The value without its well-known prefix ("xoxb-"), which a partial mask might keep.
			tail := secret[strings.Index(secret, "-")+1:]
			if strings.Contains(text, secret) || strings.Contains(text, tail) {
				found = append(found, fmt.Sprintf("%s in %s: %.300s", name, where, text))
			}
		}
	}
	for _, line := range strings.Split(in.logs.String(), "\n") {
		look("a log line", line)
	}
	for _, b := range answers {
		look("an HTTP answer", b)
	}
	for _, c := range s.Calls() {
		for k, v := range c.Params {
			look("the "+k+" of a "+c.Method+" call", v)
		}
	}
	for _, ch := range []string{"C0PIPE", "C0DEFAULT"} {
		for _, m := range s.Messages(ch) {
			if m.User == "U0BOT" {
				look("a message", m.Text+" "+string(m.Blocks))
			}
		}
	}
	for _, e := range s.Ephemerals() {
		look("an ephemeral message", e.Text+" "+string(e.Blocks))
	}
	for _, p := range s.ResponsePosts() {
		look("a response post", p.Text+" "+string(p.Blocks))
	}
	if len(found) > 0 {
		t.Fatalf("secrets leaked:\n%s", strings.Join(found, "\n"))
	}
	// The scenario went through the paths that log.
	for _, msg := range []string{`"webhook recorded"`, `"command"`, `"slack delivery failed; will retry"`, `"webhook refused: redis unavailable"`} {
		if !strings.Contains(in.logs.String(), msg) {
			t.Fatalf("no log line %s: the scenario did not run as planned\n%s", msg, in.logs)
		}
	}
}

func doRequest(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
