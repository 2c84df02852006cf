package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The 10,000-partition benchmarks talk to a kfake cluster in a child
// process (this test binary, re-executed), so that B/op counts the
// client's allocations only, not the broker's. Requests are counted on the
// client side, per broker address, by a dialer that reads the request
// header of every frame written.

const (
	benchServerEnv  = "STREAMWATCH_KFAKE_BENCH_SERVER"
	benchTopic      = "bench"
	benchGroup      = "bench-group"
	benchPartitions = 10000
)

// serveBenchCluster runs in the child: 3 brokers, a 10,000-partition topic
// with 2 records per partition, and benchGroup committed at offset 1 on
// every partition (lag 1 each). It prints the addresses, then serves until
// its stdin closes.
func serveBenchCluster() {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(benchPartitions, benchTopic))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	ctx := context.Background()
	recs := make([]*kgo.Record, 0, 2*benchPartitions)
	for p := int32(0); p < benchPartitions; p++ {
		for i := 0; i < 2; i++ {
			recs = append(recs, &kgo.Record{Topic: benchTopic, Partition: p, Value: []byte("v")})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	offsets := kadm.Offsets{}
	for p := int32(0); p < benchPartitions; p++ {
		offsets.Add(kadm.Offset{Topic: benchTopic, Partition: p, At: 1, LeaderEpoch: -1})
	}
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, benchGroup, offsets); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	cl.Close()
	fmt.Println("READY", strings.Join(c.ListenAddrs(), ","))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

var (
	benchOnce  sync.Once
	benchAddrs []string
	benchErr   error
	benchStop  func()
)

func benchCluster(b *testing.B) []string {
	b.Helper()
	benchOnce.Do(func() {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), benchServerEnv+"=1")
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			benchErr = err
			return
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			benchErr = err
			return
		}
		if err := cmd.Start(); err != nil {
			benchErr = err
			return
		}
		benchStop = func() { stdin.Close(); _ = cmd.Wait() }
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if addrs, ok := strings.CutPrefix(line, "READY "); ok {
				benchAddrs = strings.Split(addrs, ",")
				return
			}
			if strings.HasPrefix(line, "ERROR") {
				benchErr = fmt.Errorf("bench server: %s", line)
				return
			}
		}
		benchErr = fmt.Errorf("bench server exited: %v", sc.Err())
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchAddrs
}

// wireCounter counts Kafka requests per broker address and API key.
type wireCounter struct {
	mu     sync.Mutex
	counts map[string]map[int16]int
}

func newWireCounter() *wireCounter { return &wireCounter{counts: map[string]map[int16]int{}} }

func (w *wireCounter) add(addr string, key int16) {
	w.mu.Lock()
	if w.counts[addr] == nil {
		w.counts[addr] = map[int16]int{}
	}
	w.counts[addr][key]++
	w.mu.Unlock()
}

func (w *wireCounter) reset() {
	w.mu.Lock()
	w.counts = map[string]map[int16]int{}
	w.mu.Unlock()
}

// perBroker returns the count of key per broker address, and the total.
func (w *wireCounter) perBroker(key kmsg.Key) (map[string]int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out, total := map[string]int{}, 0
	for addr, m := range w.counts {
		if n := m[int16(key)]; n > 0 {
			out[addr] = n
			total += n
		}
	}
	return out, total
}

func (w *wireCounter) total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.counts {
		for _, c := range m {
			n += c
		}
	}
	return n
}

func (w *wireCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, addr: addr, w: w}, nil
}

// Dial lets a wireCounter serve as sarama's proxy dialer.
func (w *wireCounter) Dial(network, addr string) (net.Conn, error) {
	return w.dial(context.Background(), network, addr)
}

// countingConn reads the size and API key at the start of every request
// frame written to it.
type countingConn struct {
	net.Conn
	addr string
	w    *wireCounter
	need int    // bytes left of the current frame's body
	hdr  []byte // the start of a frame header seen so far
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	b := p[:n]
	for len(b) > 0 {
		if c.need > 0 {
			k := min(c.need, len(b))
			c.need -= k
			b = b[k:]
			continue
		}
		k := min(6-len(c.hdr), len(b))
		c.hdr = append(c.hdr, b[:k]...)
		b = b[k:]
		if len(c.hdr) == 6 {
			size := int(binary.BigEndian.Uint32(c.hdr[:4]))
			c.w.add(c.addr, int16(binary.BigEndian.Uint16(c.hdr[4:6])))
			c.need = size - 2
			c.hdr = c.hdr[:0]
		}
	}
	return n, err
}

