package bench_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// checkpointSpec is a healthy checkpoint of n batches in offsets/ and commits/ (with .crc
// sidecars, as Hadoop's local filesystem leaves them), a 24-partition Kafka source and 200
// state partitions keeping 3 versions: 4n + 1,200 files or so.
func checkpointSpec(batches int) sparktest.Spec {
	return sparktest.Spec{
		FirstBatch: 100, LatestBatch: 100 + int64(batches) - 1, LatestCommit: 100 + int64(batches) - 1,
		Topics:    []sparktest.Topic{{Name: "events", Partitions: 24, RecordsPerBatch: 1000}},
		State:     &sparktest.State{Partitions: 200, Metadata: true, Retained: 3},
		Checksums: true,
	}
}

var (
	checkpointMu   sync.Mutex
	checkpointDirs = map[int]string{}
)

// checkpointDir writes the checkpoint of n batches to local disk once per process; writing
// 40,000 files is not what is measured.
func checkpointDir(b *testing.B, batches int) string {
	b.Helper()
	checkpointMu.Lock()
	defer checkpointMu.Unlock()
	if dir, ok := checkpointDirs[batches]; ok {
		return dir
	}
	dir, err := os.MkdirTemp("", "streamwatch-bench-checkpoint")
	if err != nil {
		b.Fatal(err)
	}
	cleanups = append(cleanups, func() { _ = os.RemoveAll(dir) })
	if err := sparktest.WriteCheckpoint(dir, checkpointSpec(batches)); err != nil {
		b.Fatal(err)
	}
	checkpointDirs[batches] = dir
	return dir
}

// countingStore counts what the diagnosis asks of the store.
type countingStore struct {
	storage.Store
	reads, lists, nameLists, stats atomic.Int64
}

func (c *countingStore) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	c.reads.Add(1)
	return c.Store.Read(ctx, name)
}

func (c *countingStore) List(ctx context.Context, dir string) ([]storage.Entry, error) {
	c.lists.Add(1)
	return c.Store.List(ctx, dir)
}

func (c *countingStore) Stat(ctx context.Context, name string) (storage.Entry, error) {
	c.stats.Add(1)
	return c.Store.Stat(ctx, name)
}

// ListNames keeps the local store's cheap listing visible through the wrapper.
func (c *countingStore) ListNames(ctx context.Context, dir string) ([]storage.Entry, error) {
	c.nameLists.Add(1)
	return storage.ListNames(ctx, c.Store, dir)
}

// BenchmarkCheckpoint is the time to diagnose a healthy checkpoint of 1,000 or 10,000 batches
// on local disk (page cache warm: the files were just written), and how many files the
// diagnosis reads, directories it lists and entries it stats.
func BenchmarkCheckpoint(b *testing.B) {
	for _, batches := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("batches=%d", batches), func(b *testing.B) {
			dir := checkpointDir(b, batches)
			local, err := storage.Open(dir, storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			cs := &countingStore{Store: local}
			spec := checkpointSpec(batches)
			latest := spec.CommittedAt(spec.LatestCommit)
			opts := spark.Options{Now: func() time.Time { return latest }}
			var r *spark.Report
			for b.Loop() {
				if r, err = spark.Diagnose(context.Background(), cs, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if !r.Has(spark.CodeOK) || r.Offsets.Batches != batches || r.Commits.Batches != batches {
				b.Fatalf("diagnosis of a healthy checkpoint: %+v", r.Findings)
			}
			n := float64(b.N)
			b.ReportMetric(float64(cs.reads.Load())/n, "files-read/op")
			b.ReportMetric(float64(cs.lists.Load()+cs.nameLists.Load())/n, "listings/op")
			b.ReportMetric(float64(cs.stats.Load())/n, "stats/op")
		})
	}
}
