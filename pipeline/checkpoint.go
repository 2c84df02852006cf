package pipeline

import (
	"context"
	"fmt"
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

// brokerTimeout bounds the read of the brokers' log ends a checkpoint is compared with.
const brokerTimeout = 10 * time.Second

// Checkpoints reads pipelines' Spark checkpoints and compares them with the brokers: the
// records the query has not planned yet are the log ends minus the newest offsets file.
type Checkpoints struct {
	Config *config.Config
	Getenv func(string) string
	// Kafka reads the brokers' log ends; nil, or a pipeline without Kafka, leaves the
	// comparison out.
	Kafka Offsets
}

// Diagnose reads the named pipeline's checkpoint, with the log ends of its topics when the
// pipeline names a Kafka cluster and the brokers answer within brokerTimeout.
func (c *Checkpoints) Diagnose(ctx context.Context, name string) (*spark.Report, error) {
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
	opts := spark.Options{StaleAfter: p.Checkpoint.StaleAfter}
	if p.Kafka.Enabled() && c.Kafka != nil {
		kctx, cancel := context.WithTimeout(ctx, brokerTimeout)
		if off, err := c.Kafka.Offsets(kctx, p.Kafka.Cluster, p.Kafka.Group, p.Kafka.Topics...); err == nil {
			opts.LogEndOffsets = logEnds(off)
		}
		cancel()
	}
	return spark.Diagnose(ctx, st, opts)
}

// logEnds are the known log ends of off by topic and partition.
func logEnds(off *kafka.Offsets) spark.KafkaOffsets {
	out := spark.KafkaOffsets{}
	for _, pl := range off.Partitions {
		if pl.LogEnd < 0 {
			continue
		}
		if out[pl.Topic] == nil {
			out[pl.Topic] = map[int32]int64{}
		}
		out[pl.Topic][pl.Partition] = pl.LogEnd
	}
	return out
}
