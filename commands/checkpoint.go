package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/spark"
)

// Checkpoints reads a pipeline's Spark checkpoint (with the brokers' log ends when the
// pipeline names a Kafka cluster).
type Checkpoints interface {
	Diagnose(ctx context.Context, pipeline string) (*spark.Report, error)
}

// RegisterCheckpoint adds `checkpoint`.
func (h *Handler) RegisterCheckpoint(c Checkpoints) {
	h.Register(&Command{Path: "checkpoint", Args: "PIPELINE",
		Min: 1, Max: 1, Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			r, err := c.Diagnose(ctx, args[0])
			if r == nil {
				return Reply{}, err
			}
			var codes []string
			for _, f := range r.Findings {
				codes = append(codes, string(f.Code))
			}
			text := fmt.Sprintf("Checkpoint of %s: %s", args[0], strings.Join(codes, ", "))
			return Reply{Text: text, Sections: []Section{{Lines: checkpointLines(r), Pre: true}}}, nil
		}})
}
