package state

import (
	"context"
	"sort"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Commit is one checkpoint commit a sampling round saw: its batch and when it was written.
type Commit struct {
	Batch int64
	At    time.Time
}

// commitHistory is how many commits a pipeline's history keeps, and for how long: enough for
// a robust batch interval over the last hours of a query whose trigger is minutes apart.
const (
	commitHistory    = 100
	commitHistoryTTL = 24 * time.Hour
)

// NoteCommit adds a commit to the pipeline's history (P:commits:<pipeline>), the newest 100
// for a day; a batch seen before keeps its first time.
func (s *Store) NoteCommit(ctx context.Context, pipeline string, c Commit) error {
	k := s.key("commits", pipeline)
	pipe := s.rdb.TxPipeline()
	pipe.ZAddNX(ctx, k, redis.Z{Score: float64(ms(c.At)), Member: strconv.FormatInt(c.Batch, 10)})
	pipe.ZRemRangeByRank(ctx, k, 0, -commitHistory-1)
	pipe.PExpire(ctx, k, commitHistoryTTL)
	_, err := pipe.Exec(ctx)
	return wrap("note commit of "+pipeline, err)
}

// CommitHistory returns the pipeline's commits, oldest first.
func (s *Store) CommitHistory(ctx context.Context, pipeline string) ([]Commit, error) {
	zs, err := s.rdb.ZRangeWithScores(ctx, s.key("commits", pipeline), 0, -1).Result()
	if err != nil {
		return nil, wrap("read commits of "+pipeline, err)
	}
	out := make([]Commit, 0, len(zs))
	for _, z := range zs {
		b, err := strconv.ParseInt(str(z.Member), 10, 64)
		if err == nil {
			out = append(out, Commit{Batch: b, At: fromMS(int64(z.Score))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Batch < out[j].Batch })
	return out, nil
}
