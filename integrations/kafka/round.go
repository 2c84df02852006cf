package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// A sampling round takes every pipeline of a cluster at once, so that its Kafka requests grow
// with the brokers, not with the pipelines: one ListOffsets per partition leader for every
// topic, and per group coordinator one DescribeGroups and one OffsetFetch for every group it
// coordinates (OffsetFetch v8, Kafka ≥ 3.0.0; one OffsetFetch per group before, or when the
// broker answers with an older version). Coordinators and metadata are cached by the client:
// only a group or topic seen for the first time costs a FindCoordinator or Metadata request.
// When documented groups look idle, the other groups on their topics are sampled in one more
// pass for the whole round: one ListGroups per broker, then one DescribeGroups and one
// OffsetFetch per coordinator.

// PipelineRound is one pipeline's part of a sampling round.
type PipelineRound struct {
	Pipeline string
	Cluster  string
	At       time.Time
	Group    GroupInfo
	// Partitions are the documented group's offsets on the pipeline's topics (LogEnd,
	// Committed, Lag, Leader, Member), sorted by topic and partition.
	Partitions []PartitionLag
	// Status and Summary are the evaluator's verdict over the stored rounds and this one.
	Status  Status
	Summary Summary
	// Publish is the pipeline's publish group as the round found it; nil without one.
	Publish *GroupState
	// Unavailable lists what this pipeline's part of the round could not fetch.
	Unavailable []Unavailable
	// Err is set when nothing of the pipeline could be sampled (its cluster, its topics).
	Err error
}

// GroupState is a group's description and its commits on some topics.
type GroupState struct {
	Info  GroupInfo
	Known bool // the coordinator described the group
	// Commits are the group's committed offsets; nil when the coordinator did not answer.
	Commits map[TopicPartition]int64
}

// Round is one sampling round of every pipeline.
type Round struct {
	At        time.Time
	Pipelines []PipelineRound // sorted by pipeline name
}

// Pipeline returns the named pipeline's part of the round.
func (r *Round) Pipeline(name string) (*PipelineRound, bool) {
	for i := range r.Pipelines {
		if r.Pipelines[i].Pipeline == name {
			return &r.Pipelines[i], true
		}
	}
	return nil, false
}

// clusterSnapshot is one cluster's offsets for a round: the log ends of every topic and the
// state of every group, fetched together.
type clusterSnapshot struct {
	at          time.Time
	refs        []partitionRef
	logEnd      []int64 // aligned with refs
	topicRefs   map[string][]int
	topicErr    map[string]error
	groups      groupStates
	unavailable []Unavailable // of the log ends
}

// roundSnapshot fetches the log ends of topics (one ListOffsets per leader) and the state of
// groups (groupStatesOf), in parallel.
func (c *Cluster) roundSnapshot(ctx context.Context, topics, groups []string) (*clusterSnapshot, error) {
	cl, err := c.saramaClient()
	if err != nil {
		return nil, err
	}
	s := &clusterSnapshot{at: time.Now(), topicRefs: map[string][]int{}, topicErr: map[string]error{}}
	for _, t := range topics {
		refs, err := c.topicLeaders(ctx, cl, []string{t})
		if err != nil {
			s.topicErr[t] = err
			continue
		}
		for _, r := range refs {
			s.topicRefs[t] = append(s.topicRefs[t], len(s.refs))
			s.refs = append(s.refs, r)
		}
	}
	if len(s.refs) == 0 && len(topics) > 0 {
		for _, t := range topics {
			return nil, s.topicErr[t]
		}
	}
	s.logEnd = make([]int64, len(s.refs))
	want := make([]int, len(s.refs))
	for i := range s.refs {
		want[i] = i
		s.logEnd[i] = UnknownOffset
	}
	wanted := map[string]bool{}
	for _, t := range topics {
		wanted[t] = true
	}
	groupsCh := make(chan groupStates, 1)
	go func() { groupsCh <- c.groupStatesOf(ctx, cl, groups, wanted) }()
	unavailable, answered := c.logEnds(ctx, cl, s.refs, want, s.logEnd)
	s.groups = <-groupsCh
	s.unavailable = unavailable
	if answered == 0 && s.groups.answered == 0 && len(unavailable)+len(s.groups.unavailable) > 0 {
		return nil, c.clusterError(firstErr(append(unavailable, s.groups.unavailable...)), time.Since(s.at))
	}
	return s, nil
}

