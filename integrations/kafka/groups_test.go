package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/testclock"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestWrongGroup: the documented group sits idle (standalone commits from
// long ago, no member) while Spark's generated group consumes the topic.
// `lag PIPELINE` must name the Spark group and its lag, and `groups TOPIC`
// must list every group, with OffsetFetch batched per coordinator on Kafka
// ≥ 3.0 and one per group before.
func TestWrongGroup(t *testing.T) {
	t.Parallel()
	kc := newKfake(t)
	rc := countRequests(kc)
	const (
		topic      = "client.replies.sms"
		documented = "sms-replies-prod"
		spark      = "spark-kafka-source-3f2a9c-1164-driver-0"
		old        = "old-batch-job"
	)
	createTopic(t, kc, topic, 4)
	produce(t, kc, topic, []int{50, 50, 50, 50}, nil)
	commitStandalone(t, kc, documented, topic, map[int32]int64{0: 10, 1: 10, 2: 10, 3: 10})
	commitStandalone(t, kc, old, topic, map[int32]int64{0: 5, 1: 5})
	startGroup(t, kc, spark, "spark-driver", topic, map[int32]int64{0: 40, 1: 40, 2: 40, 3: 40})

	pipeline := Pipeline{Name: "sms-replies", Cluster: "main", Topics: []string{topic}, Group: documented, StallAfter: 5 * time.Minute}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := newTestMonitor(t, testClusterOptions(kc, "main"), NewMemoryStore(0), func() time.Time { return now }, pipeline)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	wait.For(t, 15*time.Second, "the spark group's commits", func() bool {
		off, err := m.clusters.byName["main"].Offsets(ctx, spark, topic)
		if err != nil {
			return false
		}
		for _, p := range off.Partitions {
			if p.Committed != 40 {
				return false
			}
		}
		return true
	})

	r, err := m.PipelineLag(ctx, "sms-replies")
	if err != nil {
		t.Fatal(err)
	}
	if r.Totals.Lag != 160 || r.Group.State != "Empty" || !r.GroupExists {
		t.Fatalf("documented group: lag %d state %s exists %v, want 160 Empty true", r.Totals.Lag, r.Group.State, r.GroupExists)
	}
	mm := r.Mismatch
	if mm == nil {
		t.Fatalf("no mismatch reported: %+v", r)
	}
	if mm.Reason != "empty" || len(mm.Active) != 1 || mm.Active[0].Group.Name != spark {
		t.Fatalf("mismatch = %+v, want the spark group as the only active one", mm)
	}
	// The finding is data (commands words it: TestMismatchEvidence): empty, with no stored
	// samples to show the commits moving, while the spark group's member consumes.
	if a := mm.Active[0]; mm.Documented != documented || mm.Watched || a.Topic != topic || a.Members != 1 ||
		!a.LagKnown || a.Lag != 40 || a.ActiveBy != ActiveMembers {
		t.Errorf("mismatch = %+v, active %+v: want empty, not watched, the spark group's 1 member with lag 40", mm, a)
	}

	coordinators := map[int32]bool{}
	for _, g := range []string{documented, spark, old} {
		coordinators[kc.CoordinatorFor(g)] = true
	}
	for _, tc := range []struct {
		version      string
		offsetFetch  int
		batchedLabel string
	}{
		{"3.6.0", len(coordinators), "one OffsetFetch per coordinator"},
		{"2.8.0", 3, "one OffsetFetch per group"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			opts := testClusterOptions(kc, "main")
			opts.Version = tc.version
			m := newTestMonitor(t, opts, nil, func() time.Time { return now }, pipeline)
			if _, err := m.TopicGroups(ctx, "", topic); err != nil { // loads metadata
				t.Fatal(err)
			}
			rc.reset()
			gr, err := m.TopicGroups(ctx, "", topic)
			if err != nil {
				t.Fatal(err)
			}
			if got := rc.total(kmsg.OffsetFetch); got != tc.offsetFetch {
				t.Errorf("OffsetFetch requests = %d, want %d (%s)", got, tc.offsetFetch, tc.batchedLabel)
			}
			if got := rc.byKey(kmsg.ListGroups); len(got) != 3 || got[0] != 1 || got[1] != 1 || got[2] != 1 {
				t.Errorf("ListGroups per broker = %v, want 1 on each of 3", got)
			}
			if len(gr.Groups) != 3 {
				t.Fatalf("groups = %d, want 3: %+v", len(gr.Groups), gr.Groups)
			}
			g := gr.Groups[0]
			if g.Group.Name != spark || !g.Active || !g.Spark || g.Group.State != "Stable" || g.Members != 1 || g.Assigned != 4 ||
				g.Committed != 4 || g.Lag != 40 || !g.LagKnown {
				t.Errorf("first group = %+v, want the active spark group", g)
			}
			byName := map[string]TopicGroup{}
			for _, g := range gr.Groups {
				byName[g.Group.Name] = g
			}
			if d := byName[documented]; d.Active || d.Group.State != "Empty" || d.Lag != r.Totals.Lag || d.Committed != 4 {
				t.Errorf("documented group = %+v, want lag %d as lag PIPELINE sums it", d, r.Totals.Lag)
			}
			if o := byName[old]; o.Active || o.Committed != 2 || o.Lag != 90 {
				t.Errorf("old group = %+v", o)
			}
			if gr.Topic != "client.replies.sms" || gr.Cluster != "main" || gr.Partitions != 4 || gr.LogEndSum != 200 ||
				g.ActiveBy != ActiveMembers {
				t.Errorf("groups report %s/%s: %d partitions, log end total %d; first group active by %q",
					gr.Cluster, gr.Topic, gr.Partitions, gr.LogEndSum, g.ActiveBy)
			}
		})
	}
}

