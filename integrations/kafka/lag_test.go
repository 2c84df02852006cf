package kafka

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/internal/wait"
)

func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) != "" {
		serveBenchCluster()
		return
	}
	code := m.Run()
	if sharedC != nil {
		sharedC.Close()
	}
	if benchStop != nil {
		benchStop()
	}
	os.Exit(code)
}

// TestGroupLagExact produces 10/20/…/60 records to p0…p5, lets a real
// sarama consumer group consume and commit them, produces 1…6 more that
// the group leaves alone, and checks every number of the report, with the
// group live and then closed (Empty).
func TestGroupLagExact(t *testing.T) {
	t.Parallel()
	kc := sharedKfake(t)
	topic, group := uniqueName("events"), uniqueName("lag-group")
	createTopic(t, kc, topic, 6)

	// The records the group will not consume carry a known timestamp, so
	// the age of the oldest unconsumed record is exact.
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	oldest := now.Add(-17 * time.Minute)
	first := []int{10, 20, 30, 40, 50, 60}
	produce(t, kc, topic, first, func(p, i int) time.Time { return oldest.Add(-time.Hour) })
	stopAt := map[int32]int64{}
	for p, n := range first {
		stopAt[int32(p)] = int64(n)
	}
	lg := startGroup(t, kc, group, "lag-consumer", topic, stopAt)

	m := newTestMonitor(t, testClusterOptions(kc, "main"), NewMemoryStore(0), func() time.Time { return now })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wait.For(t, 15*time.Second, "the group's commits", func() bool {
		off, err := m.clusters.byName["main"].Offsets(ctx, group, topic)
		if err != nil {
			return false
		}
		for _, p := range off.Partitions {
			if p.Committed != stopAt[p.Partition] {
				return false
			}
		}
		return true
	})
	produce(t, kc, topic, []int{1, 2, 3, 4, 5, 6}, func(p, i int) time.Time {
		return oldest.Add(time.Duration(p)*time.Second + time.Duration(i)*time.Minute)
	})

	check := func(t *testing.T, r *LagReport) {
		t.Helper()
		if len(r.Partitions) != 6 {
			t.Fatalf("partitions = %d, want 6", len(r.Partitions))
		}
		for i, p := range r.Partitions {
			wantEnd, wantCommit := int64(first[i]+i+1), int64(first[i])
			if p.Partition != int32(i) || p.LogEnd != wantEnd || p.Committed != wantCommit || p.Lag != int64(i+1) {
				t.Errorf("p%d: end %d committed %d lag %d, want %d %d %d", p.Partition, p.LogEnd, p.Committed, p.Lag,
					wantEnd, wantCommit, i+1)
			}
		}
		if r.Totals.Lag != 21 || r.Totals.Partitions != 6 || r.Totals.NoCommit != 0 || r.Totals.Unknown != 0 {
			t.Errorf("totals = %+v, want lag 21 over 6 partitions", r.Totals)
		}
		// The five most-lagging partitions (p5…p1) get the exact age of
		// the record at their committed offset; p0 is not fetched.
		for _, p := range r.Partitions[1:] {
			want := 17*time.Minute - time.Duration(p.Partition)*time.Second
			if p.AgeSource != AgeRecord || p.Age != want {
				t.Errorf("p%d: age %v (source %d), want exactly %v from the record", p.Partition, p.Age, p.AgeSource, want)
			}
		}
		if r.Partitions[0].AgeSource == AgeRecord {
			t.Errorf("p0 got a fetched age; only the 5 most-lagging partitions should")
		}
		if len(r.Unavailable) != 0 {
			t.Errorf("unavailable: %+v", r.Unavailable)
		}
	}

	t.Run("live", func(t *testing.T) {
		r, err := m.GroupLag(ctx, "", group, topic)
		if err != nil {
			t.Fatal(err)
		}
		check(t, r)
		g := r.Group
		if g.State != "Stable" || g.ProtocolType != "consumer" || len(g.Members) != 1 {
			t.Fatalf("group = %s/%s with %d members, want Stable/consumer with 1", g.State, g.ProtocolType, len(g.Members))
		}
		mb := g.Members[0]
		if mb.ClientID != "lag-consumer" || mb.Host == "" || len(mb.Assigned[topic]) != 6 {
			t.Errorf("member = %+v, want lag-consumer holding 6 partitions", mb)
		}
		for _, p := range r.Partitions {
			if p.Member != "lag-consumer" {
				t.Errorf("p%d member = %q", p.Partition, p.Member)
			}
		}
		if r.Mismatch != nil {
			t.Errorf("unexpected mismatch: %+v", r.Mismatch)
		}
		if tt := r.Totals; tt.Partitions != 6 || tt.Lag != 21 || tt.MaxAgeAt.Partition != 1 || human.Age(tt.MaxAge) != "16m" {
			t.Errorf("totals = %+v, want 6 partitions, lag 21, the oldest unconsumed record 16m old on p1", tt)
		}
	})

	t.Run("empty", func(t *testing.T) {
		lg.stop()
		wait.For(t, 10*time.Second, "the group to empty", func() bool {
			r, err := m.GroupLag(ctx, "", group, topic)
			return err == nil && r.Group.State == "Empty"
		})
		r, err := m.GroupLag(ctx, "", group, topic)
		if err != nil {
			t.Fatal(err)
		}
		check(t, r) // commits of an Empty group are fetched too
		if len(r.Group.Members) != 0 || !r.GroupExists {
			t.Errorf("group = %+v, want Empty, existing, without members", r.Group)
		}
	})
}

func TestGroupLagUnknownGroupAndTopic(t *testing.T) {
	t.Parallel()
	kc := sharedKfake(t)
	topic := uniqueName("orders")
	createTopic(t, kc, topic, 3)
	produce(t, kc, topic, []int{2, 0, 1}, nil)
	m := newTestMonitor(t, testClusterOptions(kc, "main"), nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	r, err := m.GroupLag(ctx, "", "nobody-home", topic)
	if !errors.Is(err, ErrUnknownGroup) {
		t.Fatalf("err = %v, want ErrUnknownGroup", err)
	}
	if Retryable(err) {
		t.Errorf("an unknown group is not retryable")
	}
	if r == nil || r.GroupExists || r.Group.State != "Dead" {
		t.Fatalf("report = %+v, want the report of a missing (Dead) group", r)
	}
	for i, p := range r.Partitions {
		if p.Committed != NoOffset || p.Lag != -1 || p.LogEnd != []int64{2, 0, 1}[i] || p.Status != StatusNoCommits {
			t.Errorf("p%d = %+v, want log end known and no commit", p.Partition, p)
		}
	}
	if !strings.Contains(err.Error(), `consumer group "nobody-home" does not exist on cluster main`) {
		t.Errorf("error = %q", err)
	}

	_, err = m.GroupLag(ctx, "", "nobody-home", "no-such-topic")
	if !errors.Is(err, ErrUnknownTopic) || !strings.Contains(err.Error(), `"no-such-topic"`) {
		t.Fatalf("err = %v, want ErrUnknownTopic naming the topic", err)
	}
	if _, err := m.GroupLag(ctx, "elsewhere", "g", topic); !errors.Is(err, ErrUnknownCluster) {
		t.Fatalf("err = %v, want ErrUnknownCluster", err)
	}
	if _, err := m.PipelineLag(ctx, "nope"); !errors.Is(err, ErrUnknownPipeline) {
		t.Fatalf("err = %v, want ErrUnknownPipeline", err)
	}
}
