package spark

import (
	"context"
	"fmt"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// Progress is how far a query got, read cheaply enough for every sampling round: its newest
// committed batch, when that batch was committed, and the Kafka offsets the batch read up to
// (the exclusive end: the first record the query has not processed).
type Progress struct {
	Batch       int64     // the newest commits/<N>; -1 when the query committed nothing
	CommittedAt time.Time // commits/<N>'s modification time
	// Offsets are the Kafka sources of offsets/<N>, merged (the lower offset wins when two
	// sources read one partition); nil when the batch read no Kafka source.
	Offsets KafkaOffsets
	// Ops counts the storage calls this read made (lists, stats, reads).
	Ops int
}

// maxProgressBytes bounds the read of one offsets file (a topic of 10,000 partitions is about
// 200 KiB).
const maxProgressBytes = 4 << 20

// ReadProgress lists commits/ by name, stats the newest commit and reads offsets/<N> of that
// batch: three storage calls. With last from the previous read and the same newest batch, the
// offsets are not read again (two calls).
func ReadProgress(ctx context.Context, store Store, last *Progress) (*Progress, error) {
	p := &Progress{Batch: -1}
	entries, err := storage.ListNames(ctx, store, "commits")
	p.Ops++
	if err != nil {
		if storage.Class(err) == storage.ClassNotFound {
			return p, nil
		}
		return p, fmt.Errorf("list commits/: %w", err)
	}
	for _, e := range entries {
		if id, ok := ParseBatchID(e.Name); ok && !e.IsDir && id > p.Batch {
			p.Batch = id
		}
	}
	if p.Batch < 0 {
		return p, nil
	}
	name := fmt.Sprintf("commits/%d", p.Batch)
	st, err := store.Stat(ctx, name)
	p.Ops++
	if err != nil {
		return p, fmt.Errorf("stat %s: %w", name, err)
	}
	p.CommittedAt = st.ModTime
	if last != nil && last.Batch == p.Batch && last.Offsets != nil {
		p.Offsets = last.Offsets
		return p, nil
	}
	file := fmt.Sprintf("offsets/%d", p.Batch)
	data, err := storage.ReadAll(ctx, store, file, maxProgressBytes)
	p.Ops++
	if err != nil {
		return p, fmt.Errorf("read %s: %w", file, err)
	}
	seq, err := ParseOffsets(file, data)
	if err != nil {
		return p, err
	}
	for _, src := range seq.Sources {
		if src.Kind != SourceKafka {
			continue
		}
		if p.Offsets == nil {
			p.Offsets = KafkaOffsets{}
		}
		for topic, parts := range src.Kafka {
			if p.Offsets[topic] == nil {
				p.Offsets[topic] = map[int32]int64{}
			}
			for part, off := range parts {
				if cur, ok := p.Offsets[topic][part]; !ok || off < cur {
					p.Offsets[topic][part] = off
				}
			}
		}
	}
	return p, nil
}

// Batches is when the newest committed batch was planned, and the batch planned after it that
// has not committed yet (Spark writes offsets/<N> when it plans batch N and commits/<N> when
// the batch is done, so the time between the two files is how long the batch took).
type Batches struct {
	Batch int64 // the newest committed batch (Progress.Batch)
	// PlannedAt is offsets/<Batch>'s modification time (zero: unknown); Took is the batch's
	// duration, CommittedAt − PlannedAt (0: unknown).
	PlannedAt time.Time
	Took      time.Duration
	// Running is the batch planned but not committed, offsets/<Batch+1> (-1: none: the query
	// is between batches, as a quiet topic's query always is); RunningSince its planning.
	Running      int64
	RunningSince time.Time
	// Ops counts the storage calls this read made.
	Ops int
}

// ReadBatches reads, for p from ReadProgress, when its batch was planned (one stat, only when
// the batch is new since last) and whether the next batch is running (one stat).
func ReadBatches(ctx context.Context, store Store, p *Progress, last *Batches) (*Batches, error) {
	b := &Batches{Batch: p.Batch, Running: -1}
	if p.Batch >= 0 {
		if last != nil && last.Batch == p.Batch && !last.PlannedAt.IsZero() {
			b.PlannedAt = last.PlannedAt
		} else {
			name := fmt.Sprintf("offsets/%d", p.Batch)
			st, err := store.Stat(ctx, name)
			b.Ops++
			if err != nil {
				return b, fmt.Errorf("stat %s: %w", name, err)
			}
			b.PlannedAt = st.ModTime
		}
		if !p.CommittedAt.IsZero() && p.CommittedAt.After(b.PlannedAt) {
			b.Took = p.CommittedAt.Sub(b.PlannedAt)
		}
	}
	name := fmt.Sprintf("offsets/%d", p.Batch+1)
	st, err := store.Stat(ctx, name)
	b.Ops++
	switch {
	case storage.Class(err) == storage.ClassNotFound:
	case err != nil:
		return b, fmt.Errorf("stat %s: %w", name, err)
	default:
		b.Running, b.RunningSince = p.Batch+1, st.ModTime
	}
	return b, nil
}
