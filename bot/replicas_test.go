package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/testclock"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/metrics"
	"github.com/streamwatch/streamwatch/state"
)

// TestDelivererWaitsForTheReplicas: with min_replicas_acked 1 the deliverer posts nothing
// whose claim the replica has not confirmed, and a root whose completion it has not confirmed
// is not forgotten: once the replica is back, each root is posted once and recorded.
func TestDelivererWaitsForTheReplicas(t *testing.T) {
	ctx := context.Background()
	primary, replica := testredis.StartReplicated(t)
	rdb := redis.NewClient(&redis.Options{Addr: primary.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	store := state.New(rdb, testredis.Prefix())
	store.MinReplicasAcked, store.ReplicaAckTimeout = 1, time.Second
	clock := testclock.New(time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC))
	store.SetClock(clock.Now)
	if err := store.EnsureOutbox(ctx); err != nil {
		t.Fatal(err)
	}
	var stopOnRoot atomic.Value // the root whose post stops the replica
	stopOnRoot.Store("")
	slack := &scriptedSlack{roots: map[string]string{}, answer: func(_ int, c slackCall) error {
		if string(c) == stopOnRoot.Load() {
			replica.Stop()
		}
		return nil
	}}
	d := &deliverer{out: replicatedOutbox{Outbox: store, r: store}, slack: slack, metrics: metrics.New(), log: slog.New(slog.DiscardHandler),
		replica: "r1", claimAfter: time.Minute, timeout: time.Second, wait: -1, now: clock.Now, authBad: &atomic.Bool{},
		retryAt: map[string]time.Time{}, attempts: map[string]int{}, replied: map[string]bool{}, posted: map[string]string{},
		paused: map[string]time.Time{}}
	alert := func(key string) {
		if _, err := store.RecordAlert(ctx, state.AlertRecord{Key: key, Fingerprint: key, Title: "client replied sms", Severity: 3, Channel: "C1"}); err != nil {
			t.Fatalf("alert %s: %v", key, err)
		}
	}
	pass := func() error {
		clock.Add(time.Second)
		return d.pass(ctx)
	}
	restart := func() {
		if err := replica.Restart(); err != nil {
			t.Fatal(err)
		}
		if err := primary.WaitReplicaOnline(replica, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	alert("a")
	replica.Stop()
	if err := pass(); !errors.Is(err, state.ErrNotReplicated) {
		t.Fatalf("a pass whose claim the replica did not confirm: %v", err)
	}
	if done, _ := slack.calls(); len(done) != 0 {
		t.Fatalf("posted %v before the claim was confirmed", done)
	}
	restart()
	if err := pass(); err != nil {
		t.Fatal(err)
	}

	alert("b")
	stopOnRoot.Store("post C1 root INC-2")
	if err := pass(); !errors.Is(err, state.ErrNotReplicated) {
		t.Fatalf("a pass whose completion the replica did not confirm: %v", err)
	}
	restart()
	for range 3 {
		if err := pass(); err != nil {
			t.Fatal(err)
		}
	}
	done, _ := slack.calls()
	if fmt.Sprint(done) != "[post C1 root INC-1 post C1 root INC-2]" {
		t.Fatalf("Slack took %v, want each root once", done)
	}
	for _, id := range []string{"INC-1", "INC-2"} {
		if inc, err := store.Get(ctx, id); err != nil || inc.RootTS == "" {
			t.Fatalf("%s's root not recorded: %+v %v", id, inc, err)
		}
	}
	if n, err := store.OutboxDepth(ctx); err != nil || n != 0 {
		t.Fatalf("outbox depth %d (%v)", n, err)
	}
}
