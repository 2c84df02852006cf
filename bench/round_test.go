package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The sampling round at scale (issue 16): 200 pipelines on one 3-broker kfake cluster, each
// with a topic of 10 partitions and a group of its own.
const (
	roundPipelines  = 200
	roundPartitions = 10
)

var (
	roundOnce    sync.Once
	roundCluster *lagCluster
	roundErr     error
)

func roundTopic(i int) string { return fmt.Sprintf("round-%03d", i) }
func roundGroup(i int) string { return fmt.Sprintf("round-group-%03d", i) }

// roundClusterOf builds the cluster once per process: 2 records in every partition, every
// group committed at 1 (a lag of 1 per partition).
func roundClusterOf(b *testing.B) *lagCluster {
	b.Helper()
	roundOnce.Do(func() {
		topics := make([]string, roundPipelines)
		for i := range topics {
			topics[i] = roundTopic(i)
		}
		kc, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(roundPartitions, topics...))
		if err != nil {
			roundErr = err
			return
		}
		cleanups = append(cleanups, kc.Close)
		cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			roundErr = err
			return
		}
		defer cl.Close()
		ctx := context.Background()
		var recs []*kgo.Record
		for _, t := range topics {
			for p := range int32(roundPartitions) {
				recs = append(recs, &kgo.Record{Topic: t, Partition: p, Value: []byte("v")}, &kgo.Record{Topic: t, Partition: p, Value: []byte("v")})
			}
		}
		if roundErr = cl.ProduceSync(ctx, recs...).FirstErr(); roundErr != nil {
			return
		}
		adm := kadm.NewClient(cl)
		for i, t := range topics {
			offsets := kadm.Offsets{}
			for p := range int32(roundPartitions) {
				offsets.Add(kadm.Offset{Topic: t, Partition: p, At: 1, LeaderEpoch: -1})
			}
			if roundErr = adm.CommitAllOffsets(ctx, roundGroup(i), offsets); roundErr != nil {
				return
			}
		}
		roundCluster = &lagCluster{addrs: kc.ListenAddrs()}
		kc.ControlKey(-1, roundCluster.count)
	})
	if roundErr != nil {
		b.Fatal(roundErr)
	}
	return roundCluster
}

// BenchmarkSamplingRound is one sampling round of 200 pipelines (kafka.Sampler.Round, what
// detection runs every kafka.sample_interval) with a warm client: its time, and the Kafka
// requests it makes, in all and by kind. The requests are bounded by the brokers (one
// ListOffsets per leader, one DescribeGroups and one OffsetFetch per coordinator), not by the
// pipelines.
func BenchmarkSamplingRound(b *testing.B) {
	c := roundClusterOf(b)
	cs, err := kafka.NewClusters([]kafka.ClusterOptions{{Name: "bench", Brokers: c.addrs, Version: "3.6.0", Timeout: 10 * time.Second}},
		kafka.ClustersOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	ps := make([]kafka.Pipeline, roundPipelines)
	for i := range ps {
		ps[i] = kafka.Pipeline{Name: fmt.Sprintf("p%03d", i), Cluster: "bench", Topics: []string{roundTopic(i)}, Group: roundGroup(i), AllowedLag: 1}
	}
	m, err := kafka.NewMonitor(cs, kafka.NewMemoryStore(kafka.MaxSamples), ps, kafka.MonitorOptions{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := kafka.NewSampler(m, kafka.SamplerOptions{Interval: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// Connections, metadata, coordinators; the first round also samples the other groups of
	// topics whose group looks idle (no earlier round to compare with).
	for range 2 {
		if _, err := s.Round(ctx); err != nil {
			b.Fatal(err)
		}
	}
	c.reset()
	var r *kafka.Round
	for b.Loop() {
		if r, err = s.Round(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	c.report(b)
	b.ReportMetric(float64(c.requests.Load())/float64(b.N)/roundPipelines, "requests/pipeline")
	if len(r.Pipelines) != roundPipelines {
		b.Fatalf("%d pipelines in the round, want %d", len(r.Pipelines), roundPipelines)
	}
	for _, p := range r.Pipelines {
		if p.Err != nil || len(p.Partitions) != roundPartitions {
			b.Fatalf("%s: err %v, %d partitions", p.Pipeline, p.Err, len(p.Partitions))
		}
		for _, pl := range p.Partitions {
			if pl.Lag != 1 {
				b.Fatalf("%s %s/%d: lag %d, want 1", p.Pipeline, pl.Topic, pl.Partition, pl.Lag)
			}
		}
	}
}

// BenchmarkCheckpointProgress is what a round reads of 200 pipelines' checkpoints (local
// disk, 100 batches each): spark.ReadProgress of each, given the previous read, 8 at a time
// as detection does; its time and the storage calls per pipeline (a list of commits/ and a
// stat of the newest commit; offsets/<N> only when the batch is new).
func BenchmarkCheckpointProgress(b *testing.B) {
	root := progressDirs(b)
	stores := make([]*countingStore, roundPipelines)
	last := make([]*spark.Progress, roundPipelines)
	for i := range stores {
		st, err := storage.Open(filepath.Join(root, fmt.Sprint(i)), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		stores[i] = &countingStore{Store: st}
	}
	ctx := context.Background()
	read := func() {
		sem := make(chan struct{}, 8)
		var wg sync.WaitGroup
		for i := range stores {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				p, err := spark.ReadProgress(ctx, stores[i], last[i])
				if err != nil {
					b.Error(err)
					return
				}
				last[i] = p
			})
		}
		wg.Wait()
	}
	read() // the first read of each also reads offsets/<N>
	for _, s := range stores {
		s.reads.Store(0)
		s.lists.Store(0)
		s.nameLists.Store(0)
		s.stats.Store(0)
	}
	for b.Loop() {
		read()
	}
	b.StopTimer()
	var calls int64
	for _, s := range stores {
		calls += s.reads.Load() + s.lists.Load() + s.nameLists.Load() + s.stats.Load()
	}
	b.ReportMetric(float64(calls)/float64(b.N)/roundPipelines, "storage-calls/pipeline")
	for i, p := range last {
		if p == nil || p.Batch != 99 || len(p.Offsets) != 1 {
			b.Fatalf("pipeline %d: progress %+v", i, p)
		}
	}
}

var (
	progressOnce sync.Once
	progressRoot string
	progressErr  error
)

func progressDirs(b *testing.B) string {
	b.Helper()
	progressOnce.Do(func() {
		progressRoot, progressErr = os.MkdirTemp("", "streamwatch-bench-progress")
		if progressErr != nil {
			return
		}
		cleanups = append(cleanups, func() { _ = os.RemoveAll(progressRoot) })
		for i := range roundPipelines {
			spec := sparktest.Spec{LatestBatch: 99, LatestCommit: 99,
				Topics: []sparktest.Topic{{Name: roundTopic(i), Partitions: roundPartitions, RecordsPerBatch: 10}}}
			if progressErr = sparktest.WriteCheckpoint(filepath.Join(progressRoot, fmt.Sprint(i)), spec); progressErr != nil {
				return
			}
		}
	})
	if progressErr != nil {
		b.Fatal(progressErr)
	}
	return progressRoot
}
