package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// groupSnapshot is one group's offsets on some topics, fetched together.
type groupSnapshot struct {
	at          time.Time
	refs        []partitionRef
	logEnd      []int64 // aligned with refs
	committed   []int64 // aligned with refs
	group       GroupInfo
	groupKnown  bool // DescribeGroups answered
	unavailable []Unavailable
}

// snapshot fetches log ends, commits and the group's description: one
// ListOffsets per leader, and one OffsetFetch and one DescribeGroups to the
// coordinator, in parallel. A broker that does not answer costs only its
// part of the answer; when nothing at all answers, the error is a
// *ClusterError.
func (c *Cluster) snapshot(ctx context.Context, group string, topics []string) (*groupSnapshot, error) {
	cl, err := c.saramaClient()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	refs, err := c.topicLeaders(ctx, cl, topics)
	if err != nil {
		return nil, err
	}
	s := &groupSnapshot{at: time.Now(), refs: refs, logEnd: make([]int64, len(refs)), committed: make([]int64, len(refs))}
	want := make([]int, len(refs))
	for i := range refs {
		want[i] = i
		s.logEnd[i] = UnknownOffset
		s.committed[i] = UnknownOffset
	}
	topicParts := map[string][]int32{}
	for _, r := range refs {
		topicParts[r.topic] = append(topicParts[r.topic], r.partition)
	}

	groupCh := make(chan groupAnswer, 1)
	go func() { groupCh <- c.groupState(ctx, cl, group, topicParts) }()
	unavailable, answered := c.logEnds(ctx, cl, refs, want, s.logEnd)
	ga := <-groupCh // groupState gives up when ctx ends, like logEnds

	s.unavailable = append(unavailable, ga.unavailable...)
	answered += ga.answered
	if answered == 0 && len(s.unavailable) > 0 {
		return nil, c.clusterError(firstErr(s.unavailable), time.Since(started))
	}
	if ga.info != nil {
		s.group, s.groupKnown = *ga.info, true
	} else {
		s.group = GroupInfo{Name: group}
	}
	if ga.commits != nil {
		for i, r := range refs {
			s.committed[i] = NoOffset
			if off, ok := ga.commits[r.topic][r.partition]; ok {
				s.committed[i] = off
			}
		}
	}
	return s, nil
}

func firstErr(us []Unavailable) error {
	for _, u := range us {
		if u.Err != nil {
			return u.Err
		}
	}
	return errors.New("no answer")
}

type groupAnswer struct {
	info        *GroupInfo
	commits     commits
	unavailable []Unavailable
	answered    int
}

// groupState fetches a group's commits and description from its
// coordinator, retrying once on a coordinator that moved.
func (c *Cluster) groupState(ctx context.Context, cl sarama.Client, group string, topicParts map[string][]int32) groupAnswer {
	var ga groupAnswer
	refresh := false
	for attempt := 0; attempt < 2; attempt++ {
		coord, err := c.coordinator(ctx, cl, group, refresh)
		if err != nil {
			ga.unavailable = []Unavailable{{What: PartCommitted, Err: err}, {What: PartGroupState, Err: err}}
			return ga
		}
		var (
			cm   commits
			info GroupInfo
		)
		var calls []*call
		if ga.commits == nil {
			calls = append(calls, &call{broker: coord, op: "OffsetFetch", run: func() (err error) {
				cm, err = c.fetchCommits(coord, group, topicParts)
				return err
			}})
		}
		if ga.info == nil {
			calls = append(calls, &call{broker: coord, op: "DescribeGroups", run: func() error {
				infos, err := c.describeGroups(coord, []string{group})
				if err != nil {
					return err
				}
				info = infos[group]
				info.Name = group
				if info.State == "" {
					info.State = "Dead"
				}
				return nil
			}})
		}
		finished := runCalls(ctx, calls)
		ga.unavailable = ga.unavailable[:0]
		retry := false
		for k, call := range calls {
			what := PartCommitted
			if call.op == "DescribeGroups" {
				what = PartGroupState
			}
			if err := c.callErr(ctx, call, finished[k]); err != nil {
				if finished[k] && retriableCoordinatorError(call.err) && attempt == 0 {
					retry = true
				}
				ga.unavailable = append(ga.unavailable, Unavailable{What: what, Err: err})
				continue
			}
			ga.answered++
			if call.op == "OffsetFetch" {
				ga.commits = cm
			} else {
				ga.info = &info
			}
		}
		if !retry || ctx.Err() != nil {
			return ga
		}
		refresh = true
	}
	return ga
}

// Offsets is a group's raw offsets on some topics, for callers that want
// the numbers without a verdict.
type Offsets struct {
	At          time.Time
	Group       GroupInfo
	Partitions  []PartitionLag // LogEnd, Committed, Lag, Leader and Member only
	Unavailable []Unavailable
}

// Offsets fetches a group's log ends, commits and description (batched:
// one ListOffsets per leader, one OffsetFetch and one DescribeGroups).
func (c *Cluster) Offsets(ctx context.Context, group string, topics ...string) (*Offsets, error) {
	if group == "" || len(topics) == 0 {
		return nil, fmt.Errorf("cluster %s: offsets need a group and at least one topic", c.opts.Name)
	}
	s, err := c.snapshot(ctx, group, topics)
	if err != nil {
		return nil, err
	}
	return &Offsets{At: s.at, Group: s.group, Partitions: s.partitions(), Unavailable: s.unavailable}, nil
}

// partitions turns the snapshot into report rows, without verdicts.
func (s *groupSnapshot) partitions() []PartitionLag {
	owner := map[TopicPartition]string{}
	for _, m := range s.group.Members {
		for t, ps := range m.Assigned {
			for _, p := range ps {
				owner[TopicPartition{t, p}] = m.ClientID
			}
		}
	}
	out := make([]PartitionLag, len(s.refs))
	for i, r := range s.refs {
		pl := PartitionLag{Topic: r.topic, Partition: r.partition, Leader: -1, LogEnd: s.logEnd[i], Committed: s.committed[i], Lag: -1}
		if r.leader != nil {
			pl.Leader = r.leader.ID()
		}
		if pl.LogEnd >= 0 && pl.Committed >= 0 {
			pl.Lag = max(pl.LogEnd-pl.Committed, 0)
		}
		if len(owner) > 0 {
			pl.Member = owner[TopicPartition{r.topic, r.partition}]
		}
		out[i] = pl
	}
	return out
}

// samples turns the snapshot into one sampling round per topic, leaving out
// partitions whose log end or commit is unknown.
func (s *groupSnapshot) samples(at time.Time) map[string][]PartitionSample {
	owned := map[TopicPartition]bool{}
	for _, m := range s.group.Members {
		for t, ps := range m.Assigned {
			for _, p := range ps {
				owned[TopicPartition{t, p}] = true
			}
		}
	}
	out := map[string][]PartitionSample{}
	for i, r := range s.refs {
		if s.logEnd[i] < 0 || s.committed[i] == UnknownOffset {
			continue
		}
		out[r.topic] = append(out[r.topic], PartitionSample{Partition: r.partition, Committed: s.committed[i],
			LogEnd: s.logEnd[i], Owned: len(owned) > 0 && owned[TopicPartition{r.topic, r.partition}], UnixMilli: at.UnixMilli()})
	}
	return out
}