// groupSnapshot is a group's part of the cluster snapshot on topics, in the form the lag
// report uses.
func (s *clusterSnapshot) groupSnapshot(group string, topics []string) *groupSnapshot {
	g := &groupSnapshot{at: s.at}
	for _, t := range topics {
		for _, i := range s.topicRefs[t] {
			g.refs = append(g.refs, s.refs[i])
			g.logEnd = append(g.logEnd, s.logEnd[i])
		}
	}
	g.committed = make([]int64, len(g.refs))
	cm, known := s.groups.commits[group]
	for i, r := range g.refs {
		g.committed[i] = UnknownOffset
		if known {
			g.committed[i] = NoOffset
			if off, ok := cm[r.topic][r.partition]; ok {
				g.committed[i] = off
			}
		}
	}
	if info, ok := s.groups.infos[group]; ok {
		g.group, g.groupKnown = info, true
		g.group.Name = group
		if g.group.State == "" {
			g.group.State = "Dead"
		}
	} else {
		g.group = GroupInfo{Name: group}
	}
	wantedTopic := map[string]bool{}
	for _, t := range topics {
		wantedTopic[t] = true
	}
	for _, u := range s.unavailable {
		var mine []TopicPartition
		for _, tp := range u.Partitions {
			if wantedTopic[tp.Topic] {
				mine = append(mine, tp)
			}
		}
		if len(mine) > 0 || u.Partitions == nil {
			g.unavailable = append(g.unavailable, Unavailable{What: u.What, Partitions: mine, Err: u.Err})
		}
	}
	for _, u := range s.groups.unavailable {
		if slices.Contains(u.groups, group) {
			g.unavailable = append(g.unavailable, Unavailable{What: u.What, Err: u.Err})
		}
	}
	return g
}

// publishState is the publish group's part of the snapshot.
func (s *clusterSnapshot) publishState(group string) *GroupState {
	gs := &GroupState{Info: GroupInfo{Name: group}}
	if info, ok := s.groups.infos[group]; ok {
		gs.Info, gs.Known = info, true
		gs.Info.Name = group
	}
	if cm, ok := s.groups.commits[group]; ok {
		gs.Commits = map[TopicPartition]int64{}
		for t, parts := range cm {
			for p, off := range parts {
				gs.Commits[TopicPartition{t, p}] = off
			}
		}
	}
	return gs
}

// Round takes one sampling round of every pipeline, stores it, and returns each pipeline's
// offsets with the evaluator's verdict. A cluster that fails does not stop the others; the
// errors are joined. Each cluster gets at most one interval.
func (s *Sampler) Round(ctx context.Context) (*Round, error) {
	byCluster := map[string][]Pipeline{}
	var clusters []string
	for _, p := range s.m.Pipelines() {
		if _, ok := byCluster[p.Cluster]; !ok {
			clusters = append(clusters, p.Cluster)
		}
		byCluster[p.Cluster] = append(byCluster[p.Cluster], p)
	}
	parts := make([][]PipelineRound, len(clusters))
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, name := range clusters {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, s.interval)
			defer cancel()
			parts[i], errs[i] = s.sampleCluster(cctx, name, byCluster[name])
		})
	}
	wg.Wait()
	r := &Round{At: s.m.now()}
	for _, p := range parts {
		r.Pipelines = append(r.Pipelines, p...)
	}
	sort.Slice(r.Pipelines, func(a, b int) bool { return r.Pipelines[a].Pipeline < r.Pipelines[b].Pipeline })
	return r, errors.Join(errs...)
}

// storeConcurrency bounds the sample store calls a round makes at once.
const storeConcurrency = 8

func (s *Sampler) sampleCluster(ctx context.Context, name string, ps []Pipeline) ([]PipelineRound, error) {
	out := make([]PipelineRound, len(ps))
	for i, p := range ps {
		out[i] = PipelineRound{Pipeline: p.Name, Cluster: name}
	}
	fail := func(err error) ([]PipelineRound, error) {
		for i := range out {
			out[i].Err = err
		}
		return out, fmt.Errorf("sample cluster %s: %w", name, err)
	}
	c, err := s.m.clusters.Cluster(name)
	if err != nil {
		return fail(err)
	}
	var topics, groups []string
	seenT, seenG := map[string]bool{}, map[string]bool{}
	for _, p := range ps {
		for _, t := range p.Topics {
			if !seenT[t] {
				seenT[t] = true
				topics = append(topics, t)
			}
		}
		for _, g := range []string{p.Group, p.PublishGroup} {
			if g != "" && !seenG[g] {
				seenG[g] = true
				groups = append(groups, g)
			}
		}
	}
	snap, err := c.roundSnapshot(ctx, topics, groups)
	if err != nil {
		return fail(err)
	}
	now := s.m.now()

	// Each pipeline: its verdict over the stored window and this round, then the round stored.
	idle := make([][]string, len(ps))
	errs := make([]error, len(ps))
	sem := make(chan struct{}, storeConcurrency)
	var wg sync.WaitGroup
	for i, p := range ps {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			idle[i], errs[i] = s.samplePipeline(ctx, c, snap, p, now, &out[i])
		})
	}
	wg.Wait()

	idleTopics := map[string]map[string]bool{} // topic → documented groups that look idle on it
	for i, p := range ps {
		for _, t := range idle[i] {
			if idleTopics[t] == nil {
				idleTopics[t] = map[string]bool{}
			}
			idleTopics[t][p.Group] = true
		}
	}
	if len(idleTopics) > 0 {
		errs = append(errs, s.sampleOthers(ctx, c, snap, idleTopics, now))
	}
	return out, errors.Join(errs...)
}

