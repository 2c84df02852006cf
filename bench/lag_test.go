package bench_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	lagTopic = "bench"
	lagGroup = "bench-group"
)

// lagCluster is a 3-broker kfake cluster with one topic of n partitions, 2 records in each,
// and lagGroup committed at offset 1 everywhere: a lag of 1 per partition. It counts every
// request the brokers receive, of every client, by API key.
type lagCluster struct {
	addrs    []string
	requests atomic.Int64
	byKey    sync.Map // int16 → *atomic.Int64
}

var (
	lagMu       sync.Mutex
	lagClusters = map[int]*lagCluster{}
)

func (c *lagCluster) count(req kmsg.Request) (kmsg.Response, error, bool) {
	c.requests.Add(1)
	n, _ := c.byKey.LoadOrStore(req.Key(), new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return nil, nil, false // observe only: kfake answers as usual
}

func (c *lagCluster) reset() {
	c.requests.Store(0)
	c.byKey.Range(func(_, v any) bool { v.(*atomic.Int64).Store(0); return true })
}

func (c *lagCluster) of(key kmsg.Key) int64 {
	if n, ok := c.byKey.Load(int16(key)); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// report puts the requests of the timed loop into the benchmark's output.
func (c *lagCluster) report(b *testing.B) {
	n := float64(b.N)
	b.ReportMetric(float64(c.requests.Load())/n, "requests/op")
	for _, k := range []kmsg.Key{kmsg.ListOffsets, kmsg.OffsetFetch, kmsg.DescribeGroups, kmsg.Metadata, kmsg.Fetch} {
		b.ReportMetric(float64(c.of(k))/n, k.Name()+"/op")
	}
}

// clusterOf builds the cluster for n partitions once per process.
func clusterOf(b *testing.B, partitions int) *lagCluster {
	b.Helper()
	lagMu.Lock()
	defer lagMu.Unlock()
	if c, ok := lagClusters[partitions]; ok {
		return c
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(int32(partitions), lagTopic))
	if err != nil {
		b.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		kc.Close()
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	recs := make([]*kgo.Record, 0, 2*partitions)
	offsets := kadm.Offsets{}
	for p := range int32(partitions) {
		recs = append(recs, &kgo.Record{Topic: lagTopic, Partition: p, Value: []byte("v")},
			&kgo.Record{Topic: lagTopic, Partition: p, Value: []byte("v")})
		offsets.Add(kadm.Offset{Topic: lagTopic, Partition: p, At: 1, LeaderEpoch: -1})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		kc.Close()
		b.Fatal(err)
	}
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, lagGroup, offsets); err != nil {
		kc.Close()
		b.Fatal(err)
	}
	c := &lagCluster{addrs: kc.ListenAddrs()}
	kc.ControlKey(-1, c.count)
	lagClusters[partitions] = c
	cleanups = append(cleanups, kc.Close)
	return c
}

// BenchmarkLag is the time to one consumer-lag report of one group on one topic of 1,000 or
// 10,000 partitions (3 brokers), with a warm client, and the Kafka requests each report makes:
//
//   - streamwatch: kafka.Monitor.PipelineLag, what `lag PIPELINE` runs, with 60 stored samples
//     (as the sampler leaves them): log ends, commits, the group, exact ages of the 5
//     most-lagging partitions, statuses with evidence;
//   - kadm: franz-go's kadm.Lag on the same group (describe, commits, log ends);
//   - sarama-naive: sarama's ListConsumerGroupOffsets, then client.GetOffset per partition.
func BenchmarkLag(b *testing.B) {
	for _, partitions := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("partitions=%d", partitions), func(b *testing.B) {
			b.Run("streamwatch", func(b *testing.B) { lagStreamwatch(b, partitions) })
			b.Run("kadm", func(b *testing.B) { lagKadm(b, partitions) })
			b.Run("sarama-naive", func(b *testing.B) { lagSaramaNaive(b, partitions) })
		})
	}
}

func lagStreamwatch(b *testing.B, partitions int) {
	c := clusterOf(b, partitions)
	now := time.Now()
	store := kafka.NewMemoryStore(kafka.MaxSamples)
	key := kafka.SampleKey{Cluster: "bench", Group: lagGroup, Topic: lagTopic}
	for i := range kafka.MaxSamples {
		at := now.Add(-time.Duration(kafka.MaxSamples-i) * 30 * time.Second)
		committed, end := int64(0), int64(1)
		if i >= kafka.MaxSamples/2 {
			committed, end = 1, 2
		}
		round := make([]kafka.PartitionSample, partitions)
		for p := range round {
			round[p] = kafka.PartitionSample{Partition: int32(p), Committed: committed, LogEnd: end, UnixMilli: at.UnixMilli()}
		}
		if err := store.Append(context.Background(), key, round); err != nil {
			b.Fatal(err)
		}
	}
	cs, err := kafka.NewClusters([]kafka.ClusterOptions{{Name: "bench", Brokers: c.addrs, Version: "3.6.0", Timeout: 10 * time.Second}},
		kafka.ClustersOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	m, err := kafka.NewMonitor(cs, store, []kafka.Pipeline{{Name: "bench", Cluster: "bench", Topics: []string{lagTopic}, Group: lagGroup}},
		kafka.MonitorOptions{Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := m.PipelineLag(ctx, "bench"); err != nil { // connections, metadata, coordinator
		b.Fatal(err)
	}
	c.reset()
	var r *kafka.LagReport
	for b.Loop() {
		if r, err = m.PipelineLag(ctx, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	c.report(b)
	if r.Totals.Partitions != partitions || r.Totals.Lag != int64(partitions) || r.Totals.Unknown != 0 {
		b.Fatalf("totals = %+v, want %d partitions with lag 1 each", r.Totals, partitions)
	}
}

func lagKadm(b *testing.B, partitions int) {
	c := clusterOf(b, partitions)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addrs...))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.Lag(ctx, lagGroup); err != nil {
		b.Fatal(err)
	}
	c.reset()
	var total int64
	for b.Loop() {
		lags, err := adm.Lag(ctx, lagGroup)
		if err != nil {
			b.Fatal(err)
		}
		total = lags[lagGroup].Lag.Total()
	}
	b.StopTimer()
	c.report(b)
	if total != int64(partitions) {
		b.Fatalf("kadm lag = %d, want %d", total, partitions)
	}
}

func lagSaramaNaive(b *testing.B, partitions int) {
	c := clusterOf(b, partitions)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	client, err := sarama.NewClient(c.addrs, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		b.Fatal(err)
	}
	lag := func() int64 {
		commits, err := admin.ListConsumerGroupOffsets(lagGroup, nil)
		if err != nil {
			b.Fatal(err)
		}
		var total int64
		for p := range int32(partitions) {
			end, err := client.GetOffset(lagTopic, p, sarama.OffsetNewest)
			if err != nil {
				b.Fatal(err)
			}
			total += end - commits.GetBlock(lagTopic, p).Offset
		}
		return total
	}
	lag()
	c.reset()
	var total int64
	for b.Loop() {
		total = lag()
	}
	b.StopTimer()
	c.report(b)
	if total != int64(partitions) {
		b.Fatalf("naive lag = %d, want %d", total, partitions)
	}
}
