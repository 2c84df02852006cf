package app_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// Failover mid-storm: two streamwatch processes (the release binary) against a highly
// available Redis (a primary with two replicas behind three Sentinels, or a Redis Cluster of
// three masters with a replica each), a storm of duplicate and distinct alerts from 16
// retrying senders, and kill -9 of the primary that holds the keys while it runs. Afterwards:
// every alert answered 2xx is in Redis (its incident's count at least the 2xx answers, at
// most those plus the answers that failed, whose alerts may have been recorded), one incident
// and one root message per key, the outbox drained with no root posted twice, each tick of the
// scheduled jobs run once, and /readyz 503 while no primary answered. With min_replicas_acked 0
// what the failover lost is reported, not judged: that is what the key is for.

// failoverTopology is a highly available Redis the storm runs against.
type failoverTopology interface {
	URL() string
	// Primary is the node that holds the keys of prefix now.
	Primary(ctx context.Context, prefix string) (*testredis.Server, error)
	// Promoted reports whether a node other than killed holds them now.
	Promoted(ctx context.Context, prefix string, killed *testredis.Server) bool
	// Recover gives the promoted primary a replica again where none is left (a cluster of one
	// replica per master: the killed node comes back as the new master's replica).
	Recover(ctx context.Context, prefix string, killed *testredis.Server) error
}

type sentinelTopology struct{ set *testredis.Sentinels }

func (s sentinelTopology) URL() string { return s.set.URL }

func (s sentinelTopology) Primary(ctx context.Context, _ string) (*testredis.Server, error) {
	addr, err := s.set.PrimaryAddr(ctx)
	if err != nil {
		return nil, err
	}
	return s.set.Node(addr), nil
}

// Promoted: a replica says it is the primary now (the Sentinels told it so).
func (s sentinelTopology) Promoted(ctx context.Context, _ string, _ *testredis.Server) bool {
	return s.set.Promoted(ctx) != nil
}

// Recover waits until the other replica, which the Sentinels move over, is the promoted
// primary's online replica.
func (s sentinelTopology) Recover(ctx context.Context, _ string, _ *testredis.Server) error {
	p := s.set.Promoted(ctx)
	for _, r := range s.set.Replicas {
		if r != p {
			return p.WaitReplicaOnline(r, time.Minute)
		}
	}
	return nil
}

type clusterTopology struct{ c *testredis.Cluster }

func (c clusterTopology) URL() string { return c.c.URL }

func (c clusterTopology) Primary(ctx context.Context, prefix string) (*testredis.Server, error) {
	return c.c.MasterOf(ctx, "{"+prefix+"}")
}

func (c clusterTopology) Promoted(ctx context.Context, prefix string, killed *testredis.Server) bool {
	m, err := c.c.MasterOf(ctx, "{"+prefix+"}")
	return err == nil && m != killed
}

func (c clusterTopology) Recover(ctx context.Context, prefix string, killed *testredis.Server) error {
	if err := killed.Restart(); err != nil {
		return err
	}
	// The slot's master is asked again each time: while the restarted node rejoins, the
	// cluster may still be settling which node serves the slot.
	return wait.Until(ctx, time.Minute, "the killed primary back as a replica of the slot's master", func() bool {
		m, err := c.c.MasterOf(ctx, "{"+prefix+"}")
		return err == nil && m != killed && m.WaitReplicaOnline(killed, 500*time.Millisecond) == nil
	})
}

func TestBinaryFailoverSentinel(t *testing.T) {
	for _, acked := range []int{1, 0} {
		t.Run(fmt.Sprintf("min_replicas_acked=%d", acked), func(t *testing.T) {
			set, err := testredis.StartSentinels(2, 3)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(set.Close)
			failoverStorm(t, sentinelTopology{set}, acked)
		})
	}
}

