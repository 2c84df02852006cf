package kafka

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/testclock"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// roundFixture is n pipelines on one 3-broker cluster, each with its own topic of 4
// partitions holding 10 records each and its own group committed at commitOf(i) on every
// partition.
func roundFixture(t *testing.T, kc *kfake.Cluster, n int) []Pipeline {
	t.Helper()
	var ps []Pipeline
	for i := range n {
		topic, group := uniqueName(fmt.Sprintf("round-t%d", i)), uniqueName(fmt.Sprintf("round-g%d", i))
		createTopic(t, kc, topic, 4)
		produce(t, kc, topic, []int{10, 10, 10, 10}, nil)
		at := commitOf(i)
		commitStandalone(t, kc, group, topic, map[int32]int64{0: at, 1: at, 2: at, 3: at})
		ps = append(ps, Pipeline{Name: fmt.Sprintf("p%02d", i), Cluster: "main", Topics: []string{topic}, Group: group, AllowedLag: 1})
	}
	return ps
}

func commitOf(i int) int64 { return int64(1 + i%9) }

// TestRoundRequestsGrowWithBrokers: a round of 30 pipelines asks each broker for the log ends
// once, and each coordinator once for the state and once for the commits of all its groups;
// the numbers of every pipeline are exact.
func TestRoundRequestsGrowWithBrokers(t *testing.T) {
	t.Parallel()
	kc := newKfake(t)
	ps := roundFixture(t, kc, 30)
	clk := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	store := NewMemoryStore(0)
	m := newTestMonitor(t, testClusterOptions(kc, "main"), store, clk.Now, ps...)
	s, err := NewSampler(m, SamplerOptions{Interval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rc := countRequests(kc)
	first, err := s.Round(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first round finds 30 coordinators, and every documented group looks idle (no
	// member, no earlier round): the other groups of their topics are sampled once for all.
	if n := rc.total(kmsg.ListGroups); n != 3 {
		t.Errorf("first round: %d ListGroups, want one per broker (3)", n)
	}
	if n := rc.total(kmsg.FindCoordinator); n > 30 {
		t.Errorf("first round: %d FindCoordinator, want at most one per group", n)
	}
	for i, p := range first.Pipelines {
		if p.Pipeline != ps[i].Name || p.Err != nil || len(p.Partitions) != 4 {
			t.Fatalf("pipeline %d: %+v", i, p)
		}
		for _, pl := range p.Partitions {
			if pl.LogEnd != 10 || pl.Committed != commitOf(i) || pl.Lag != 10-commitOf(i) {
				t.Fatalf("%s %s/%d: log end %d, committed %d, lag %d; want 10, %d, %d", p.Pipeline, pl.Topic, pl.Partition,
					pl.LogEnd, pl.Committed, pl.Lag, commitOf(i), 10-commitOf(i))
			}
		}
	}

	clk.Add(30 * time.Second)
	rc.reset()
	if _, err := s.Round(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []kmsg.Key{kmsg.ListOffsets, kmsg.DescribeGroups, kmsg.OffsetFetch} {
		for node, n := range rc.byKey(k) {
			if n != 1 {
				t.Errorf("second round: broker %d got %d %s, want 1", node, n, k.Name())
			}
		}
	}
	total := 0
	for _, k := range []kmsg.Key{kmsg.ListOffsets, kmsg.DescribeGroups, kmsg.OffsetFetch, kmsg.FindCoordinator, kmsg.Metadata, kmsg.ListGroups, kmsg.Fetch} {
		total += rc.total(k)
	}
	if total > 9 {
		t.Errorf("second round of 30 pipelines: %d requests, want at most 9 (3 per broker)", total)
	}
	w, _ := store.Window(ctx, SampleKey{Cluster: "main", Group: ps[3].Group, Topic: ps[3].Topics[0]})
	if len(w) != 8 { // two rounds × 4 partitions
		t.Errorf("stored samples of %s: %d, want 8", ps[3].Name, len(w))
	}
}

// TestRoundOlderBroker: a broker older than Kafka 3.0 (OffsetFetch v7 at most) although the
// configured version is 3.6.0: sarama lowers the multi-group request, the round notices and
// asks group by group, with exact commits; later rounds ask group by group at once.
func TestRoundOlderBroker(t *testing.T) {
	t.Parallel()
	kc := newKfake(t, kfake.MaxVersions(kversion.V2_8_0()))
	ps := roundFixture(t, kc, 6)
	m := newTestMonitor(t, testClusterOptions(kc, "main"), NewMemoryStore(0), nil, ps...)
	s, err := NewSampler(m, SamplerOptions{Interval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rc := countRequests(kc)
	for round := 1; round <= 2; round++ {
		rc.reset()
		r, err := s.Round(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range r.Pipelines {
			for _, pl := range p.Partitions {
				if pl.Committed != commitOf(i) {
					t.Fatalf("round %d, %s p%d: committed %d, want %d", round, p.Pipeline, pl.Partition, pl.Committed, commitOf(i))
				}
			}
		}
		if round == 2 {
			// One OffsetFetch per group, no wasted multi-group attempt.
			if n := rc.total(kmsg.OffsetFetch); n != len(ps) {
				t.Errorf("second round: %d OffsetFetch, want %d (one per group)", n, len(ps))
			}
		}
	}
}

// TestRoundVerdict: the round's verdict is the evaluator's over the stored rounds: a group
// with no member whose commits stand while records wait is STOPPED after stall_after.
func TestRoundVerdict(t *testing.T) {
	t.Parallel()
	kc := sharedKfake(t)
	topic, group := uniqueName("verdict"), uniqueName("verdict-g")
	createTopic(t, kc, topic, 2)
	produce(t, kc, topic, []int{50, 50}, nil)
	commitStandalone(t, kc, group, topic, map[int32]int64{0: 10, 1: 10})
	clk := testclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	p := Pipeline{Name: "verdict", Cluster: "main", Topics: []string{topic}, Group: group, StallAfter: time.Minute, AllowedLag: 1}
	m := newTestMonitor(t, testClusterOptions(kc, "main"), NewMemoryStore(0), clk.Now, p)
	s, err := NewSampler(m, SamplerOptions{Interval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var r *Round
	for range 4 {
		if r, err = s.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
		clk.Add(30 * time.Second)
	}
	pr, _ := r.Pipeline("verdict")
	if pr.Status != StatusStopped || pr.Summary.Worst.Evidence.Rule != RuleStopped {
		t.Fatalf("status %s (%+v), want STOPPED", pr.Status, pr.Summary)
	}
}

// TestCommitOffsetsStandalone: a standalone commit lands exactly; a group with a live member
// refuses it (Kafka's own rule), and so does a group the cluster's ACLs close to streamwatch.
func TestCommitOffsetsStandalone(t *testing.T) {
	t.Parallel()
	kc := sharedKfake(t)
	topic, group, live := uniqueName("publish"), uniqueName("publish-g"), uniqueName("publish-live")
	createTopic(t, kc, topic, 3)
	produce(t, kc, topic, []int{20, 20, 20}, nil)
	cs, err := NewClusters([]ClusterOptions{testClusterOptions(kc, "main")}, ClustersOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	want := map[TopicPartition]int64{{topic, 0}: 7, {topic, 1}: 11, {topic, 2}: 20}
	if err := cs.CommitOffsets(ctx, "main", group, want, "streamwatch: batch 4"); err != nil {
		t.Fatal(err)
	}
	if got := committedOf(t, kc, group, topic); fmt.Sprint(got) != fmt.Sprint(map[int32]int64{0: 7, 1: 11, 2: 20}) {
		t.Fatalf("committed %v", got)
	}

	lg := startGroup(t, kc, live, "spark-executor", topic, map[int32]int64{})
	err = cs.CommitOffsets(ctx, "main", live, want, "streamwatch")
	var refused *CommitRefusedError
	if !errors.As(err, &refused) || refused.Refusal != RefusedLiveMembers || refused.Group != live {
		t.Fatalf("commit to a group with a live member: %v, want a refusal for live members", err)
	}
	lg.stop()
}

func committedOf(t *testing.T, kc *kfake.Cluster, group, topic string) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	for _, o := range os[topic] {
		out[o.Partition] = o.At
	}
	return out
}

// TestCommitOffsetsACL: the cluster's ACLs let streamwatch read and describe, not commit to the
// publish group: the refusal says so.
func TestCommitOffsetsACL(t *testing.T) {
	t.Parallel()
	allow := func(res kmsg.ACLResourceType, name string, op kmsg.ACLOperation) kfake.ACL {
		return kfake.ACL{Resource: res, Name: name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true}
	}
	kc := newKfake(t, kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser(SASLPlain, "admin", "admin-pw"),
		kfake.SeedTopics(2, "acl-topic"),
		kfake.User(SASLPlain, "streamwatch", "sw-pw",
			allow(kmsg.ACLResourceTypeTopic, "acl-topic", kmsg.ACLOperationDescribe),
			allow(kmsg.ACLResourceTypeTopic, "acl-topic", kmsg.ACLOperationRead),
			allow(kmsg.ACLResourceTypeGroup, "spark-lag", kmsg.ACLOperationDescribe)))
	opts := testClusterOptions(kc, "main")
	opts.SASL = SASLOptions{Mechanism: SASLPlain, Username: "streamwatch", PasswordEnv: "SW_PW"}
	cs, err := NewClusters([]ClusterOptions{opts}, ClustersOptions{Getenv: func(string) string { return "sw-pw" }})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = cs.CommitOffsets(ctx, "main", "spark-lag", map[TopicPartition]int64{{"acl-topic", 0}: 0}, "streamwatch")
	var refused *CommitRefusedError
	if !errors.As(err, &refused) || refused.Refusal != RefusedNotAuthorized {
		t.Fatalf("commit without the READ ACL on the group: %v, want a refusal for authorization", err)
	}
}
