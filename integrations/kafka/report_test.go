package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := NewMemoryStore(0)
	key := SampleKey{Cluster: "main", Group: "g", Topic: "t"}
	if w, err := s.Window(ctx, key); w != nil || err != nil {
		t.Fatalf("empty window = %v, %v", w, err)
	}
	round := func(i int) []PartitionSample {
		return []PartitionSample{{Partition: 0, Committed: int64(i), UnixMilli: int64(i)}, {Partition: 1, Committed: int64(i), UnixMilli: int64(i)}}
	}
	for i := 0; i < MaxSamples; i++ {
		_ = s.Append(ctx, key, round(i))
	}
	early, _ := s.Window(ctx, key)
	for i := MaxSamples; i < MaxSamples+25; i++ {
		_ = s.Append(ctx, key, round(i))
	}
	w, _ := s.Window(ctx, key)
	if len(w) != 2*MaxSamples || w[0].Committed != 25 || w[len(w)-1].Committed != MaxSamples+24 {
		t.Errorf("window holds %d samples from %d to %d, want the newest %d rounds", len(w), w[0].Committed, w[len(w)-1].Committed, MaxSamples)
	}
	if len(early) != 2*MaxSamples || early[0].Committed != 0 || early[len(early)-1].Committed != MaxSamples-1 {
		t.Errorf("an earlier window changed under its holder")
	}
	if keys := s.Keys(); len(keys) != 1 || keys[0] != key || key.String() != "main/g/t" {
		t.Errorf("keys = %v", keys)
	}
}

// TestLagRequestsBatched counts what one `lag PIPELINE` sends on a
// 60-partition topic: one ListOffsets per leader, one OffsetFetch and one
// DescribeGroups to the coordinator, at most one Fetch per leader, nothing
// else once metadata and coordinator are cached.
func TestLagRequestsBatched(t *testing.T) {
	t.Parallel()
	kc := newKfake(t)
	rc := countRequests(kc)
	const topic, group = "batched", "batched-app"
	createTopic(t, kc, topic, 60)
	counts := make([]int, 60)
	commits := map[int32]int64{}
	for p := range counts {
		counts[p] = 3
		commits[int32(p)] = 1
	}
	produce(t, kc, topic, counts, nil)
	commitStandalone(t, kc, group, topic, commits)

	now := time.Now()
	store := NewMemoryStore(0)
	for i, c := range []int64{0, 1} { // commits moved: the group is not idle
		round := make([]PartitionSample, 60)
		for p := range round {
			round[p] = PartitionSample{Partition: int32(p), Committed: c, LogEnd: 3, UnixMilli: now.Add(time.Duration(i-2) * time.Minute).UnixMilli()}
		}
		_ = store.Append(context.Background(), SampleKey{Cluster: "main", Group: group, Topic: topic}, round)
	}
	m := newTestMonitor(t, testClusterOptions(kc, "main"), store, func() time.Time { return now },
		Pipeline{Name: "batched", Cluster: "main", Topics: []string{topic}, Group: group})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := m.PipelineLag(ctx, "batched"); err != nil {
		t.Fatal(err)
	}
	rc.reset()
	r, err := m.PipelineLag(ctx, "batched")
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Lag != 120 || r.Mismatch != nil || r.History != 2 {
		t.Fatalf("report: lag %d, mismatch %v, history %d", r.Totals.Lag, r.Mismatch, r.History)
	}
	coord := kc.CoordinatorFor(group)
	for key, want := range map[kmsg.Key]map[int32]int{
		kmsg.ListOffsets:     {0: 1, 1: 1, 2: 1},
		kmsg.OffsetFetch:     {coord: 1},
		kmsg.DescribeGroups:  {coord: 1},
		kmsg.Metadata:        {},
		kmsg.FindCoordinator: {},
		kmsg.ListGroups:      {},
	} {
		got := rc.byKey(key)
		if len(got) != len(want) {
			t.Errorf("%s per broker = %v, want %v", key.Name(), got, want)
			continue
		}
		for node, n := range want {
			if got[node] != n {
				t.Errorf("%s per broker = %v, want %v", key.Name(), got, want)
			}
		}
	}
	for node, n := range rc.byKey(kmsg.Fetch) {
		if n != 1 {
			t.Errorf("Fetch to broker %d: %d, want at most 1", node, n)
		}
	}
}

func TestUnavailableBrokerIsRetryable(t *testing.T) {
	t.Parallel()
	r := &LagReport{Unavailable: []Unavailable{{What: PartLogEnds, Partitions: []TopicPartition{{"client.replies.sms", 2}},
		Err: &BrokerError{Cluster: "main", Broker: Broker{ID: 2, Addr: "10.0.0.9:9092"}, Op: "ListOffsets", Waited: 1500 * time.Millisecond, Err: context.DeadlineExceeded}}}}
	var be *BrokerError
	if !errors.As(r.Unavailable[0].Err, &be) || !errors.Is(be, ErrUnreachable) || !Retryable(be) {
		t.Errorf("a broker that did not answer is unreachable and retryable")
	}
}
