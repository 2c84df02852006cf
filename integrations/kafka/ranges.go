package kafka

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/IBM/sarama"
)

// PartitionRange is what the brokers hold of a partition: the records from Start (the
// earliest offset retention has left) up to End (the log end, exclusive). Either is
// UnknownOffset when the partition's leader did not answer.
type PartitionRange struct {
	Start int64
	End   int64
}

// Records is how many records the range holds, or -1 when either end is unknown.
func (r PartitionRange) Records() int64 {
	if r.Start < 0 || r.End < 0 {
		return -1
	}
	return max(r.End-r.Start, 0)
}

// Holds says whether offset off is still on the brokers: Start ≤ off ≤ End (off = End is
// the next record to be written, which a reader may wait at).
func (r PartitionRange) Holds(off int64) bool {
	return r.Start >= 0 && r.End >= 0 && off >= r.Start && off <= r.End
}

// TopicRanges is what the brokers hold of some topics, partition by partition.
type TopicRanges struct {
	At         time.Time
	Partitions map[TopicPartition]PartitionRange
	// Missing are the topics asked for that do not exist on the cluster.
	Missing     []string
	Unavailable []Unavailable
}

// Topic lists the partitions of one topic the answer holds, in order.
func (t *TopicRanges) Topic(topic string) []int32 {
	var out []int32
	for tp := range t.Partitions {
		if tp.Topic == topic {
			out = append(out, tp.Partition)
		}
	}
	slices.Sort(out)
	return out
}

// TopicRanges reads, for every partition of topics on the named cluster, its earliest and
// latest offsets: a Metadata request (partitions added since the last one count), then one
// ListOffsets per partition leader for each end. A topic that does not
// exist is listed in Missing, not an error; an unreachable cluster is.
func (cs *Clusters) TopicRanges(ctx context.Context, cluster string, topics ...string) (*TopicRanges, error) {
	c, err := cs.Cluster(cluster)
	if err != nil {
		return nil, err
	}
	cl, err := c.saramaClient()
	if err != nil {
		return nil, err
	}
	out := &TopicRanges{At: time.Now(), Partitions: map[TopicPartition]PartitionRange{}}
	// Partitions added since the client last loaded metadata are what this answer is for:
	// refresh first (a topic that does not exist is found below, not here).
	if _, err := await(ctx, func() (struct{}, error) { return struct{}{}, cl.RefreshMetadata(topics...) }); err != nil && ctx.Err() != nil {
		return nil, c.clusterError(err, 0)
	}
	var refs []partitionRef
	for _, t := range topics {
		rs, err := c.topicLeaders(ctx, cl, []string{t})
		switch {
		case errors.Is(err, ErrUnknownTopic):
			out.Missing = append(out.Missing, t)
			continue
		case err != nil:
			return nil, err
		}
		refs = append(refs, rs...)
	}
	if len(refs) == 0 {
		return out, nil
	}
	want := make([]int, len(refs))
	starts, ends := make([]int64, len(refs)), make([]int64, len(refs))
	for i := range refs {
		want[i], starts[i], ends[i] = i, UnknownOffset, UnknownOffset
	}
	u1, _ := c.listOffsets(ctx, cl, slices.Clone(refs), want, ends, sarama.OffsetNewest)
	u2, _ := c.listOffsets(ctx, cl, refs, slices.Clone(want), starts, sarama.OffsetOldest)
	out.Unavailable = append(u1, u2...)
	for i, r := range refs {
		out.Partitions[TopicPartition{Topic: r.topic, Partition: r.partition}] = PartitionRange{Start: starts[i], End: ends[i]}
	}
	return out, nil
}
