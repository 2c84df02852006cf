package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/state"
)

// Offsets reads a group's offsets on topics in a named cluster (kafka.Clusters).
type Offsets interface {
	Offsets(ctx context.Context, cluster, group string, topics ...string) (*kafka.Offsets, error)
}

// Brokers reads what the Kafka brokers hold (kafka.Clusters): every partition's earliest and
// latest offsets, and the timestamps of records at given offsets.
type Brokers interface {
	TopicRanges(ctx context.Context, cluster string, topics ...string) (*kafka.TopicRanges, error)
	RecordTimes(ctx context.Context, cluster string, qs []kafka.RecordQuery, perPartition int32) (map[kafka.TopicPartition]kafka.RecordTime, []kafka.Unavailable, error)
}

// brokerTimeout bounds the reads of the brokers a checkpoint is compared with when
// Checkpoints.BrokerTimeout is not set (app.Options sets it).
const brokerTimeout = 10 * time.Second

// Checkpoints reads pipelines' Spark checkpoints and compares them with the brokers: the
// records waiting beyond the checkpoint's offsets that the brokers still hold, the offsets
// retention deleted before the query read them, and partitions the checkpoint does not know.
type Checkpoints struct {
	Config *config.Config
	Getenv func(string) string
	// Kafka reads the brokers; nil, or a pipeline without Kafka, leaves the comparison out.
	Kafka Brokers
	// History, when set, is the commit history detection keeps: with stale_after: auto, a
	// reading judges staleness by the same learned interval detection does.
	History CommitHistory
	// BrokerTimeout bounds the reads of the brokers a checkpoint is compared with
	// (app.Options.BrokerTimeout).
	BrokerTimeout time.Duration
}

// CommitHistory reads a pipeline's commit history (state.Store).
type CommitHistory interface {
	CommitHistory(ctx context.Context, pipeline string) ([]state.Commit, error)
}

// staleAfter is p's stale_after as detection judges it now.
func (c *Checkpoints) staleAfter(ctx context.Context, p *config.Pipeline) time.Duration {
	if !p.Checkpoint.StaleAuto || c.History == nil {
		return p.Checkpoint.StaleAfter
	}
	h, err := c.History.CommitHistory(ctx, p.Name)
	if err != nil {
		return p.Checkpoint.StaleAfter
	}
	return StaleAfter(p, BatchInterval(h))
}

// CheckpointReading is a checkpoint read against the brokers.
type CheckpointReading struct {
	Report *spark.Report
	// Brokers is what the brokers hold of the documented topics and of those the checkpoint
	// reads; nil when not read (no Kafka, or BrokersErr).
	Brokers    *kafka.TopicRanges
	BrokersErr error
	// Oldest is the own timestamp of the oldest record waiting beyond the checkpoint that the
	// brokers still hold; zero when none waits or it could not be read.
	Oldest time.Time
}

// Diagnose reads the named pipeline's checkpoint against the brokers (Read) and returns its
// report.
func (c *Checkpoints) Diagnose(ctx context.Context, name string) (*spark.Report, error) {
	r, err := c.Read(ctx, name)
	return r.Report, err
}

// Read reads the named pipeline's checkpoint and, when the pipeline names a Kafka cluster and
// the brokers answer within brokerTimeout, what the brokers hold of the documented topics and
// of the topics the checkpoint reads, with the timestamp of the oldest record waiting beyond
// the checkpoint (its stall clock starts there, not at the newest commit).
func (c *Checkpoints) Read(ctx context.Context, name string) (CheckpointReading, error) {
	p, ok := c.Config.Pipeline(name)
	if !ok {
		return CheckpointReading{}, fmt.Errorf("unknown pipeline %q", name)
	}
	if p.Checkpoint.Location == "" {
		return CheckpointReading{}, fmt.Errorf("pipeline %s has no checkpoint.location", name)
	}
	st, err := storage.Open(p.Checkpoint.Location, StorageOptions(c.Config, c.Getenv))
	if err != nil {
		return CheckpointReading{}, err
	}
	var out CheckpointReading
	opts := spark.Options{StaleAfter: c.staleAfter(ctx, p)}
	if p.Kafka.Enabled() && c.Kafka != nil {
		kctx, cancel := context.WithTimeout(ctx, cmp.Or(c.BrokerTimeout, brokerTimeout))
		out.Brokers, opts.WaitingSince, out.BrokersErr = c.brokers(kctx, st, p)
		out.Oldest = opts.WaitingSince
		cancel()
		if out.Brokers != nil {
			opts.LogEndOffsets, opts.LogStartOffsets = rangeEnds(out.Brokers)
		}
	}
	out.Report, err = spark.Diagnose(ctx, st, opts)
	return out, err
}

// brokers reads the ranges of the documented topics and of those the newest commit read, and
// the timestamp of the oldest record waiting beyond that commit's offsets.
func (c *Checkpoints) brokers(ctx context.Context, st storage.Store, p *config.Pipeline) (*kafka.TopicRanges, time.Time, error) {
	prog, _ := spark.ReadProgress(ctx, st, nil)
	topics := slices.Clone(p.Kafka.Topics)
	if prog != nil {
		for t := range prog.Offsets {
			if !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
	}
	tr, err := c.Kafka.TopicRanges(ctx, p.Kafka.Cluster, topics...)
	if err != nil || prog == nil || prog.Batch < 0 {
		return tr, time.Time{}, err
	}
	var qs []kafka.RecordQuery
	for t, parts := range prog.Offsets {
		for part, off := range parts {
			r, ok := tr.Partitions[kafka.TopicPartition{Topic: t, Partition: part}]
			if !ok || r.End < 0 || r.End-max(off, r.Start) <= 0 {
				continue
			}
			qs = append(qs, kafka.RecordQuery{Topic: t, Partition: part, Offset: max(off, r.Start)})
		}
	}
	if len(qs) == 0 {
		return tr, time.Time{}, nil
	}
	times, _, terr := c.Kafka.RecordTimes(ctx, p.Kafka.Cluster, qs, recordTimeBytes)
	if terr != nil {
		return tr, time.Time{}, nil
	}
	var oldest time.Time
	for _, t := range times {
		if !t.At.IsZero() && (oldest.IsZero() || t.At.Before(oldest)) {
			oldest = t.At
		}
	}
	return tr, oldest, nil
}

// rangeEnds are the known log ends and log starts of tr by topic and partition.
func rangeEnds(tr *kafka.TopicRanges) (ends, starts spark.KafkaOffsets) {
	ends, starts = spark.KafkaOffsets{}, spark.KafkaOffsets{}
	for tp, r := range tr.Partitions {
		if r.End >= 0 {
			if ends[tp.Topic] == nil {
				ends[tp.Topic] = map[int32]int64{}
			}
			ends[tp.Topic][tp.Partition] = r.End
		}
		if r.Start >= 0 {
			if starts[tp.Topic] == nil {
				starts[tp.Topic] = map[int32]int64{}
			}
			starts[tp.Topic][tp.Partition] = r.Start
		}
	}
	return ends, starts
}