// benchMonitor builds a Monitor on the bench cluster whose client counts
// its requests.
func benchMonitor(b *testing.B, addrs []string, store SampleStore, now func() time.Time) (*Monitor, *wireCounter) {
	b.Helper()
	cs, err := NewClusters([]ClusterOptions{{Name: "bench", Brokers: addrs, Version: "3.6.0", Timeout: 10 * time.Second}}, ClustersOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	w := newWireCounter()
	cfg := cs.byName["bench"].cfg
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = w
	m, err := NewMonitor(cs, store, []Pipeline{{Name: "bench", Cluster: "bench", Topics: []string{benchTopic}, Group: benchGroup}},
		MonitorOptions{Now: now})
	if err != nil {
		b.Fatal(err)
	}
	return m, w
}

// benchHistory is 60 rounds, 30 s apart, ending 30 s before now: commits
// moved from 0 to 1 halfway, the log end from 1 to 2 with them.
func benchHistory(now time.Time, partitions int) *MemoryStore {
	store := NewMemoryStore(MaxSamples)
	for i := 0; i < MaxSamples; i++ {
		at := now.Add(-time.Duration(MaxSamples-i) * 30 * time.Second)
		round := make([]PartitionSample, partitions)
		for p := range round {
			c, e := int64(0), int64(1)
			if i >= MaxSamples-1 { // the commit moved a round ago: a healthy group, no scan
				c, e = 1, 2
			}
			round[p] = PartitionSample{Partition: int32(p), Committed: c, LogEnd: e, UnixMilli: at.UnixMilli()}
		}
		_ = store.Append(context.Background(), SampleKey{Cluster: "bench", Group: benchGroup, Topic: benchTopic}, round)
	}
	return store
}

// cpuTime is the CPU time this process (the client; the brokers run in a
// child) has used: on a shared machine it varies less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func reportRequests(b *testing.B, w *wireCounter, keys ...kmsg.Key) {
	b.Helper()
	for _, k := range keys {
		_, n := w.perBroker(k)
		b.ReportMetric(float64(n)/float64(b.N), k.Name()+"/op")
	}
	b.ReportMetric(float64(w.total())/float64(b.N), "requests/op")
}

// assertPerBroker fails unless every broker received exactly want
// requests of key per iteration (want 0: none).
func assertPerBroker(b *testing.B, w *wireCounter, key kmsg.Key, brokers int, want int) {
	b.Helper()
	per, _ := w.perBroker(key)
	if want == 0 {
		if len(per) != 0 {
			b.Fatalf("%s: %v, want none", key.Name(), per)
		}
		return
	}
	if len(per) != brokers {
		b.Fatalf("%s reached %d brokers (%v), want %d", key.Name(), len(per), per, brokers)
	}
	for addr, n := range per {
		if n != want*b.N {
			b.Fatalf("%s to %s: %d requests over %d iterations, want %d per iteration", key.Name(), addr, n, b.N, want)
		}
	}
}