// samplePipeline fills out with p's part of the snapshot and its verdict, and stores the
// round. It returns the topics on which the documented group looks idle.
func (s *Sampler) samplePipeline(ctx context.Context, c *Cluster, snap *clusterSnapshot, p Pipeline, now time.Time, out *PipelineRound) (idle []string, err error) {
	for _, t := range p.Topics {
		if terr := snap.topicErr[t]; terr != nil {
			out.Err = terr
			return nil, fmt.Errorf("sample pipeline %s: %w", p.Name, terr)
		}
	}
	gs := snap.groupSnapshot(p.Group, p.Topics)
	out.At, out.Group, out.Partitions, out.Unavailable = now, gs.group, gs.partitions(), gs.unavailable
	if p.PublishGroup != "" {
		out.Publish = snap.publishState(p.PublishGroup)
	}
	live := gs.samples(now)
	var errs []error
	for _, u := range gs.unavailable {
		errs = append(errs, fmt.Errorf("sample pipeline %s: %s: %w", p.Name, u.part(), u.Err))
	}
	byTopic := map[string][]int{}
	for i, pl := range out.Partitions {
		byTopic[pl.Topic] = append(byTopic[pl.Topic], i)
	}
	eval := EvalOptions{Now: now, StallAfter: p.stallAfter(), AllowedLag: p.allowedLag()}
	for _, topic := range p.Topics {
		key := SampleKey{Cluster: c.Name(), Group: p.Group, Topic: topic}
		window, werr := s.m.store.Window(ctx, key)
		if werr != nil {
			errs = append(errs, fmt.Errorf("read samples of %s: %w", key, werr))
			window = nil
		}
		verdicts := evaluate(window, live[topic], eval)
		byPartition := make(map[int32]PartitionStatus, len(verdicts.Partitions))
		for _, ps := range verdicts.Partitions {
			byPartition[ps.Partition] = ps
		}
		for _, i := range byTopic[topic] {
			pl := &out.Partitions[i]
			ps, ok := byPartition[pl.Partition]
			if pl.LogEnd < 0 || pl.Committed == UnknownOffset || !ok {
				pl.Status, pl.Evidence = StatusUnknown, unknownRule(pl)
				continue
			}
			pl.Status, pl.Evidence = ps.Status, ps.Evidence
			if ps.Age > 0 {
				pl.Age, pl.AgeSource = ps.Age, AgeEstimated
				if ps.AgeAtLeast {
					pl.AgeSource = AgeAtLeast
				}
			}
		}
		round := live[topic]
		if len(round) == 0 {
			continue
		}
		if err := s.m.store.Append(ctx, key, round); err != nil {
			errs = append(errs, fmt.Errorf("store samples of %s: %w", key, err))
			continue
		}
		if s.looksIdle(key, round, gs.group.membersOn(topic)) {
			idle = append(idle, topic)
		}
	}
	sum, _ := summarize(out.Partitions)
	if len(p.Topics) <= 1 {
		sum.Worst.Topic = ""
	}
	out.Status, out.Summary = sum.Status, sum
	return idle, errors.Join(errs...)
}

