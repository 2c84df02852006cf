package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// topicEnds is one topic's partitions and log ends.
type topicEnds struct {
	refs   []partitionRef
	logEnd []int64 // aligned with refs
}

// topicGroupsSnapshot is every group with commits on, or members on, one
// topic, with the topic's log ends.
type topicGroupsSnapshot struct {
	at          time.Time
	topic       string
	refs        []partitionRef
	logEnd      []int64
	groups      map[string]GroupInfo
	commits     map[string]map[int32]int64 // group → partition → offset, this topic only
	unavailable []Unavailable
}

// sparkGroup recognises the group IDs Spark generates for Kafka sources.
func sparkGroup(name string) bool {
	return strings.HasPrefix(name, "spark-kafka-source-") || strings.HasPrefix(name, "spark-kafka-relation-")
}

// topicGroups finds the groups on topic: ListGroups on every broker (each
// lists the groups it coordinates), then per coordinator one DescribeGroups
// and one OffsetFetch for all its groups (OffsetFetch v8, Kafka ≥ 3.0; one
// per group before that), and one ListOffsets per leader for the log ends.
//
// known, if not nil, holds the topic's log ends fetched a moment ago (by
// the lag report that asks): they are used rather than fetched again.
func (c *Cluster) topicGroups(ctx context.Context, topic string, known *topicEnds) (*topicGroupsSnapshot, error) {
	cl, err := c.saramaClient()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	type endsAnswer struct {
		unavailable []Unavailable
		answered    int
	}
	endsCh := make(chan endsAnswer, 1)
	s := &topicGroupsSnapshot{at: time.Now(), topic: topic, groups: map[string]GroupInfo{}, commits: map[string]map[int32]int64{}}
	if known != nil {
		s.refs, s.logEnd = known.refs, known.logEnd
		endsCh <- endsAnswer{answered: 1}
	} else {
		refs, err := c.topicLeaders(ctx, cl, []string{topic})
		if err != nil {
			return nil, err
		}
		s.refs, s.logEnd = refs, make([]int64, len(refs))
		want := make([]int, len(refs))
		for i := range refs {
			want[i] = i
			s.logEnd[i] = UnknownOffset
		}
		go func() {
			u, n := c.logEnds(ctx, cl, refs, want, s.logEnd)
			endsCh <- endsAnswer{u, n}
		}()
	}

	answered := 0
	// A broker that does not answer ListGroups must leave time to describe
	// the groups the others listed.
	listCtx, cancel := budget(ctx, 0.5)
	byCoord, unavailable, n := c.listGroups(listCtx, cl)
	cancel()
	s.unavailable = append(s.unavailable, unavailable...)
	answered += n
	unavailable, n = c.describeAndFetch(ctx, byCoord, topic, s)
	s.unavailable = append(s.unavailable, unavailable...)
	answered += n

	ea := <-endsCh
	s.unavailable = append(s.unavailable, ea.unavailable...)
	answered += ea.answered
	if answered == 0 && len(s.unavailable) > 0 {
		return nil, c.clusterError(firstErr(s.unavailable), time.Since(started))
	}
	return s, nil
}

// listGroups asks every known broker for the groups it coordinates.
func (c *Cluster) listGroups(ctx context.Context, cl sarama.Client) (map[*sarama.Broker][]string, []Unavailable, int) {
	brokers := cl.Brokers()
	calls := make([]*call, len(brokers))
	lists := make([][]string, len(brokers))
	for i, b := range brokers {
		c.openBroker(b)
		calls[i] = &call{broker: b, op: "ListGroups", run: func() error {
			resp, err := b.ListGroups(c.listGroupsRequest())
			if err != nil {
				return err
			}
			if !errors.Is(resp.Err, sarama.ErrNoError) {
				return resp.Err
			}
			names := make([]string, 0, len(resp.Groups))
			for g := range resp.Groups {
				names = append(names, g)
			}
			sort.Strings(names)
			lists[i] = names
			return nil
		}}
	}
	finished := runCalls(ctx, calls)
	out := map[*sarama.Broker][]string{}
	var unavailable []Unavailable
	answered := 0
	for i, cl := range calls {
		if err := c.callErr(ctx, cl, finished[i]); err != nil {
			unavailable = append(unavailable, Unavailable{What: PartCoordinated, Of: brokerOf(cl.broker).String(), Err: err})
			continue
		}
		answered++
		if len(lists[i]) > 0 {
			out[brokers[i]] = lists[i]
		}
	}
	return out, unavailable, answered
}