// BenchmarkLagReport10k: `lag PIPELINE` for one group on a 10,000-partition
// topic over 3 brokers. Per report: one ListOffsets per broker, one
// OffsetFetch and one DescribeGroups to the coordinator, at most one Fetch
// per broker for the 5 exact ages.
func BenchmarkLagReport10k(b *testing.B) {
	addrs := benchCluster(b)
	now := time.Now()
	for _, bc := range []struct {
		name    string
		history bool
	}{{"history=60", true}, {"history=none+groups-scan", false}} {
		b.Run(bc.name, func(b *testing.B) {
			var store SampleStore
			if bc.history {
				store = benchHistory(now, benchPartitions)
			}
			m, w := benchMonitor(b, addrs, store, func() time.Time { return now })
			ctx := context.Background()
			if _, err := m.PipelineLag(ctx, "bench"); err != nil { // metadata, coordinator, connections
				b.Fatal(err)
			}
			w.reset()
			b.ReportAllocs()
			cpu := cpuTime()
			var r *LagReport
			for b.Loop() {
				var err error
				if r, err = m.PipelineLag(ctx, "bench"); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportCPU(b, cpu)
			if r.Totals.Partitions != benchPartitions || r.Totals.Lag != benchPartitions || r.Totals.Unknown != 0 {
				b.Fatalf("totals = %+v", r.Totals)
			}
			scans := 1
			if bc.history {
				scans = 0
				if r.Mismatch != nil || r.History != MaxSamples {
					b.Fatalf("history run: mismatch %v, history %d", r.Mismatch, r.History)
				}
			}
			// The groups scan of an idle group reuses the log ends and
			// adds ListGroups on every broker, and one DescribeGroups and
			// one OffsetFetch (all groups batched) per coordinator.
			assertPerBroker(b, w, kmsg.ListOffsets, 3, 1)
			assertPerBroker(b, w, kmsg.ListGroups, 3, scans)
			assertPerBroker(b, w, kmsg.Metadata, 3, 0)
			assertPerBroker(b, w, kmsg.FindCoordinator, 3, 0)
			assertPerBroker(b, w, kmsg.OffsetFetch, 1, 1+scans)
			assertPerBroker(b, w, kmsg.DescribeGroups, 1, 1+scans)
			fetches, n := w.perBroker(kmsg.Fetch)
			for addr, k := range fetches {
				if k != b.N {
					b.Fatalf("Fetch to %s: %d over %d iterations, want at most 1 per iteration", addr, k, b.N)
				}
			}
			if n == 0 {
				b.Fatalf("no Fetch for the exact ages")
			}
			reportRequests(b, w, kmsg.ListOffsets, kmsg.OffsetFetch, kmsg.DescribeGroups, kmsg.Fetch, kmsg.ListGroups)
		})
	}
}

// BenchmarkEvaluate10kx60: the evaluator over 10,000 partitions × 60
// samples.
func BenchmarkEvaluate10kx60(b *testing.B) {
	now := time.Now()
	samples := make([]PartitionSample, 0, benchPartitions*MaxSamples)
	for i := 0; i < MaxSamples; i++ {
		at := now.Add(-time.Duration(MaxSamples-1-i) * 30 * time.Second)
		for p := 0; p < benchPartitions; p++ {
			var s PartitionSample
			switch p % 4 {
			case 0: // consuming
				s = PartitionSample{Committed: int64(100 * i), LogEnd: int64(100*i + 50), Owned: true}
			case 1: // stalled after 30 rounds
				s = PartitionSample{Committed: int64(100 * min(i, 30)), LogEnd: int64(100*i + 50), Owned: true}
			case 2: // quiet, 5 records unread, no member
				s = PartitionSample{Committed: 700, LogEnd: 705}
			default: // falling behind
				s = PartitionSample{Committed: int64(10 * i), LogEnd: int64(100 * i)}
			}
			s.Partition, s.UnixMilli = int32(p), at.UnixMilli()
			samples = append(samples, s)
		}
	}
	opts := EvalOptions{Now: now, StallAfter: 5 * time.Minute}
	b.ReportAllocs()
	cpu := cpuTime()
	var gs GroupStatus
	for b.Loop() {
		gs = Evaluate(samples, opts)
	}
	b.StopTimer()
	reportCPU(b, cpu)
	// The quiet partitions leave 5 records unread for 30 minutes with no member: STOPPED.
	if gs.Counts[StatusStalled] != benchPartitions/4 || gs.Counts[StatusWarning] != benchPartitions/4 ||
		gs.Counts[StatusStopped] != benchPartitions/4 || gs.Status != StatusStopped {
		b.Fatalf("counts = %v", gs.Counts)
	}
}

// BenchmarkNaiveGetOffset10k is the comparison: sarama's client.GetOffset
// for every partition, then the group's commits through the admin client.
func BenchmarkNaiveGetOffset10k(b *testing.B) {
	addrs := benchCluster(b)
	w := newWireCounter()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_6_0_0
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = w
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		b.Fatal(err)
	}
	w.reset()
	b.ReportAllocs()
	cpu := cpuTime()
	var lag int64
	for b.Loop() {
		lag = 0
		commits, err := admin.ListConsumerGroupOffsets(benchGroup, nil)
		if err != nil {
			b.Fatal(err)
		}
		for p := int32(0); p < benchPartitions; p++ {
			end, err := client.GetOffset(benchTopic, p, sarama.OffsetNewest)
			if err != nil {
				b.Fatal(err)
			}
			lag += end - commits.GetBlock(benchTopic, p).Offset
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if lag != benchPartitions {
		b.Fatalf("lag = %d", lag)
	}
	reportRequests(b, w, kmsg.ListOffsets, kmsg.OffsetFetch)
}

// BenchmarkKadmLag10k is the comparison with franz-go's kadm.Lag (which
// describes the group, fetches its commits and the end offsets).
func BenchmarkKadmLag10k(b *testing.B) {
	addrs := benchCluster(b)
	w := newWireCounter()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.Dialer(w.dial))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.Lag(ctx, benchGroup); err != nil {
		b.Fatal(err)
	}
	w.reset()
	b.ReportAllocs()
	cpu := cpuTime()
	var total int64
	for b.Loop() {
		lags, err := adm.Lag(ctx, benchGroup)
		if err != nil {
			b.Fatal(err)
		}
		total = lags[benchGroup].Lag.Total()
	}
	b.StopTimer()
	reportCPU(b, cpu)
	if total != benchPartitions {
		b.Fatalf("lag = %d", total)
	}
	reportRequests(b, w, kmsg.ListOffsets, kmsg.OffsetFetch, kmsg.DescribeGroups, kmsg.Metadata)
}
