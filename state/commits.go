package state

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Commit is one checkpoint commit a sampling round saw: its batch, when it was written, and
// how long the batch took (0: unknown).
type Commit struct {
	Batch int64
	At    time.Time
	Took  time.Duration
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
	member := strconv.FormatInt(c.Batch, 10)
	if c.Took > 0 {
		member += "/" + strconv.FormatInt(c.Took.Milliseconds(), 10)
	}
	pipe := s.rdb.TxPipeline()
	pipe.ZAddNX(ctx, k, redis.Z{Score: float64(ms(c.At)), Member: member})
	pipe.ZRemRangeByRank(ctx, k, 0, -commitHistory-1)
	pipe.PExpire(ctx, k, commitHistoryTTL)
	_, err := pipe.Exec(ctx)
	return wrap("note commit of "+pipeline, err)
}

// CommitHistory returns the pipeline's commits, oldest first, one per batch (its first time,
// and its duration when a note had it).
func (s *Store) CommitHistory(ctx context.Context, pipeline string) ([]Commit, error) {
	zs, err := s.rdb.ZRangeWithScores(ctx, s.key("commits", pipeline), 0, -1).Result()
	if err != nil {
		return nil, wrap("read commits of "+pipeline, err)
	}
	byBatch := make(map[int64]Commit, len(zs))
	for _, z := range zs {
		batch, took, _ := strings.Cut(str(z.Member), "/")
		b, err := strconv.ParseInt(batch, 10, 64)
		if err != nil {
			continue
		}
		c := Commit{Batch: b, At: fromMS(int64(z.Score))}
		if ms, err := strconv.ParseInt(took, 10, 64); err == nil && ms > 0 {
			c.Took = time.Duration(ms) * time.Millisecond
		}
		if prev, ok := byBatch[b]; ok {
			// A batch noted once without its duration and once with it has two members.
			if prev.At.Before(c.At) {
				c.At = prev.At
			}
			c.Took = max(prev.Took, c.Took)
		}
		byBatch[b] = c
	}
	out := make([]Commit, 0, len(byBatch))
	for _, c := range byBatch {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Batch < out[j].Batch })
	return out, nil
}