// describeAndFetch describes the groups of each coordinator and fetches their commits on
// topic (fetchGroupStates: one DescribeGroups and one OffsetFetch per coordinator), keeping the
// groups that are on the topic.
func (c *Cluster) describeAndFetch(ctx context.Context, byCoord map[*sarama.Broker][]string, topic string, s *topicGroupsSnapshot) ([]Unavailable, int) {
	gs := c.fetchGroupStates(ctx, byCoord, map[string]bool{topic: true})
	unavailable := gs.unavailable
	if len(gs.moved) > 0 {
		unavailable = append(unavailable, Unavailable{What: PartGroupStates,
			Err: fmt.Errorf("cluster %s: the coordinator of %s moved during the call", c.opts.Name, strings.Join(gs.moved, ", "))})
	}
	for g, info := range gs.infos {
		s.groups[g] = info
	}
	for g, cm := range gs.commits {
		if len(cm[topic]) > 0 {
			s.commits[g] = cm[topic]
		}
	}
	// Keep only the groups on the topic.
	for g, info := range s.groups {
		if len(s.commits[g]) == 0 && info.membersOn(topic) == 0 {
			delete(s.groups, g)
		}
	}
	for g := range s.commits {
		if _, ok := s.groups[g]; !ok {
			s.groups[g] = GroupInfo{Name: g}
		}
	}
	return unavailable, gs.answered
}

// TopicGroups answers `groups TOPIC`: every group with commits on the topic
// or members assigned to it, with state, members, lag and how its commits
// moved over the stored samples.
func (m *Monitor) TopicGroups(ctx context.Context, cluster, topic string) (*GroupsReport, error) {
	if topic == "" {
		return nil, errors.New("groups needs a topic")
	}
	c, err := m.ResolveCluster(cluster, topic)
	if err != nil {
		return nil, err
	}
	return m.topicGroups(ctx, c, topic, nil)
}

func (m *Monitor) topicGroups(ctx context.Context, c *Cluster, topic string, known *topicEnds) (*GroupsReport, error) {
	started := time.Now()
	ctx, cancelAll := withDeadline(ctx, c)
	defer cancelAll()
	snapCtx, cancel := budget(ctx, 0.8)
	s, err := c.topicGroups(snapCtx, topic, known)
	cancel()
	if err != nil {
		return nil, err
	}
	now := m.now()
	r := &GroupsReport{Cluster: c.Name(), Topic: topic, At: now, Partitions: len(s.refs), Unavailable: s.unavailable}
	ends := map[int32]int64{}
	for i, ref := range s.refs {
		if s.logEnd[i] >= 0 {
			ends[ref.partition] = s.logEnd[i]
			r.LogEndSum += s.logEnd[i]
		}
	}
	for name, info := range s.groups {
		tg := TopicGroup{Group: info, Topic: topic, Members: info.membersOn(topic), Spark: sparkGroup(name)}
		for _, mb := range info.Members {
			tg.Assigned += len(mb.Assigned[topic])
		}
		cm := s.commits[name]
		tg.Committed = len(cm)
		var live []PartitionSample
		for p, off := range cm {
			if end, ok := ends[p]; ok {
				live = append(live, PartitionSample{Partition: p, Committed: off, LogEnd: end, UnixMilli: now.UnixMilli()})
			}
		}
		lag, known := SumLag(live)
		tg.Lag, tg.LagKnown = lag, known > 0
		if m.store != nil && len(cm) > 0 {
			if w, err := m.store.Window(ctx, SampleKey{Cluster: c.Name(), Group: name, Topic: topic}); err == nil {
				tg.Movement = movement(w, live, now)
			}
		}
		switch {
		case tg.Members > 0 && info.State != "Empty" && info.State != "Dead":
			tg.Active, tg.ActiveBy = true, ActiveMembers
		case tg.Movement != nil && tg.Movement.Advanced > 0:
			tg.Active, tg.ActiveBy = true, ActiveCommits
		}
		r.Groups = append(r.Groups, tg)
	}
	sort.Slice(r.Groups, func(a, b int) bool {
		ga, gb := r.Groups[a], r.Groups[b]
		if ga.Active != gb.Active {
			return ga.Active
		}
		if ga.Lag != gb.Lag {
			return ga.Lag > gb.Lag
		}
		return ga.Group.Name < gb.Group.Name
	})
	r.Elapsed = time.Since(started)
	return r, nil
}
