package commands

import (
	"context"

	"github.com/streamwatch/streamwatch/integrations/spark"
)

// Checkpoints reads a pipeline's Spark checkpoint (with the brokers' log ends when the
// pipeline names a Kafka cluster).
type Checkpoints interface {
	Diagnose(ctx context.Context, pipeline string) (*spark.Report, error)
}

// RegisterCheckpoint adds `checkpoint`.
func (h *Handler) RegisterCheckpoint(c Checkpoints) {
	h.Register(&Command{Path: "checkpoint", Args: "PIPELINE", Summary: "read the Spark checkpoint: batches, offsets, pending records, findings",
		Min: 1, Max: 1, Example: "checkpoint sms-replies", Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			r, err := c.Diagnose(ctx, args[0])
			if r == nil {
				return Reply{}, err
			}
			return checkpointReply(args[0], r), nil
		}})
}
