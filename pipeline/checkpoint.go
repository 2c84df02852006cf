package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// Offsets reads a group's offsets on topics in a named cluster (kafka.Clusters).
type Offsets interface {
	Offsets(ctx context.Context, cluster, group string, topics ...string) (*kafka.Offsets, error)
}

// Brokers reads what the brokers hold: each partition's earliest and latest offset, and the
// timestamps of records (kafka.Clusters).
type Brokers interface {
	LogRanges(ctx context.Context, cluster string, topics ...string) (*kafka.LogRanges, error)
	RecordTimes(ctx context.Context, cluster string, qs []kafka.RecordQuery, perPartition int32) (map[kafka.TopicPartition]kafka.RecordTime, []kafka.Unavailable, error)
}

// brokerTimeout bounds the read of the brokers' log ends a checkpoint is compared with.
const brokerTimeout = 10 * time.Second

// Checkpoints reads pipelines' Spark checkpoints and compares them with the brokers: the
// records the query has not planned yet are the log ends minus the newest offsets file, and
// only those the brokers still hold.
type Checkpoints struct {
	Config *config.Config
	Getenv func(string) string
	// Kafka reads what the brokers hold; nil, or a pipeline without Kafka, leaves the
	// comparison out.
	Kafka Brokers
}

// CheckpointReading is a pipeline's checkpoint read against the brokers.
type CheckpointReading struct {
	Report *spark.Report
	// Brokers is what the brokers hold of the topics the checkpoint reads and the documented
	// ones; nil when not read (BrokersErr says why, when they were asked).
	Brokers    *kafka.LogRanges
	BrokersErr error
	// Oldest is the own timestamp of the oldest record that waits beyond the checkpoint and
	// that the brokers still hold; zero when none waits or it could not be read.
	Oldest time.Time
}

// Diagnose reads the named pipeline's checkpoint, with the log ends and starts of its topics
// when the pipeline names a Kafka cluster and the brokers answer within brokerTimeout.
func (c *Checkpoints) Diagnose(ctx context.Context, name string) (*spark.Report, error) {
	rd, err := c.Read(ctx, name)
	if rd == nil {
		return nil, err
	}
	return rd.Report, err
}

// Read reads the named pipeline's checkpoint against the brokers: what they hold of the
// topics the checkpoint reads and of the documented ones, and when the oldest record still
// waiting was written.
func (c *Checkpoints) Read(ctx context.Context, name string) (*CheckpointReading, error) {
	p, ok := c.Config.Pipeline(name)
	if !ok {
		return nil, fmt.Errorf("unknown pipeline %q", name)
	}
	if p.Checkpoint.Location == "" {
		return nil, fmt.Errorf("pipeline %s has no checkpoint.location", name)
	}
	st, err := storage.Open(p.Checkpoint.Location, StorageOptions(c.Config, c.Getenv))
	if err != nil {
		return nil, err
	}
	rd := &CheckpointReading{}
	opts := spark.Options{StaleAfter: p.Checkpoint.StaleAfter}
	withKafka := p.Kafka.Enabled() && c.Kafka != nil
	var once sync.Once
	ranges := func(ctx context.Context, topics []string) {
		once.Do(func() {
			kctx, cancel := context.WithTimeout(ctx, brokerTimeout)
			defer cancel()
			all := slices.Clone(p.Kafka.Topics)
			for _, t := range topics {
				if !slices.Contains(all, t) {
					all = append(all, t)
				}
			}
			rd.Brokers, rd.BrokersErr = c.Kafka.LogRanges(kctx, p.Kafka.Cluster, all...)
		})
	}
	if withKafka {
		opts.Brokers = func(ctx context.Context, topics []string) (spark.KafkaOffsets, spark.KafkaOffsets) {
			ranges(ctx, topics)
			return brokerOffsets(rd.Brokers)
		}
		opts.Oldest = func(ctx context.Context, waiting []spark.KafkaPartition) time.Time {
			return c.oldest(ctx, p.Kafka.Cluster, waiting)
		}
	}
	rd.Report, err = spark.Diagnose(ctx, st, opts)
	if withKafka && err == nil {
		ranges(ctx, nil) // a checkpoint without Kafka offsets: the documented topics still
		rd.Oldest = rd.Report.OldestWaiting
	}
	return rd, err
}

// brokerOffsets are the log ends and starts of r, as the checkpoint reader takes them.
func brokerOffsets(r *kafka.LogRanges) (ends, starts spark.KafkaOffsets) {
	if r == nil {
		return nil, nil
	}
	ends, starts = spark.KafkaOffsets{}, spark.KafkaOffsets{}
	for _, t := range r.Topics {
		if !t.Exists {
			continue
		}
		ends[t.Topic], starts[t.Topic] = map[int32]int64{}, map[int32]int64{}
		for _, p := range t.Partitions {
			if p.LogEnd >= 0 {
				ends[t.Topic][p.Partition] = p.LogEnd
			}
			if p.LogStart >= 0 {
				starts[t.Topic][p.Partition] = p.LogStart
			}
		}
	}
	return ends, starts
}

// oldest fetches the timestamps of the first record the brokers hold beyond the checkpoint
// on every partition where records wait (one Fetch per leader), and returns the oldest.
func (c *Checkpoints) oldest(ctx context.Context, cluster string, waiting []spark.KafkaPartition) time.Time {
	var qs []kafka.RecordQuery
	for _, row := range waiting {
		from := row.LogEnd - row.Pending // the checkpoint's offset, or the log start above it
		qs = append(qs, kafka.RecordQuery{Topic: row.Topic, Partition: row.Partition, Offset: from})
	}
	if len(qs) == 0 {
		return time.Time{}
	}
	kctx, cancel := context.WithTimeout(ctx, brokerTimeout)
	defer cancel()
	times, _, err := c.Kafka.RecordTimes(kctx, cluster, qs, recordTimeBytes)
	if err != nil {
		return time.Time{}
	}
	var oldest time.Time
	for _, t := range times {
		if !t.At.IsZero() && (oldest.IsZero() || t.At.Before(oldest)) {
			oldest = t.At
		}
	}
	return oldest
}
