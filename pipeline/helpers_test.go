package pipeline_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/testclock"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// parseConfig is a configuration with the pipeline sms-replies in channel C0PIPE, whose keys
// are pipelineYAML (indented by four spaces), followed by more top-level YAML.
func parseConfig(t *testing.T, pipelineYAML, more string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(fmt.Sprintf("slack: {default_channel: C0DEFAULT}\npipelines:\n  - name: sms-replies\n    channel: C0PIPE\n%s%s", pipelineYAML, more)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// newStore is a state store of its own on the test redis-server, with a clock the test sets.
func newStore(t *testing.T) (*state.Store, *testclock.Clock) {
	t.Helper()
	rdb, prefix := testredis.Client(t)
	st := state.New(rdb, prefix)
	c := testclock.New(time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC))
	st.SetClock(c.Now)
	if err := st.EnsureOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st, c
}

// brokers answers Offsets with the log ends and commits it holds, or with err.
type brokers struct {
	mu     sync.Mutex
	logEnd map[int32]int64
	commit map[int32]int64
	err    error
	asked  []string // cluster/group of every call
}

func (b *brokers) Offsets(_ context.Context, cluster, group string, topics ...string) (*kafka.Offsets, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, cluster+"/"+group)
	if b.err != nil {
		return nil, b.err
	}
	off := &kafka.Offsets{Group: kafka.GroupInfo{Name: group}}
	for p := range int32(len(b.logEnd)) {
		pl := kafka.PartitionLag{Topic: topics[0], Partition: p, LogEnd: b.logEnd[p], Committed: kafka.NoOffset, Lag: -1}
		if c, ok := b.commit[p]; ok {
			pl.Committed, pl.Lag = c, b.logEnd[p]-c
		}
		off.Partitions = append(off.Partitions, pl)
	}
	return off, nil
}

func (b *brokers) set(logEnd, commit map[int32]int64) {
	b.mu.Lock()
	b.logEnd, b.commit = logEnd, commit
	b.mu.Unlock()
}

// startKafka runs an in-process Kafka (kfake, the real wire protocol) with topic holding
// partitions partitions, and returns it with sarama-backed Clusters naming it "main" and the
// configuration lines of that cluster.
func startKafka(t *testing.T, topic string, partitions int32) (*kafkatest.Cluster, *kafka.Clusters, string) {
	t.Helper()
	kc, err := kafkatest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	if err := kc.CreateTopic(context.Background(), topic, partitions); err != nil {
		t.Fatal(err)
	}
	cs, err := kafka.NewClusters([]kafka.ClusterOptions{{Name: "main", Brokers: kc.ListenAddrs(), Version: "3.6.0", Timeout: 5 * time.Second}}, kafka.ClustersOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return kc, cs, fmt.Sprintf("kafka:\n  clusters:\n    main: {brokers: [%q], version: \"3.6.0\"}\n", kc.ListenAddrs()[0])
}

// closedAddr is a loopback address nothing listens on: a listener the test opened and closed.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
