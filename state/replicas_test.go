package state_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// replicated is a primary with one replica, and a Store over the primary that waits for it.
type replicated struct {
	primary, replica *testredis.Server
	store            *state.Store
	// onReplica reads the replica directly.
	onReplica *state.Store
	mu        sync.Mutex
	waits     []string // "use ok|timeout", as OnReplicaWait heard them
}

func newReplicated(t *testing.T) *replicated {
	t.Helper()
	p, r := testredis.StartReplicated(t)
	prefix := testredis.Prefix()
	rp := &replicated{primary: p, replica: r}
	rp.store = state.New(client(t, p.Addr), prefix)
	rp.store.MinReplicasAcked, rp.store.ReplicaAckTimeout = 1, time.Second
	rp.store.OnReplicaWait = func(use string, _ time.Duration, ok bool) {
		rp.mu.Lock()
		defer rp.mu.Unlock()
		rp.waits = append(rp.waits, use+map[bool]string{true: " ok", false: " timeout"}[ok])
	}
	if err := rp.store.EnsureOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	rp.onReplica = state.New(client(t, r.Addr), prefix)
	return rp
}

func client(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (rp *replicated) heard() []string {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return append([]string(nil), rp.waits...)
}

// TestRecordAlertsWaitsForTheReplica: with min_replicas_acked 1 a recorded batch is on the
// replica by the time RecordAlerts returns, and concurrent webhooks' batches share one WAIT
// per run. With the replica gone, RecordAlerts still records on the primary and returns the
// outcomes, with an error that says how many replicas confirmed them.
func TestRecordAlertsWaitsForTheReplica(t *testing.T) {
	ctx := context.Background()
	rp := newReplicated(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			out, err := rp.store.RecordAlert(ctx, alert("k"+string(rune('a'+i)), "fp"))
			if err != nil {
				t.Errorf("alert %d: %v", i, err)
				return
			}
			// On the replica as soon as the primary's answer says so: read it there.
			inc, err := rp.onReplica.Get(ctx, out.Incident)
			if err != nil || inc.Count != 1 {
				t.Errorf("alert %d: %s on the replica: %+v %v", i, out.Incident, inc, err)
			}
		})
	}
	wg.Wait()
	waits := rp.heard()
	if len(waits) == 0 || len(waits) > 20 {
		t.Fatalf("%d WAITs for 20 webhooks: %v", len(waits), waits)
	}
	for _, w := range waits {
		if w != "webhook ok" {
			t.Fatalf("WAITs %v", waits)
		}
	}
	t.Logf("20 concurrent webhooks, %d WAITs", len(waits))

	rp.replica.Stop()
	outs, err := rp.store.RecordAlerts(ctx, []state.AlertRecord{alert("ka", "fp"), alert("lonely", "fp")})
	var nr *state.NotReplicatedError
	if !errors.Is(err, state.ErrNotReplicated) || !errors.As(err, &nr) || nr.Acked != 0 || nr.Want != 1 {
		t.Fatalf("without the replica: %v, want only 0 of 1 replicas", err)
	}
	if err.Error() != "only 0 of 1 Redis replicas confirmed it within 1s" {
		t.Errorf("error %q", err)
	}
	if len(outs) != 2 || outs[0].Result != state.ResultDuplicate || outs[1].Result != state.ResultOpened {
		t.Fatalf("outcomes without the replica: %+v", outs)
	}
	if inc, err := rp.store.Get(ctx, outs[1].Incident); err != nil || inc.Key != "lonely" {
		t.Fatalf("not recorded on the primary: %+v %v", inc, err)
	}
	if w := rp.heard(); w[len(w)-1] != "webhook timeout" {
		t.Fatalf("WAITs %v", w)
	}
}