// sampleOthers stores a round of every other group committing on, or assigned to, the topics
// on which a documented group looks idle, so that the wrong-group check can tell which of them
// moves: one ListGroups per broker and one DescribeGroups and OffsetFetch per coordinator for
// the whole round.
func (s *Sampler) sampleOthers(ctx context.Context, c *Cluster, snap *clusterSnapshot, idle map[string]map[string]bool, now time.Time) error {
	cl, err := c.saramaClient()
	if err != nil {
		return err
	}
	byCoord, unavailable, _ := c.listGroups(ctx, cl)
	wanted := map[string]bool{}
	for t := range idle {
		wanted[t] = true
	}
	gs := c.fetchGroupStates(ctx, byCoord, wanted)
	var errs []error
	for _, u := range append(unavailable, gs.unavailable...) {
		errs = append(errs, fmt.Errorf("sample groups on %d idle topic(s): %s: %w", len(idle), u.part(), u.Err))
	}
	names := make([]string, 0, len(gs.infos)+len(gs.commits))
	for g := range gs.infos {
		names = append(names, g)
	}
	for g := range gs.commits {
		if _, ok := gs.infos[g]; !ok {
			names = append(names, g)
		}
	}
	sort.Strings(names)
	for topic, documented := range idle {
		for _, g := range names {
			if documented[g] {
				continue
			}
			info := gs.infos[g]
			cm := gs.commits[g][topic]
			if len(cm) == 0 && info.membersOn(topic) == 0 {
				continue
			}
			owned := map[int32]bool{}
			for _, mb := range info.Members {
				for _, p := range mb.Assigned[topic] {
					owned[p] = true
				}
			}
			var round []PartitionSample
			for _, i := range snap.topicRefs[topic] {
				end := snap.logEnd[i]
				if end < 0 {
					continue
				}
				p := snap.refs[i].partition
				off, committed := cm[p]
				if !committed {
					off = NoOffset
				}
				round = append(round, PartitionSample{Partition: p, Committed: off, LogEnd: end, Owned: owned[p], UnixMilli: now.UnixMilli()})
			}
			if len(round) == 0 {
				continue
			}
			key := SampleKey{Cluster: c.Name(), Group: g, Topic: topic}
			if err := s.m.store.Append(ctx, key, round); err != nil {
				errs = append(errs, fmt.Errorf("store samples of %s: %w", key, err))
			}
		}
	}
	return errors.Join(errs...)
}

// RecordQuery asks for the timestamp of the record at Offset of a partition.
type RecordQuery struct {
	Topic     string
	Partition int32
	Offset    int64
}

// RecordTime is the answer to a RecordQuery: the record's timestamp, or why there is none.
type RecordTime struct {
	At     time.Time
	NoTime NoTime // why there is no At
	Err    string // the broker's error message for NoTimeBrokerError
	// OutOfRange says the offset is not on the broker: retention deleted it (or the log is
	// shorter than the offset).
	OutOfRange bool
}

// RecordTimes fetches the timestamps of the records qs name, with one Fetch request per
// partition leader, asking each partition for at most perPartition bytes (0: 64 KiB). A
// broker returns at least the record batch that holds the offset, whole or cut at the limit;
// a cut batch still carries its first timestamp, which then stands for the record's (it is
// at most the batch's span earlier).
func (cs *Clusters) RecordTimes(ctx context.Context, cluster string, qs []RecordQuery, perPartition int32) (map[TopicPartition]RecordTime, []Unavailable, error) {
	c, err := cs.Cluster(cluster)
	if err != nil {
		return nil, nil, err
	}
	if len(qs) == 0 {
		return map[TopicPartition]RecordTime{}, nil, nil
	}
	cl, err := c.saramaClient()
	if err != nil {
		return nil, nil, err
	}
	if perPartition <= 0 {
		perPartition = recordTimeBytes
	}
	var refs []partitionRef
	index := map[string]map[int32]int{}
	var unavailable []Unavailable
	for _, q := range qs {
		if index[q.Topic] != nil {
			continue
		}
		rs, err := c.topicLeaders(ctx, cl, []string{q.Topic})
		if err != nil {
			unavailable = append(unavailable, Unavailable{What: PartRecordTimes, Partitions: []TopicPartition{{q.Topic, q.Partition}}, Err: err})
			index[q.Topic] = map[int32]int{}
			continue
		}
		index[q.Topic] = map[int32]int{}
		for _, r := range rs {
			index[q.Topic][r.partition] = len(refs)
			refs = append(refs, r)
		}
	}
	var want []int
	var offsets []int64
	for _, q := range qs {
		if i, ok := index[q.Topic][q.Partition]; ok {
			want = append(want, i)
			offsets = append(offsets, q.Offset)
		}
	}
	times, more := c.recordTimes(ctx, refs, want, offsets, perPartition)
	out := make(map[TopicPartition]RecordTime, len(times))
	for i, t := range times {
		out[TopicPartition{refs[i].topic, refs[i].partition}] = RecordTime{At: t.at, NoTime: t.noTime, Err: t.err, OutOfRange: t.noTime == NoTimeOutOfRange}
	}
	return out, append(unavailable, more...), nil
}