func TestBinaryFailoverCluster(t *testing.T) {
	for _, acked := range []int{1, 0} {
		t.Run(fmt.Sprintf("min_replicas_acked=%d", acked), func(t *testing.T) {
			c, err := testredis.StartClusterWith(testredis.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			failoverStorm(t, clusterTopology{c}, acked)
		})
	}
}

// failoverSender posts alerts until they are answered 2xx, retrying 503s and transport errors
// as Alertmanager does, and keeps what it was told.
type failoverSender struct {
	mu        sync.Mutex
	ok        map[string]int // key → 2xx answers
	uncertain map[string]int // key → 503s and transport errors: their alerts may be recorded
	accepted  int
	failures  []time.Time // when each 503 or transport error came
	unavail   int         // 503s
	transport int         // transport errors
	other     []string    // anything else: a bug
}

func (s *failoverSender) send(ctx context.Context, url, key, body string) {
	backoff := 10 * time.Millisecond
	for ctx.Err() == nil {
		a := postWebhook(ctx, url, "Bearer "+webhookToken, body)
		s.mu.Lock()
		switch {
		case a.err == nil && a.status/100 == 2:
			s.ok[key]++
			s.accepted++
			s.mu.Unlock()
			return
		case a.err != nil && ctx.Err() != nil:
		case a.err != nil:
			s.transport++
			s.uncertain[key]++
			s.failures = append(s.failures, time.Now())
		case a.status == http.StatusServiceUnavailable:
			s.unavail++
			s.uncertain[key]++
			s.failures = append(s.failures, time.Now())
		default:
			s.other = append(s.other, fmt.Sprintf("%s: %d %s", key, a.status, a.body))
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

func (s *failoverSender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// readyzWatch polls /readyz of every process until stopped, and keeps when each answer came.
type readyzWatch struct {
	mu      sync.Mutex
	answers []readyzAnswer
	stop    chan struct{}
	done    chan struct{}
}

// readyzAnswer is one answer and when it came (a 503 takes up to a second: the dial to a dead
// primary is retried).
type readyzAnswer struct {
	at   time.Time
	code int
}

// watchReadyz polls each process in a goroutine of its own, so that one slow answer (a
// refused dial is retried) does not delay the other's.
func watchReadyz(ps ...*proc) *readyzWatch {
	w := &readyzWatch{stop: make(chan struct{}), done: make(chan struct{})}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 2 * time.Second}
	for _, p := range ps {
		wg.Go(func() {
			for {
				code := 0
				if resp, err := client.Get(p.url + "/readyz"); err == nil {
					code = resp.StatusCode
					resp.Body.Close()
				}
				w.mu.Lock()
				w.answers = append(w.answers, readyzAnswer{time.Now(), code})
				w.mu.Unlock()
				select {
				case <-w.stop:
					return
				case <-time.After(25 * time.Millisecond):
				}
			}
		})
	}
	go func() { wg.Wait(); close(w.done) }()
	return w
}

func (w *readyzWatch) end() []readyzAnswer {
	close(w.stop)
	<-w.done
	return w.answers
}

var (
	stormRoot = regexp.MustCompile(`(INC-[0-9]+): failover storm (k[0-9]+) \(.*, ([0-9]+) occurrences?\)`)
	jobRun    = regexp.MustCompile(`"msg":"scheduled job runs","job":"([^"]+)","tick":([0-9]+)`)
)

func failoverStorm(t *testing.T, topo failoverTopology, acked int) {
	const keys, rounds, senders = 150, 8, 16
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := newSlack(t, slackfake.Options{})
	run := binaryRun{redisURL: topo.URL(), prefix: testredis.Prefix(), slack: s, flags: []string{"--log-level", "debug"},
		redisExtra: fmt.Sprintf(", min_replicas_acked: %d, replica_ack_timeout: 1s", acked),
		extra:      "alerts: {flood: {new_incidents_per_minute: 0}}\nhealth: {digest_schedule: \"@every 1s\"}\n"}
	procs := []*proc{startBinary(t, run), startBinary(t, run)}

	// The storm: each round sends every key once, so duplicates of a key are spread over it.
	sender := &failoverSender{ok: map[string]int{}, uncertain: map[string]int{}}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for i := range senders {
		wg.Go(func() {
			url := procs[i%2].url + "/webhooks/generic"
			for j := range jobs {
				key := fmt.Sprintf("k%03d", j%keys)
				sender.send(ctx, url, key, generic("failover storm "+key, key))
			}
		})
	}
	go func() {
		defer close(jobs)
		for j := range keys * rounds {
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	stormDone := make(chan struct{})
	go func() { wg.Wait(); close(stormDone) }()

	wait.For(t, time.Minute, "a third of the storm accepted", func() bool { return sender.count() >= keys*rounds/3 })
	primary, err := topo.Primary(ctx, run.prefix)
	if err != nil || primary == nil {
		t.Fatalf("the primary: %v %v", primary, err)
	}
	watch := watchReadyz(procs...)
	killedAt := time.Now()
	primary.Stop() // SIGKILL
	wait.For(t, time.Minute, "a replica promoted", func() bool { return topo.Promoted(ctx, run.prefix, primary) })
	promotedAt := time.Now()
	recoveredAt := promotedAt
	if acked > 0 { // without a replica the promoted primary confirms nothing
		if err := topo.Recover(ctx, run.prefix, primary); err != nil {
			t.Fatal(err)
		}
		recoveredAt = time.Now()
	}
	select {
	case <-stormDone:
	case <-ctx.Done():
		t.Fatalf("the storm did not end: %d of %d accepted", sender.count(), keys*rounds)
	}
	stormEnded := time.Now()
	ready := watch.end()
	if len(sender.other) > 0 {
		t.Fatalf("%d answers neither 2xx nor 503, e.g. %s", len(sender.other), sender.other[0])
	}

	// What Redis holds, read through the same URL.
	opts, err := config.ParseRedisURL(topo.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewUniversalClient(opts)
	defer rdb.Close()
	store := state.New(rdb, run.prefix)
	var open []*state.Incident
	rootsOf := func() map[string][]string { // incident → the occurrences each of its roots shows
		out := map[string][]string{}
		for _, m := range roots(s, "C0DEFAULT") {
			if f := stormRoot.FindStringSubmatch(m.Text); f != nil {
				out[f[1]] = append(out[f[1]], f[3])
			}
		}
		return out
	}
	var depth int64
	err = wait.Until(ctx, 2*time.Minute, "the outbox drained and every root showing its incident's count", func() bool {
		var err error
		if open, err = store.ListOpen(ctx, ""); err != nil {
			return false
		}
		if depth, err = store.OutboxDepth(ctx); err != nil || depth != 0 {
			return false
		}
		got := rootsOf()
		for _, inc := range open {
			if r := got[inc.ID]; len(r) == 0 || r[len(r)-1] != strconv.FormatInt(inc.Count, 10) {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("%v: %d open incidents, outbox depth %d\nlog lines:\n%s", err, len(open), depth,
			grepLines(procs[0].logs.String()+procs[1].logs.String(), "outbox", "delivery", `"level":"ERROR"`))
	}

	// Every alert answered 2xx, counted; one incident and one root per key.
	byKey := map[string][]*state.Incident{}
	for _, inc := range open {
		byKey[inc.Key] = append(byKey[inc.Key], inc)
	}
	var lost, split, overCounted []string
	lostAlerts, extraAlerts := 0, 0
	for k := range keys {
		key := fmt.Sprintf("k%03d", k)
		incs := byKey[key]
		var stored int64
		for _, inc := range incs {
			stored += inc.Count
		}
		ok, maybe := int64(sender.ok[key]), int64(sender.uncertain[key])
		switch {
		case len(incs) > 1:
			split = append(split, fmt.Sprintf("%s: %d incidents", key, len(incs)))
		case stored < ok:
			lost = append(lost, fmt.Sprintf("%s: %d stored of %d answered 2xx", key, stored, ok))
			lostAlerts += int(ok - stored)
		case stored > ok+maybe:
			overCounted = append(overCounted, fmt.Sprintf("%s: %d stored, %d answered 2xx, %d failed", key, stored, ok, maybe))
		}
		extraAlerts += int(max(stored-ok, 0))
	}
	rootCount := rootsOf()
	var twice []string
	for id, r := range rootCount {
		if len(r) > 1 {
			twice = append(twice, fmt.Sprintf("%s×%d", id, len(r)))
		}
	}
	keyRoots := map[string]int{}
	for _, m := range roots(s, "C0DEFAULT") {
		if f := stormRoot.FindStringSubmatch(m.Text); f != nil {
			keyRoots[f[2]]++
		}
	}
	var keyTwice []string
	for key, n := range keyRoots {
		if n > 1 {
			keyTwice = append(keyTwice, fmt.Sprintf("%s×%d", key, n))
		}
	}
	threadReplies := 0
	for _, m := range s.Messages("C0DEFAULT") {
		if m.ThreadTS != "" && m.ThreadTS != m.TS {
			threadReplies++
		}
	}
	runs := map[string]int{}
	var doubleRuns []string
	for _, p := range procs {
		for _, m := range jobRun.FindAllStringSubmatch(p.logs.String(), -1) {
			if runs[m[1]+"@"+m[2]]++; runs[m[1]+"@"+m[2]] == 2 {
				doubleRuns = append(doubleRuns, m[1]+"@"+m[2])
			}
		}
	}

	// When the webhooks refused, and when /readyz said so.
	var firstFail, lastFail time.Time
	if len(sender.failures) > 0 {
		firstFail = slices.MinFunc(sender.failures, time.Time.Compare)
		lastFail = slices.MaxFunc(sender.failures, time.Time.Compare)
	}
	var first503, first200 time.Time
	for _, a := range ready {
		if a.code != 200 && first503.IsZero() && a.at.After(killedAt) {
			first503 = a.at
		}
		if a.code == 200 && first200.IsZero() && a.at.After(promotedAt) {
			first200 = a.at
		}
	}
	since := func(at time.Time) string {
		if at.IsZero() {
			return "never"
		}
		return at.Sub(killedAt).Round(10 * time.Millisecond).String()
	}
	t.Logf("min_replicas_acked %d: %d alerts (%d keys × %d) from %d senders; %d answered 503, %d transport errors; "+
		"after the kill: promotion %s, recovery %s, first refusal %s, last refusal %s, storm over %s; "+
		"/readyz 503 from %s, 200 again %s; %d alerts answered 2xx lost (%d keys), %d keys with two incidents, "+
		"%d incidents and %d keys with two roots, %d alerts counted beyond their 2xx answers (retries of recorded alerts), %d tick(s) run twice",
		acked, keys*rounds, keys, rounds, senders, sender.unavail, sender.transport,
		since(promotedAt), since(recoveredAt), since(firstFail), since(lastFail), since(stormEnded),
		since(first503), since(first200), lostAlerts, len(lost), len(split), len(twice), len(keyTwice), extraAlerts, len(doubleRuns))

	if !firstFail.IsZero() && firstFail.Before(killedAt) {
		t.Errorf("a webhook was refused %v before the kill", killedAt.Sub(firstFail))
	}
	if first503.IsZero() || first200.IsZero() {
		t.Errorf("/readyz: 503 after the kill %s, 200 after the promotion %s", since(first503), since(first200))
	}
	if len(overCounted) > 0 {
		t.Errorf("keys counted more often than they were sent: %v", firstFive(overCounted))
	}
	if threadReplies > 0 {
		t.Errorf("%d thread replies: identical re-sends only update the root", threadReplies)
	}
	if acked == 0 {
		return // what a failover loses without the key is reported above
	}
	if len(lost)+len(split) > 0 {
		t.Errorf("with min_replicas_acked %d: alerts answered 2xx lost %v; keys with several incidents %v", acked, firstFive(lost), firstFive(split))
	}
	if len(open) != keys || len(rootCount) != keys {
		t.Errorf("%d open incidents and %d with a root for %d keys", len(open), len(rootCount), keys)
	}
	if len(twice)+len(keyTwice) > 0 {
		t.Errorf("roots posted twice: incidents %v, keys %v", firstFive(twice), firstFive(keyTwice))
	}
	if len(doubleRuns) > 0 {
		t.Errorf("scheduled ticks run by both replicas: %v", firstFive(doubleRuns))
	}
	if len(runs) == 0 {
		t.Error("no scheduled job ran: the test proves nothing about them")
	}
}
