package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The checkpoint the query had written before the incident.
const (
	recordsPerBatch = 10 // per partition, in the checkpoint's history
	historyBatches  = 4  // batches 0..3 planned and committed before the incident
	brokenBatch     = historyBatches
)

// replies is the live pipeline outside streamwatch: the service producing SMS replies, the
// deployed job's consumer-group member, and the Spark query writing its checkpoint.
type replies struct {
	kafka *kafkatest.Cluster
	admin *kadm.Client // reads groups' commits, as the demo's own eyes

	mu     sync.Mutex
	logEnd [partitions]int64
	member func() // stops the job's consumer-group member

	producing sync.WaitGroup
	query     *sparkQuery
}

func newReplies(kc *kafkatest.Cluster) (*replies, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		return nil, fmt.Errorf("kafka admin client: %w", err)
	}
	return &replies{kafka: kc, admin: kadm.NewClient(cl)}, nil
}

// committed sums group's committed offsets on the topic; false when it has none.
func (r *replies) committed(ctx context.Context, group string) (int64, bool) {
	res, err := r.admin.FetchOffsets(ctx, group)
	if err != nil {
		return 0, false
	}
	var sum int64
	found := false
	res.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At >= 0 {
			sum, found = sum+o.At, true
		}
	})
	return sum, found
}

// produced is how many replies the topic holds.
func (r *replies) produced() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum int64
	for _, e := range r.logEnd {
		sum += e
	}
	return sum
}

// produce appends n replies to every partition, stamped at ts (zero: now).
func (r *replies) produce(ctx context.Context, n int, ts time.Time) error {
	counts := make([]int, partitions)
	for i := range counts {
		counts[i] = n
	}
	if err := r.kafka.Produce(ctx, topic, counts, ts); err != nil {
		return fmt.Errorf("produce replies: %w", err)
	}
	r.mu.Lock()
	for i := range r.logEnd {
		r.logEnd[i] += int64(n)
	}
	r.mu.Unlock()
	return nil
}

// keepProducing produces one reply per partition every interval until ctx ends.
func (r *replies) keepProducing(ctx context.Context, every time.Duration) {
	r.producing.Add(1)
	go func() {
		defer r.producing.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = r.produce(ctx, 1, time.Time{}) // a failed tick is not fatal: the next one produces again
			}
		}
	}()
}

// ends are the log-end offsets of the topic's partitions.
func (r *replies) ends() map[int32]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int32]int64, partitions)
	for p, e := range r.logEnd {
		out[int32(p)] = e
	}
	return out
}

// deploy runs the job's consumer-group member with group, stopping the previous one, and
// waits until the group is Stable.
func (r *replies) deploy(ctx context.Context, group string) error {
	r.undeploy()
	stop, err := r.kafka.Consume(group, topic)
	if err != nil {
		return fmt.Errorf("start a %s member: %w", group, err)
	}
	r.mu.Lock()
	r.member = stop
	r.mu.Unlock()
	return wait.Until(ctx, 20*time.Second, "consumer group "+group+" becoming Stable", func() bool {
		st, _ := r.kafka.GroupState(ctx, group)
		return st == "Stable"
	})
}

