package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/state"
)

// seedProgress writes the progress samples streamwatch's sampling rounds (every 30 s) would
// have kept of the pipeline since its query started, 45 minutes before the demo (from its
// second batch on): its batches read the 40 replies a partition that waited, the query died
// writing batch 4, and 20 minutes ago 30 more replies a partition arrived that nothing reads. A chart needs that
// history; the demo's own rounds add to it while it plays.
func (w *world) seedProgress(ctx context.Context, now time.Time) error {
	rdb := redis.NewClient(&redis.Options{Addr: w.redis.Addr()})
	defer rdb.Close()
	p := state.NewProgress(state.New(rdb, keyPrefix), 6*time.Hour)
	spec := history(now)
	arrived := now.Add(-20 * time.Minute)
	// From just after batch 1's commit: the replies batch 0 read are history already.
	for at := spec.CommittedAt(1).Add(15 * time.Second); at.Before(now.Add(-5 * time.Second)); at = at.Add(30 * time.Second) {
		s := state.ProgressSample{At: at, Batch: -1, Oldest: -1}
		read := int64(0) // records a partition the checkpoint has read
		for b := int64(0); b < historyBatches; b++ {
			if c := spec.CommittedAt(b); !c.After(at) {
				s.Batch, s.CommittedAt, read = b, c, (b+1)*recordsPerBatch
			}
		}
		waiting := (historyBatches*recordsPerBatch - read) * partitions
		oldest := at.Sub(now.Add(-50 * time.Minute))
		if !at.Before(arrived) {
			waiting += 30 * partitions
			if waiting == 30*partitions {
				oldest = at.Sub(arrived)
			}
		}
		if waiting == 0 {
			oldest = 0
		}
		s.Waiting, s.GroupLag, s.Oldest = waiting, waiting, oldest
		if err := p.Record(ctx, map[string]state.ProgressSample{pipelineName: s}); err != nil {
			return fmt.Errorf("seed the progress samples: %w", err)
		}
	}
	return nil
}
