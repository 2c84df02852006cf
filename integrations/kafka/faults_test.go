package kafka

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerUnderTest picks a broker that leads a partition of topic but does
// not coordinate group, so that stopping it costs log ends only.
func brokerUnderTest(t *testing.T, kc *kfake.Cluster, topic, group string) int32 {
	t.Helper()
	coord := kc.CoordinatorFor(group)
	x := (coord + 1) % 3
	if err := kc.MoveTopicPartition(topic, 0, x); err != nil {
		t.Fatal(err)
	}
	return x
}

func ledBy(kc *kfake.Cluster, topic string, n int32, node int32) []int32 {
	var out []int32
	for p := int32(0); p < n; p++ {
		if kc.LeaderFor(topic, p) == node {
			out = append(out, p)
		}
	}
	return out
}

// TestBrokerStopsMidCall: one broker stops answering ListOffsets in the
// middle of a lag call. The call answers within its deadline, with the
// other brokers' partitions exact and this broker's named as unknown.
func TestBrokerStopsMidCall(t *testing.T) {
	t.Parallel()
	kc := newKfake(t)
	const topic, group = "orders", "orders-app"
	createTopic(t, kc, topic, 6)
	produce(t, kc, topic, []int{5, 5, 5, 5, 5, 5}, nil)
	commitStandalone(t, kc, group, topic, map[int32]int64{0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 5: 1})
	x := brokerUnderTest(t, kc, topic, group)
	down := ledBy(kc, topic, 6, x)

	opts := testClusterOptions(kc, "main")
	opts.Timeout = 10 * time.Second // sarama's own timeout must not be what ends the call
	m := newTestMonitor(t, opts, nil, nil)
	warm, cancelWarm := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelWarm()
	if _, err := m.GroupLag(warm, "", group, topic); err != nil {
		t.Fatal(err)
	}

	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the client closes
	kc.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		if kc.CurrentNode() == x {
			kc.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})

	const deadline = 1500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	started := time.Now()
	r, err := m.GroupLag(ctx, "", group, topic)
	elapsed := time.Since(started)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed > deadline+250*time.Millisecond {
		t.Errorf("the call took %v, past its %v deadline", elapsed, deadline)
	}
	var found *Unavailable
	for i, u := range r.Unavailable {
		if u.What == PartLogEnds {
			found = &r.Unavailable[i]
		}
	}
	if found == nil {
		t.Fatalf("no unavailable log ends in %+v", r.Unavailable)
	}
	var be *BrokerError
	if !errors.As(found.Err, &be) || be.Broker.ID != x || be.Op != "ListOffsets" || !errors.Is(found.Err, ErrUnreachable) {
		t.Fatalf("error = %v, want a BrokerError for broker %d", found.Err, x)
	}
	if !strings.Contains(found.Err.Error(), "ListOffsets: no answer within") {
		t.Errorf("error = %q", found.Err)
	}
	if len(found.Partitions) != len(down) {
		t.Errorf("unknown partitions = %v, want those led by broker %d: %v", found.Partitions, x, down)
	}
	isDown := map[int32]bool{}
	for _, p := range down {
		isDown[p] = true
	}
	for _, p := range r.Partitions {
		switch {
		case isDown[p.Partition] && (p.LogEnd != UnknownOffset || p.Status != StatusUnknown):
			t.Errorf("p%d should be unknown: %+v", p.Partition, p)
		case !isDown[p.Partition] && (p.LogEnd != 5 || p.Committed != 1 || p.Lag != 4):
			t.Errorf("p%d should be exact: %+v", p.Partition, p)
		}
	}
	if r.Totals.Unknown != len(down) || r.Totals.Lag != int64(4*(6-len(down))) {
		t.Errorf("totals = %+v", r.Totals)
	}
	if found.Partitions[0].Topic != "orders" || !strings.Contains(found.Err.Error(), be.Broker.Addr) {
		t.Errorf("the unavailable log ends do not name the topic and the broker: %+v", found)
	}
	releaseOnce.Do(func() { close(release) })
}

// TestBrokerDropsConnection: a broker that closes the connection on
// ListOffsets costs its partitions at once, not at the deadline.
func TestBrokerDropsConnection(t *testing.T) {
	t.Parallel()
	kc := newKfake(t)
	const topic, group = "clicks", "clicks-app"
	createTopic(t, kc, topic, 6)
	produce(t, kc, topic, []int{3, 3, 3, 3, 3, 3}, nil)
	commitStandalone(t, kc, group, topic, map[int32]int64{0: 3, 1: 3, 2: 3, 3: 3, 4: 3, 5: 3})
	x := brokerUnderTest(t, kc, topic, group)
	m := newTestMonitor(t, testClusterOptions(kc, "main"), nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.GroupLag(ctx, "", group, topic); err != nil {
		t.Fatal(err)
	}
	kc.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		if kc.CurrentNode() == x {
			kc.KeepControl()
			return nil, errors.New("broker going down"), true
		}
		return nil, nil, false
	})
	r, err := m.GroupLag(ctx, "", group, topic)
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Unknown != len(ledBy(kc, topic, 6, x)) || r.Totals.Unknown == 0 {
		t.Errorf("unknown partitions = %d, want those of broker %d", r.Totals.Unknown, x)
	}
	var be *BrokerError
	if len(r.Unavailable) == 0 || !errors.As(r.Unavailable[0].Err, &be) || be.Broker.ID != x {
		t.Errorf("unavailable = %+v, want broker %d named", r.Unavailable, x)
	}
}

// TestClusterDownAtStart: a cluster whose only broker refuses connections
// does not stop NewClusters; the call fails naming the broker, and the next
// call, once the broker is up, succeeds with the same client.
func TestClusterDownAtStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	cs, err := NewClusters([]ClusterOptions{{Name: "down", Brokers: []string{addr}, Version: "3.6.0", Timeout: time.Second}}, ClustersOptions{})
	if err != nil {
		t.Fatalf("NewClusters must not connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	m, err := NewMonitor(cs, nil, nil, MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = m.GroupLag(ctx, "down", "g", "t")
	if !errors.Is(err, ErrUnreachable) || !Retryable(err) || !strings.Contains(err.Error(), addr) ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want an unreachable, retryable error naming %s", err, addr)
	}

	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Skipf("port %d was taken meanwhile: %v", port, err)
	}
	t.Cleanup(kc.Close)
	r, err := m.GroupLag(ctx, "down", "g", "t")
	if !errors.Is(err, ErrUnknownGroup) || r == nil || r.Totals.Partitions != 2 {
		t.Fatalf("after the broker came up: %v, %+v", err, r)
	}
}

// TestClusterHangs: a broker that accepts connections and never answers
// costs the call its deadline, not more, and the error says so.
func TestClusterHangs(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	cs, err := NewClusters([]ClusterOptions{{Name: "hung", Brokers: []string{ln.Addr().String()}, Timeout: 30 * time.Second}}, ClustersOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	t.Cleanup(func() { // first: let sarama's blocked reads fail
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	m, err := NewMonitor(cs, nil, nil, MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	started := time.Now()
	_, err = m.GroupLag(ctx, "", "g", "t")
	if elapsed := time.Since(started); elapsed > deadline+250*time.Millisecond {
		t.Errorf("the call took %v, past its %v deadline", elapsed, deadline)
	}
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "no answer from "+ln.Addr().String()+" within") {
		t.Fatalf("err = %v", err)
	}
}
