package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newKfake starts an in-process Kafka (real wire protocol) for one test.
func newKfake(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

var (
	sharedOnce sync.Once
	sharedC    *kfake.Cluster
	sharedErr  error
	topicSeq   atomic.Int64
)

// sharedKfake is one 3-broker cluster for the tests that neither inject
// faults nor count requests; each uses its own topics and groups.
func sharedKfake(t testing.TB) *kfake.Cluster {
	t.Helper()
	sharedOnce.Do(func() { sharedC, sharedErr = kfake.NewCluster(kfake.NumBrokers(3)) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedC
}

func uniqueName(prefix string) string { return fmt.Sprintf("%s-%d", prefix, topicSeq.Add(1)) }

func testClusterOptions(c *kfake.Cluster, name string) ClusterOptions {
	return ClusterOptions{Name: name, Brokers: c.ListenAddrs(), Version: "3.6.0", Timeout: 3 * time.Second}
}

// newTestMonitor builds Clusters and a Monitor over one kfake cluster.
func newTestMonitor(t testing.TB, opts ClusterOptions, store SampleStore, now func() time.Time, pipelines ...Pipeline) *Monitor {
	t.Helper()
	cs, err := NewClusters([]ClusterOptions{opts}, ClustersOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	m, err := NewMonitor(cs, store, pipelines, MonitorOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func saramaTestConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = 50 * time.Millisecond
	cfg.Consumer.Group.Heartbeat.Interval = 100 * time.Millisecond
	cfg.Consumer.MaxWaitTime = 50 * time.Millisecond
	return cfg
}

// createTopic creates topic with n partitions through sarama's admin.
func createTopic(t testing.TB, c *kfake.Cluster, topic string, n int32) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(c.ListenAddrs(), saramaTestConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: n, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
}

// produce writes counts[p] records to partition p, stamped by ts.
func produce(t testing.TB, c *kfake.Cluster, topic string, counts []int, ts func(p, i int) time.Time) {
	t.Helper()
	// Idempotent: a retry after a slow answer (a busy machine under -race) must not write a
	// record twice, or the tests' exact offsets are off by one.
	cfg := saramaTestConfig()
	cfg.Producer.Idempotent = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer(c.ListenAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var msgs []*sarama.ProducerMessage
	for part, n := range counts {
		for i := 0; i < n; i++ {
			m := &sarama.ProducerMessage{Topic: topic, Partition: int32(part), Value: sarama.StringEncoder(fmt.Sprintf("r%d-%d", part, i))}
			if ts != nil {
				m.Timestamp = ts(part, i)
			}
			msgs = append(msgs, m)
		}
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
}

// commitStandalone commits offsets for group without joining it, the way
// Spark listeners and admin tools do.
func commitStandalone(t testing.TB, c *kfake.Cluster, group, topic string, offsets map[int32]int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os := kadm.Offsets{}
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, group, os); err != nil {
		t.Fatal(err)
	}
}

// liveGroup is a sarama consumer group that consumes topic and marks
// records below stopAt[p] (all records when stopAt is nil).
type liveGroup struct {
	cg       sarama.ConsumerGroup
	cancel   context.CancelFunc
	done     chan struct{}
	assigned chan struct{}
	once     sync.Once
}

type markingHandler struct {
	lg     *liveGroup
	stopAt map[int32]int64
}

func (h *markingHandler) Setup(sess sarama.ConsumerGroupSession) error {
	h.lg.once.Do(func() { close(h.lg.assigned) })
	return nil
}
func (h *markingHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *markingHandler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		if stop, ok := h.stopAt[msg.Partition]; h.stopAt == nil || ok && msg.Offset < stop {
			sess.MarkMessage(msg, "") // auto-commit (every 50ms) commits it
		}
	}
	return nil
}

func startGroup(t testing.TB, c *kfake.Cluster, group, clientID, topic string, stopAt map[int32]int64) *liveGroup {
	t.Helper()
	cfg := saramaTestConfig()
	cfg.ClientID = clientID
	cg, err := sarama.NewConsumerGroup(c.ListenAddrs(), group, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	lg := &liveGroup{cg: cg, cancel: cancel, done: make(chan struct{}), assigned: make(chan struct{})}
	go func() {
		defer close(lg.done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{topic}, &markingHandler{lg: lg, stopAt: stopAt}); err != nil &&
				!errors.Is(err, sarama.ErrClosedConsumerGroup) && ctx.Err() == nil {
				t.Logf("consume: %v", err)
			}
		}
	}()
	t.Cleanup(lg.stop)
	select {
	case <-lg.assigned:
	case <-time.After(20 * time.Second):
		t.Fatal("the consumer group was never assigned partitions")
	}
	return lg
}

func (lg *liveGroup) stop() {
	lg.cancel()
	<-lg.done
	_ = lg.cg.Close()
}

// requestCounter counts the requests each broker receives, by API key.
type requestCounter struct {
	mu     sync.Mutex
	counts map[int32]map[int16]int
}

func countRequests(c *kfake.Cluster) *requestCounter {
	rc := &requestCounter{counts: map[int32]map[int16]int{}}
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		node := c.CurrentNode()
		rc.mu.Lock()
		if rc.counts[node] == nil {
			rc.counts[node] = map[int16]int{}
		}
		rc.counts[node][req.Key()]++
		rc.mu.Unlock()
		return nil, nil, false
	})
	return rc
}

func (rc *requestCounter) reset() {
	rc.mu.Lock()
	rc.counts = map[int32]map[int16]int{}
	rc.mu.Unlock()
}

// byKey returns, for one API key, the count per broker.
func (rc *requestCounter) byKey(key kmsg.Key) map[int32]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[int32]int{}
	for node, m := range rc.counts {
		if n := m[int16(key)]; n > 0 {
			out[node] = n
		}
	}
	return out
}

func (rc *requestCounter) total(key kmsg.Key) int {
	n := 0
	for _, v := range rc.byKey(key) {
		n += v
	}
	return n
}