// undeploy stops the job's consumer-group member, if one runs.
func (r *replies) undeploy() {
	r.mu.Lock()
	stop := r.member
	r.member = nil
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// stop ends everything the pipeline runs; the producer stops with its context.
func (r *replies) stop() {
	if r.query != nil {
		r.query.stop()
	}
	r.producing.Wait()
	r.undeploy()
	r.admin.Close()
}

// history is the checkpoint as it was before the incident: batches 0..3 planned and committed,
// one a minute, the last about 40 minutes ago.
func history(now time.Time) sparktest.Spec {
	return sparktest.Spec{Start: now.Add(-45 * time.Minute), LatestBatch: historyBatches - 1, LatestCommit: historyBatches - 1,
		Topics: []sparktest.Topic{{Name: topic, Partitions: partitions, RecordsPerBatch: recordsPerBatch}}}
}

// sparkConf is the conf map of the checkpoint's offsets files (sparktest's default).
var sparkConf = map[string]string{
	"spark.sql.shuffle.partitions":                 "5",
	"spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
}

// sparkQuery is the restarted Spark query: every interval it plans a batch up to the topic's
// log end (offsets/N) and commits it (commits/N), each file written to a temporary name and
// renamed, as Spark's checkpoint file manager does.
type sparkQuery struct {
	dir       string
	next      int64
	ends      func() map[int32]int64
	committed atomic.Int64 // the newest committed batch
	err       atomic.Value // the last write error, a string
	cancel    context.CancelFunc
	done      chan struct{}
}

func startQuery(dir string, first int64, ends func() map[int32]int64, every time.Duration) *sparkQuery {
	ctx, cancel := context.WithCancel(context.Background())
	q := &sparkQuery{dir: dir, next: first, ends: ends, cancel: cancel, done: make(chan struct{})}
	q.committed.Store(first - 1)
	go func() {
		defer close(q.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := q.batch(time.Now()); err != nil {
				q.err.Store(err.Error())
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return q
}

func (q *sparkQuery) stop() {
	q.cancel()
	<-q.done
}

// batch plans and commits the next batch.
func (q *sparkQuery) batch(now time.Time) error {
	id := q.next
	offsets := map[string]map[string]int64{topic: {}}
	for p, end := range q.ends() {
		offsets[topic][strconv.Itoa(int(p))] = end
	}
	meta, _ := json.Marshal(map[string]any{"batchWatermarkMs": 0, "batchTimestampMs": now.UnixMilli(), "conf": sparkConf})
	src, _ := json.Marshal(offsets)
	if err := writeAtomically(filepath.Join(q.dir, "offsets"), id, "v1\n"+string(meta)+"\n"+string(src)); err != nil {
		return err
	}
	if err := writeAtomically(filepath.Join(q.dir, "commits"), id, "v1\n{\"nextBatchWatermarkMs\":0}"); err != nil {
		return err
	}
	q.next++
	q.committed.Store(id)
	// Spark keeps the newest batches (spark.sql.streaming.minBatchesToRetain, 100) and purges
	// older ones.
	if old := id - retainBatches; old >= 0 {
		os.Remove(filepath.Join(q.dir, "offsets", strconv.FormatInt(old, 10)))
		os.Remove(filepath.Join(q.dir, "commits", strconv.FormatInt(old, 10)))
	}
	return nil
}

const retainBatches = 100

// writeAtomically writes dir/<id> through a temporary file and a rename.
func writeAtomically(dir string, id int64, data string) error {
	tmp := filepath.Join(dir, fmt.Sprintf(".%d.%s.tmp", id, randomHex(8)))
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, strconv.FormatInt(id, 10))); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("publish %s/%d: %w", filepath.Base(dir), id, err)
	}
	return nil
}

// Driver log lines, in Spark's log4j layout.
func logLine(at time.Time, level, logger, msg string) string {
	return fmt.Sprintf("%s,%03d %s %s: %s\n", at.UTC().Format("2006-01-02 15:04:05"), at.Nanosecond()/1e6, level, logger, msg)
}

const (
	microBatch = "org.apache.spark.sql.execution.streaming.MicroBatchExecution"
	runIDFirst = "2c1f9e4b-7a3d-4f62-8b15-0e9d3c7a5b21"
)

// driverLogStart is the driver log of the run that failed: it started fine, then could not
// write batch 4's offsets because the checkpoint location had turned read-only.
func driverLogStart(checkpoint string, started, failed time.Time) string {
	query := fmt.Sprintf("sms-replies [id = %s, runId = %s]", sparktest.DefaultQueryID, runIDFirst)
	return logLine(started, "INFO", "org.apache.spark.SparkContext", "Running Spark version 3.5.1") +
		logLine(started.Add(7*time.Second), "INFO", microBatch, "Starting "+query+". Use file:"+checkpoint+" to store the query checkpoint.") +
		logLine(failed, "ERROR", microBatch, "Query "+query+" terminated with error") +
		fmt.Sprintf("java.io.FileNotFoundException: %s/offsets/.%d.3b1d4c0e-9f7a-2d6b-1e4c-9a10b3f1c2d4.tmp (Permission denied)\n", checkpoint, brokenBatch) +
		"\tat java.io.FileOutputStream.open0(Native Method)\n" +
		"\tat java.io.FileOutputStream.open(FileOutputStream.java:298)\n" +
		"\tat org.apache.hadoop.fs.RawLocalFileSystem$LocalFSFileOutputStream.<init>(RawLocalFileSystem.java:321)\n" +
		"\tat org.apache.spark.sql.execution.streaming.FileContextBasedCheckpointFileManager.createTempFile(CheckpointFileManager.scala:367)\n" +
		"\tat org.apache.spark.sql.execution.streaming.HDFSMetadataLog.addNewBatchByStream(HDFSMetadataLog.scala:186)\n" +
		logLine(failed.Add(1100*time.Millisecond), "INFO", "org.apache.spark.util.ShutdownHookManager", "Shutdown hook called")
}

// driverLogRestart is what the restarted driver logs.
func driverLogRestart(checkpoint string, at time.Time) string {
	query := fmt.Sprintf("sms-replies [id = %s, runId = %s]", sparktest.DefaultQueryID, "6d0a8b3c-1e5f-4a79-9c24-"+randomHex(6))
	return logLine(at, "INFO", "org.apache.spark.SparkContext", "Running Spark version 3.5.1") +
		logLine(at.Add(2*time.Second), "INFO", microBatch, "Starting "+query+". Use file:"+checkpoint+" to store the query checkpoint.")
}

func appendFile(path, data string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
