package kafka

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// PartitionRange is what the brokers hold of one partition: its earliest offset (the log
// start: retention and deleted records move it up) and its log end (the next offset to be
// written). Either is UnknownOffset when the leader did not answer.
type PartitionRange struct {
	Partition int32
	Leader    int32 // broker ID; -1 when the partition has no leader
	LogStart  int64
	LogEnd    int64
}

// TopicRange is what a cluster holds of one topic. Exists is false when the cluster does
// not know the topic.
type TopicRange struct {
	Topic      string
	Exists     bool
	Partitions []PartitionRange // sorted by partition
}

// LogRanges is what a cluster holds of some topics, read at one time.
type LogRanges struct {
	Cluster   string
	Bootstrap []string // the cluster's configured brokers, to name where the answer came from
	At        time.Time
	Topics    []TopicRange // in the order asked for
	// Unavailable lists what could not be fetched; the rest stands.
	Unavailable []Unavailable
}

// Topic returns the named topic's range, if it was asked for.
func (r *LogRanges) Topic(name string) (TopicRange, bool) {
	for _, t := range r.Topics {
		if t.Topic == name {
			return t, true
		}
	}
	return TopicRange{}, false
}

// Partition returns one partition's range; false when the topic was not asked for, or the
// cluster holds no such partition.
func (r *LogRanges) Partition(topic string, partition int32) (PartitionRange, bool) {
	t, ok := r.Topic(topic)
	if !ok {
		return PartitionRange{}, false
	}
	i, found := slices.BinarySearchFunc(t.Partitions, partition, func(p PartitionRange, n int32) int { return int(p.Partition - n) })
	if !found {
		return PartitionRange{}, false
	}
	return t.Partitions[i], true
}

// LogRanges fetches what the named cluster holds of topics: their partitions (Metadata, for
// topics the client has not seen), and for every partition its log start and log end (per
// partition leader one ListOffsets for each, in parallel). A topic the cluster does not know
// is in the answer with Exists false; an error means nothing could be read.
func (cs *Clusters) LogRanges(ctx context.Context, cluster string, topics ...string) (*LogRanges, error) {
	c, err := cs.Cluster(cluster)
	if err != nil {
		return nil, err
	}
	cl, err := c.saramaClient()
	if err != nil {
		return nil, err
	}
	out := &LogRanges{Cluster: c.Name(), Bootstrap: slices.Clone(c.opts.Brokers), At: time.Now()}
	var refs []partitionRef
	var metaErr error
	for _, t := range topics {
		tr := TopicRange{Topic: t}
		rs, err := c.topicLeaders(ctx, cl, []string{t})
		switch {
		case errors.Is(err, ErrUnknownTopic):
		case err != nil:
			metaErr = err
			out.Unavailable = append(out.Unavailable, Unavailable{What: "metadata of topic " + t, Err: err})
		default:
			tr.Exists = true
			refs = append(refs, rs...)
		}
		out.Topics = append(out.Topics, tr)
	}
	if len(refs) == 0 && metaErr != nil {
		return nil, metaErr
	}
	starts, ends := make([]int64, len(refs)), make([]int64, len(refs))
	want := make([]int, len(refs))
	for i := range refs {
		want[i], starts[i], ends[i] = i, UnknownOffset, UnknownOffset
	}
	var wg sync.WaitGroup
	var startsGone []Unavailable
	var answeredStarts int
	wg.Go(func() { startsGone, answeredStarts = c.logStarts(ctx, cl, refs, want, starts) })
	endsGone, answeredEnds := c.logEnds(ctx, cl, refs, want, ends)
	wg.Wait()
	out.Unavailable = append(append(out.Unavailable, endsGone...), startsGone...)
	if len(refs) > 0 && answeredStarts+answeredEnds == 0 && len(out.Unavailable) > 0 {
		return nil, c.clusterError(firstErr(out.Unavailable), time.Since(out.At))
	}
	for i, r := range refs {
		k := slices.IndexFunc(out.Topics, func(t TopicRange) bool { return t.Topic == r.topic })
		pr := PartitionRange{Partition: r.partition, Leader: -1, LogStart: starts[i], LogEnd: ends[i]}
		if r.leader != nil {
			pr.Leader = r.leader.ID()
		}
		out.Topics[k].Partitions = append(out.Topics[k].Partitions, pr)
	}
	return out, nil
}

// LogStarts fetches the log start offsets of partitions of the named cluster: one ListOffsets
// per partition leader. Partitions whose start could not be read are left out of the map and
// named in the unavailable parts; an error means nothing could be asked.
func (cs *Clusters) LogStarts(ctx context.Context, cluster string, tps []TopicPartition) (map[TopicPartition]int64, []Unavailable, error) {
	c, err := cs.Cluster(cluster)
	if err != nil {
		return nil, nil, err
	}
	out := map[TopicPartition]int64{}
	if len(tps) == 0 {
		return out, nil, nil
	}
	cl, err := c.saramaClient()
	if err != nil {
		return nil, nil, err
	}
	wanted := map[TopicPartition]bool{}
	var topics []string
	for _, tp := range tps {
		if !slices.Contains(topics, tp.Topic) {
			topics = append(topics, tp.Topic)
		}
		wanted[tp] = true
	}
	var refs []partitionRef
	var unavailable []Unavailable
	for _, t := range topics {
		rs, err := c.topicLeaders(ctx, cl, []string{t})
		if err != nil {
			var mine []TopicPartition
			for _, tp := range tps {
				if tp.Topic == t {
					mine = append(mine, tp)
				}
			}
			unavailable = append(unavailable, Unavailable{What: "log start offsets", Partitions: mine, Err: err})
			continue
		}
		for _, r := range rs {
			if wanted[TopicPartition{r.topic, r.partition}] {
				refs = append(refs, r)
			}
		}
	}
	starts := make([]int64, len(refs))
	want := make([]int, len(refs))
	for i := range refs {
		want[i], starts[i] = i, UnknownOffset
	}
	more, _ := c.logStarts(ctx, cl, refs, want, starts)
	for i, r := range refs {
		if starts[i] >= 0 {
			out[TopicPartition{r.topic, r.partition}] = starts[i]
		}
	}
	return out, append(unavailable, more...), nil
}
