package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// Redis with replicas: redis.min_replicas_acked, and Sentinels (in-process; the failover
// storms against the built binary are in failover_test.go).

// TestE2EReplicasMustConfirm: with min_replicas_acked 1 a webhook answers 200 while the
// replica confirms its alerts; with the replica gone it answers 503 with the reason and
// Retry-After, the alert recorded on the primary all the same, and a command that changes
// something says the change is not yet safe. The metrics count the WAITs and the timeouts.
func TestE2EReplicasMustConfirm(t *testing.T) {
	primary, replica := testredis.StartReplicated(t)
	in := start(t, setup{redisURL: primary.URL, redisExtra: "  min_replicas_acked: 1\n  replica_ack_timeout: 1s\n"})

	if body := in.ok("/webhooks/generic", generic("client replied sms", "r-1")); !strings.Contains(body, `"incident":"INC-1","result":"opened"`) {
		t.Fatalf("first alert answered %s", body)
	}
	waitFor(t, in.slack, "INC-1's root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })

	replica.Stop()
	code, retry, body := postAlert(t, in, "r-1")
	if code != 503 || retry == "" ||
		body != `{"error":"recorded on the Redis primary, but only 0 of 1 Redis replicas confirmed it within 1s; retry"}`+"\n" {
		t.Fatalf("without the replica: %d Retry-After %q %s", code, retry, body)
	}
	reply := ask(t, in.slack, "incident ack INC-1")
	if !strings.Contains(string(reply.Blocks), "Not yet safe") ||
		!strings.Contains(string(reply.Blocks), "Redis has this change, but only 0 of 1 Redis replicas confirmed it within 1s.") {
		t.Fatalf("ack's reply without the replica: %s %s", reply.Text, reply.Blocks)
	}

	if err := replica.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := primary.WaitReplicaOnline(replica, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	// The retry: the alert the 503 refused counts once more, in the same incident.
	if body := in.ok("/webhooks/generic", generic("client replied sms", "r-1")); !strings.Contains(body, `"incident":"INC-1","result":"duplicate"`) {
		t.Fatalf("the retry answered %s", body)
	}
	waitFor(t, in.slack, "INC-1's root counting 3", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 1 && strings.Contains(r[0].Text, "3 occurrences")
	})
	m := metricsOf(t, in)
	for _, want := range []string{
		`streamwatch_redis_replica_wait_timeouts_total{for="webhook"} 1`,
		`streamwatch_redis_replica_wait_timeouts_total{for="command"} 1`,
		`streamwatch_alerts_received_total{outcome="unreplicated",source="generic"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, use := range []string{"webhook", "outbox", "command"} {
		if n, ok := scrape(t, in, fmt.Sprintf(`streamwatch_redis_replica_wait_seconds_count{for=%q}`, use)); !ok || n == 0 {
			t.Errorf("no WAIT for %s measured (%v %v)", use, n, ok)
		}
	}
}

// TestE2ESentinelFollowsThePrimary: REDIS_URL names three Sentinels and the master; when the
// primary dies, /readyz answers 503 until the Sentinels promote a replica and 200 after, and
// the incidents live on there.
func TestE2ESentinelFollowsThePrimary(t *testing.T) {
	set, err := testredis.StartSentinels(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(set.Close)
	in := start(t, setup{redisURL: set.URL, redisExtra: "  min_replicas_acked: 1\n"})
	if body := in.ok("/webhooks/generic", generic("client replied sms", "s-1")); !strings.Contains(body, `"incident":"INC-1","result":"opened"`) {
		t.Fatalf("first alert answered %s", body)
	}
	waitFor(t, in.slack, "INC-1's root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })

	set.Primary.Stop()
	killed := time.Now()
	waitRedisUnreachable(t, in)
	var promoted string
	wait.For(t, 30*time.Second, "a replica promoted", func() bool {
		promoted, _ = set.PrimaryAddr(context.Background())
		return promoted != "" && promoted != set.Primary.Addr
	})
	in.waitReady()
	t.Logf("/readyz 200 again %v after the kill", time.Since(killed).Round(10*time.Millisecond))
	// The promoted replica has no replica of its own: 0 of 1 confirm, until one is there.
	code, _, body := postAlert(t, in, "s-1")
	if code != 503 || !strings.Contains(body, "only 0 of 1 Redis replicas confirmed it") {
		t.Fatalf("on the promoted primary without a replica: %d %s", code, body)
	}
	r, err := set.Node(promoted).StartReplica()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	if body := in.ok("/webhooks/generic", generic("client replied sms", "s-1")); !strings.Contains(body, `"incident":"INC-1","result":"duplicate"`) {
		t.Fatalf("after the failover the alert answered %s, want INC-1 again", body)
	}
	waitFor(t, in.slack, "INC-1's root counting 3", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 1 && strings.Contains(r[0].Text, "3 occurrences")
	})
}
