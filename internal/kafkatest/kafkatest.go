// Package kafkatest runs an in-process Kafka (kfake: the real wire protocol) with helpers to
// produce records and commit group offsets, for tests and the demo. streamwatch itself talks
// to it through sarama like to any broker.
package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster is a running kfake cluster on loopback.
type Cluster struct {
	*kfake.Cluster
	client *kgo.Client
	admin  *kadm.Client
}

// Start runs a cluster of n brokers on free loopback ports.
func Start(n int) (*Cluster, error) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(n))
	if err != nil {
		return nil, fmt.Errorf("start kfake: %w", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		kc.Close()
		return nil, err
	}
	return &Cluster{Cluster: kc, client: cl, admin: kadm.NewClient(cl)}, nil
}

// Close stops the cluster.
func (c *Cluster) Close() {
	c.client.Close()
	c.Cluster.Close()
}

// CreateTopic creates a topic with the given partition count.
func (c *Cluster) CreateTopic(ctx context.Context, topic string, partitions int32) error {
	res, err := c.admin.CreateTopics(ctx, partitions, 1, nil, topic)
	if err != nil {
		return err
	}
	return res.Error()
}

// CreateTopicWith creates a topic with the given partition count and topic configs
// (retention.ms, cleanup.policy, …).
func (c *Cluster) CreateTopicWith(ctx context.Context, topic string, partitions int32, configs map[string]string) error {
	cfg := map[string]*string{}
	for k, v := range configs {
		cfg[k] = &v
	}
	res, err := c.admin.CreateTopics(ctx, partitions, 1, cfg, topic)
	if err != nil {
		return err
	}
	return res.Error()
}

// Produce appends counts[p] records to each partition p, stamped at ts (zero: now).
func (c *Cluster) Produce(ctx context.Context, topic string, counts []int, ts time.Time) error {
	if ts.IsZero() {
		ts = time.Now()
	}
	var recs []*kgo.Record
	for p, n := range counts {
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(p), Timestamp: ts,
				Value: []byte(fmt.Sprintf(`{"reply":"YES","n":%d}`, i))})
		}
	}
	return c.client.ProduceSync(ctx, recs...).FirstErr()
}

// Commit commits offsets for group on topic (partition → next offset to read), as a consumer
// that then left would.
func (c *Cluster) Commit(ctx context.Context, group, topic string, offsets map[int32]int64) error {
	os := kadm.Offsets{}
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	res, err := c.admin.CommitOffsets(ctx, group, os)
	if err != nil {
		return err
	}
	return res.Error()
}

// Consume runs a consumer-group member of group on topic (committing as it reads) until the
// returned stop is called; Wait for it to join with the group's state.
func (c *Cluster) Consume(group, topic string) (stop func(), err error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			cl.PollFetches(ctx)
		}
	}()
	return func() {
		cancel()
		<-done
		cl.Close()
	}, nil
}

// GroupState is the group's state as the coordinator reports it ("Stable", "Empty", …).
func (c *Cluster) GroupState(ctx context.Context, group string) (string, error) {
	d, err := c.admin.DescribeGroups(ctx, group)
	if err != nil {
		return "", err
	}
	return d[group].State, nil
}

// Committed returns group's committed offsets on topic (partition → next offset to read);
// empty for a group that does not exist.
func (c *Cluster) Committed(ctx context.Context, group, topic string) (map[int32]int64, error) {
	res, err := c.admin.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[int32]int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := res.Error(); err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for p, o := range res[topic] {
		out[p] = o.At
	}
	return out, nil
}

// DeleteBefore deletes the records of topic below the given offsets (partition → new log
// start), as retention would.
func (c *Cluster) DeleteBefore(ctx context.Context, topic string, offsets map[int32]int64) error {
	os := kadm.Offsets{}
	for p, o := range offsets {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	res, err := c.admin.DeleteRecords(ctx, os)
	if err != nil {
		return err
	}
	return res.Error()
}

// AddPartitions grows topic by add partitions, and returns once Produce can write to them.
func (c *Cluster) AddPartitions(ctx context.Context, topic string, add int) error {
	res, err := c.admin.CreatePartitions(ctx, add, topic)
	if err != nil {
		return err
	}
	if err := res.Error(); err != nil {
		return err
	}
	td, err := c.admin.ListTopics(ctx, topic)
	if err != nil {
		return err
	}
	last := len(td[topic].Partitions) - 1
	for {
		c.client.ForceMetadataRefresh()
		if leader, _, err := c.client.PartitionLeader(topic, int32(last)); err == nil && leader >= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("partition %d of %s never reached the producer: %w", last, topic, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