// TestConfirmAndLocks: Confirm returns once the replica has every earlier write; a lock counts
// as held only once the replica has it, and one it does not confirm is given back.
func TestConfirmAndLocks(t *testing.T) {
	ctx := context.Background()
	rp := newReplicated(t)
	mark, err := rp.store.Mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.store.SavePlan(ctx, "P-1", []byte("plan"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := rp.store.Confirm(ctx, "command", mark); err != nil {
		t.Fatal(err)
	}
	if b, err := rp.onReplica.Plan(ctx, "P-1"); err != nil || string(b) != "plan" {
		t.Fatalf("the plan on the replica: %q %v", b, err)
	}
	ok, err := rp.store.TryLock(ctx, "job:x:1", "me", time.Minute)
	if err != nil || !ok {
		t.Fatalf("TryLock: %v %v", ok, err)
	}
	if h, err := rp.onReplica.LockHolder(ctx, "job:x:1"); err != nil || h != "me" {
		t.Fatalf("the lock on the replica: %q %v", h, err)
	}

	rp.replica.Stop()
	ok, err = rp.store.TryLock(ctx, "job:x:2", "me", time.Minute)
	if ok || !errors.Is(err, state.ErrNotReplicated) {
		t.Fatalf("TryLock without the replica: %v %v, want not held, not replicated", ok, err)
	}
	if h, err := rp.store.LockHolder(ctx, "job:x:2"); err != nil || h != "" {
		t.Fatalf("a lock the replica did not confirm is still held by %q (%v)", h, err)
	}
	if err := rp.store.Confirm(ctx, "command", mark); !errors.Is(err, state.ErrNotReplicated) {
		t.Fatalf("Confirm without the replica: %v", err)
	}
	if got, want := rp.heard(), []string{"command ok", "lock ok", "lock timeout", "command timeout"}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("WAITs %v, want %v", got, want)
	}
}

// TestConfirmSeesAFailover: a change begun on one primary is never confirmed by a replica
// promoted since, whatever its own replicas have: the change may not have reached it.
func TestConfirmSeesAFailover(t *testing.T) {
	ctx := context.Background()
	rp := newReplicated(t)
	mark, err := rp.store.Mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	promoted := client(t, rp.replica.Addr)
	if err := promoted.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	rp.onReplica.MinReplicasAcked, rp.onReplica.ReplicaAckTimeout = 1, 100*time.Millisecond
	err = rp.onReplica.Confirm(ctx, "command", mark)
	var nr *state.NotReplicatedError
	if !errors.As(err, &nr) || !nr.PrimaryChanged {
		t.Fatalf("Confirm on the promoted replica: %v, want the primary changed", err)
	}
}

// TestNoReplicasAskedCostsNothing: without min_replicas_acked, Mark, Confirm and RecordAlerts
// run no WAIT and read no replication state.
func TestNoReplicasAskedCostsNothing(t *testing.T) {
	ctx := context.Background()
	srv, err := testredis.Start() // its own server: the shared one counts other packages' calls
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rdb := client(t, srv.Addr)
	s := state.New(rdb, testredis.Prefix())
	s.OnReplicaWait = func(string, time.Duration, bool) { t.Error("a WAIT without min_replicas_acked") }
	before := commandCalls(t, rdb)
	m, err := s.Mark(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Confirm(ctx, "command", m); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordAlert(ctx, alert("k", "fp")); err != nil {
		t.Fatal(err)
	}
	after := commandCalls(t, rdb)
	after["info"]-- // commandCalls's own, before
	for _, cmd := range []string{"wait", "info"} {
		if after[cmd] != before[cmd] {
			t.Errorf("%s ran %d times", cmd, after[cmd]-before[cmd])
		}
	}
}

// commandCalls are redis-server's calls per command so far (INFO commandstats).
func commandCalls(t *testing.T, rdb *redis.Client) map[string]int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for _, l := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
		cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				calls[cmd], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return calls
}

// TestRecordAlertsWaitsOnTheSlotsMaster: in a Redis Cluster, WAIT runs on the master that owns
// the keys' slot (every key shares the hash tag): with that master's replica gone, a batch is
// not confirmed, however many replicas the other masters have.
func TestRecordAlertsWaitsOnTheSlotsMaster(t *testing.T) {
	ctx := context.Background()
	c, err := testredis.StartClusterWith(testredis.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	prefix := testredis.Prefix()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { _ = rdb.Close() })
	s := state.New(rdb, prefix)
	s.MinReplicasAcked, s.ReplicaAckTimeout = 1, time.Second
	out, err := s.RecordAlert(ctx, alert("k", "fp"))
	if err != nil {
		t.Fatal(err)
	}
	master, err := c.MasterOf(ctx, "{"+prefix+"}")
	if err != nil {
		t.Fatal(err)
	}
	replicas, err := c.ReplicasOf(ctx, master)
	if err != nil || len(replicas) != 1 {
		t.Fatalf("replicas of %s: %v %v", master.Addr, replicas, err)
	}
	onReplica := redis.NewClient(&redis.Options{Addr: replicas[0].Addr, MaxRetries: -1,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
	t.Cleanup(func() { _ = onReplica.Close() })
	if inc, err := state.New(onReplica, prefix).Get(ctx, out.Incident); err != nil || inc.Count != 1 {
		t.Fatalf("%s on the slot's replica: %+v %v", out.Incident, inc, err)
	}
	if m, err := s.Mark(ctx); err != nil || s.Confirm(ctx, "command", m) != nil {
		t.Fatalf("Mark and Confirm on the cluster: %v", err)
	}

	replicas[0].Stop()
	if _, err := s.RecordAlert(ctx, alert("k", "fp")); !errors.Is(err, state.ErrNotReplicated) {
		t.Fatalf("with the slot master's replica gone: %v, want not replicated", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("the slot's master answers: %v", err)
	}
}

// TestWhatTheKeyIsFor: a primary acknowledges an alert its replica never got (the replica's
// link broke a moment before, and it is paused, so it has not reconnected), then dies, and the
// replica is promoted. Without min_replicas_acked the alert was answered as recorded and is
// gone; with it, the webhook was told it is not safe (503: the sender sends it again, to the
// new primary).
func TestWhatTheKeyIsFor(t *testing.T) {
	ctx := context.Background()
	for _, acked := range []int{0, 1} {
		rp := newReplicated(t)
		rp.store.MinReplicasAcked = acked
		if err := rp.replica.Pause(); err != nil {
			t.Fatal(err)
		}
		if err := client(t, rp.primary.Addr).ClientKillByFilter(ctx, "TYPE", "replica").Err(); err != nil {
			t.Fatal(err)
		}
		out, err := rp.store.RecordAlert(ctx, alert("k", "fp"))
		rp.primary.Stop()
		if err := rp.replica.Resume(); err != nil {
			t.Fatal(err)
		}
		promoted := client(t, rp.replica.Addr)
		if err := promoted.ReplicaOf(ctx, "NO", "ONE").Err(); err != nil {
			t.Fatal(err)
		}
		_, gone := rp.onReplica.Get(ctx, "INC-1")
		switch {
		case acked == 0 && (err != nil || out.Result != state.ResultOpened || !errors.Is(gone, state.ErrNotFound)):
			t.Fatalf("without the key: answered %+v %v, on the promoted replica %v; want acknowledged, then lost", out, err, gone)
		case acked == 1 && !errors.Is(err, state.ErrNotReplicated):
			t.Fatalf("with min_replicas_acked 1: answered %+v %v; want not replicated", out, err)
		}
	}
}