// TestSamplerFindsMovingGroup: no member anywhere; the documented group's
// commits stand still while another group commits standalone and moves.
// The sampler notices the idle documented group, samples the others, and
// the next `lag PIPELINE` names the moving one.
func TestSamplerFindsMovingGroup(t *testing.T) {
	t.Parallel()
	kc := sharedKfake(t)
	topic, documented, other := uniqueName("payments"), uniqueName("payments-prod"), uniqueName("payments-etl")
	createTopic(t, kc, topic, 2)
	produce(t, kc, topic, []int{100, 100}, nil)
	commitStandalone(t, kc, documented, topic, map[int32]int64{0: 10, 1: 10})
	commitStandalone(t, kc, other, topic, map[int32]int64{0: 20, 1: 20})

	clk := testclock.New(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	store := NewMemoryStore(3)
	pipeline := Pipeline{Name: "payments", Cluster: "main", Topics: []string{topic}, Group: documented}
	m := newTestMonitor(t, testClusterOptions(kc, "main"), store, clk.Now, pipeline)
	s, err := NewSampler(m, SamplerOptions{Interval: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()

	for round := 1; round <= 4; round++ {
		produce(t, kc, topic, []int{10, 10}, nil)
		commitStandalone(t, kc, other, topic, map[int32]int64{0: int64(20 + 10*round), 1: int64(20 + 10*round)})
		if err := s.SampleOnce(ctx); err != nil {
			t.Fatal(err)
		}
		clk.Add(30 * time.Second)
	}
	w, err := store.Window(ctx, SampleKey{Cluster: "main", Group: documented, Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != 6 { // 3 rounds kept × 2 partitions
		t.Fatalf("stored samples = %d, want 6 (the store keeps 3 rounds)", len(w))
	}
	if w[0].Committed != 10 || w[0].LogEnd != 120 || w[5].LogEnd != 140 || w[5].Owned {
		t.Errorf("window = %+v", w)
	}
	if keys := store.Keys(); len(keys) != 2 {
		t.Errorf("stored series = %v, want the documented and the other group", keys)
	}

	r, err := m.PipelineLag(ctx, "payments")
	if err != nil {
		t.Fatal(err)
	}
	if r.History != 3 {
		t.Errorf("history = %d rounds, want 3", r.History)
	}
	if r.Mismatch == nil || len(r.Mismatch.Active) != 1 || r.Mismatch.Active[0].Group.Name != other {
		t.Fatalf("mismatch = %+v, want %s named", r.Mismatch, other)
	}
	mv := r.Mismatch.Active[0].Movement
	if mv == nil || mv.Advanced != 40 || mv.Samples != 4 { // 3 stored rounds and this answer
		t.Errorf("movement = %+v, want +40 over 4 rounds", mv)
	}
	if a := r.Mismatch.Active[0]; r.Mismatch.Reason != IdleEmpty || !r.Mismatch.Watched || r.Mismatch.Unchanged != 90*time.Second ||
		a.Topic != topic || a.ActiveBy != ActiveCommits || !a.LagKnown || a.Lag != 160 || a.Movement.Span != 90*time.Second {
		t.Errorf("mismatch = %+v, active %+v: want empty with commits unchanged over 1m30s while %s's advanced +40 in 1m30s, lag 160",
			r.Mismatch, a, other)
	}
}
