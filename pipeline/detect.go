package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/state"
)

// RoundSource takes a sampling round of every pipeline (kafka.Sampler).
type RoundSource interface {
	Round(ctx context.Context) (*kafka.Round, error)
}

// DetectKafka reads the timestamps of records and commits to publish groups (kafka.Clusters).
type DetectKafka interface {
	RecordTimes(ctx context.Context, cluster string, qs []kafka.RecordQuery, perPartition int32) (map[kafka.TopicPartition]kafka.RecordTime, []kafka.Unavailable, error)
	TopicRanges(ctx context.Context, cluster string, topics ...string) (*kafka.TopicRanges, error)
	CommitOffsets(ctx context.Context, cluster, group string, offsets map[kafka.TopicPartition]int64, metadata string) error
	TopicRetention(ctx context.Context, cluster string, topics ...string) (map[string]kafka.Retention, error)
}

// DetectStore keeps detection's records between rounds and turns symptoms into incidents
// (state.Store).
type DetectStore interface {
	DetectRecords(ctx context.Context, pipelines ...string) (map[string]state.DetectRecord, error)
	SaveDetectRecord(ctx context.Context, pipeline string, r state.DetectRecord) (bool, error)
	RecordAlert(ctx context.Context, a state.AlertRecord) (state.Outcome, error)
	Get(ctx context.Context, id string) (*state.Incident, error)
	MarkQuiet(ctx context.Context, id string) error
	UpdateDetected(ctx context.Context, id, line, title string) (state.DetectUpdate, error)
	RecoverDetected(ctx context.Context, id, fingerprint, note string) (state.Recovery, error)
	NoteDetected(ctx context.Context, id, ev, detail string) error
	EnqueueNotice(ctx context.Context, channel, text string) error
	NoteCommit(ctx context.Context, pipeline string, c state.Commit) error
	SetFaultAt(ctx context.Context, id string, at time.Time) error
	CommitHistory(ctx context.Context, pipeline string) ([]state.Commit, error)
}

// recordTimeBytes is how much of each partition a timestamp fetch of detection asks for: the
// header of the batch holding the record is enough for a bound, and small records fit whole.
const recordTimeBytes = 4 << 10

// checkpointTimeout bounds the read of one checkpoint in a round when
// Detector.CheckpointTimeout is not set (app.Options sets it).
const checkpointTimeout = 10 * time.Second

// Detector judges every pipeline with Kafka settings on each sampling round (once per tick in
// the whole deployment): a stale checkpoint while records wait, the documented group STALLED
// or STOPPED, Spark's true lag over detect.max_lag; a symptom that holds two rounds opens the
// pipeline's incident (or joins its open one) and recovers after two clear rounds. It also
// commits the checkpoint's position to publish groups. docs/detection.md says how and what it
// costs.
type Detector struct {
	// CheckpointTimeout bounds the read of one checkpoint in a round
	// (app.Options.CheckpointTimeout).
	CheckpointTimeout time.Duration
	Config            *config.Config
	Getenv            func(string) string
	Rounds            RoundSource
	Kafka             DetectKafka
	Store             DetectStore
	Now               func() time.Time
	Log               *slog.Logger
	// Recovered, when set, is told of each recovery note detection posts (the app follows it
	// with a chart). It must not block.
	Recovered func(incident, pipeline string)
	// Progress, when set, keeps every round's numbers for charts (progress.go).
	Progress ProgressStore
	// TimeToDetect, when set, hears how long after the fault each incident detection opened:
	// from when records began to wait with no commit, or from the query's last heartbeat line.
	TimeToDetect func(time.Duration)
	// Words words what detection posts (commands.DetectMessage: text is made in commands);
	// without it a message is its kind and pipeline.
	Words func(Message) string

	mu       sync.Mutex
	stores   map[string]storage.Store   // checkpoint locations, opened once
	progress map[string]*spark.Progress // the last checkpoint read of each pipeline
	batches  map[string]*spark.Batches  // and its batch times (stale_after: auto)
	times    map[recordKey]time.Time    // timestamps of the records at checkpoint offsets
	// starts are the log starts of partitions where the checkpoint's offset was found below
	// it: retention deleted records the query never read, which no longer wait.
	starts map[partKey]int64
	// retention is each topic's retention, read at most once an hour (retentionEvery).
	retention map[partKey]knownRetention
}

// knownRetention is a topic's retention as last read (partKey's partition unused).
type knownRetention struct {
	kafka.Retention
	known bool
	at    time.Time
}

// retentionEvery is how often a topic's retention is read again: it changes rarely, and the
// brokers answer DescribeConfigs for every topic at once.
const retentionEvery = time.Hour

// partKey names a partition of a cluster.
type partKey struct {
	cluster   string
	topic     string
	partition int32
}

// recordKey names the record at an offset of a partition of a cluster.
type recordKey struct {
	cluster   string
	topic     string
	partition int32
	offset    int64
}

func (d *Detector) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Detector) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.New(slog.DiscardHandler)
}

// detected is one pipeline's part of a round, as detection sees it.
type detected struct {
	p     *config.Pipeline
	round *kafka.PipelineRound
	prog  *spark.Progress // nil: no checkpoint, or unreadable
	perr  error
	obs   Observation
	// checkpoint are the checkpoint's offsets of the pipeline's topics, by partition.
	checkpoint map[kafka.TopicPartition]int64
	// prev is the state the last round left; waiting the clock of records waiting beyond
	// the checkpoint after this round.
	prev    DetectState
	waiting HeldClock
	// beats are the query's heartbeats in its driver log (driverlog.LastBeats); berr why
	// they could not be read; written when the log was last written.
	beats   []driverlog.Beat
	berr    error
	written time.Time
	// interval is the learned batch interval (stale_after: auto; 0: not learned).
	interval time.Duration
	// batches are the checkpoint's batch times (stale_after: auto; nil: not read); usual the
	// learned batch duration (0: not learned); running the clock of the batch in flight.
	batches *spark.Batches
	usual   time.Duration
	running BatchClock
}

// Round takes one sampling round and judges every pipeline by it. tick identifies the round
// (the scheduler's tick): a record of an earlier round never overwrites a later one.
func (d *Detector) Round(ctx context.Context, tick time.Time) (*kafka.Round, error) {
	r, rerr := d.Rounds.Round(ctx)
	if r == nil {
		return nil, rerr
	}
	var ds []*detected
	for i := range r.Pipelines {
		pr := &r.Pipelines[i]
		p, ok := d.Config.Pipeline(pr.Pipeline)
		if !ok {
			continue
		}
		ds = append(ds, &detected{p: p, round: pr})
	}
	d.readCheckpoints(ctx, ds)
	d.readRecordTimes(ctx, ds)
	d.readBeats(ctx, ds)
	d.readRetention(ctx, ds)
	d.learnIntervals(ctx, ds)
	names := make([]string, len(ds))
	for i, x := range ds {
		names[i] = x.p.Name
	}
	records, err := d.Store.DetectRecords(ctx, names...)
	if err != nil {
		return r, errors.Join(rerr, err)
	}
	now := d.now()
	for _, x := range ds {
		x.prev = d.previous(x.p.Name, records[x.p.Name])
		x.obs, x.waiting = d.observe(x, now, x.prev.Waiting)
		x.running = batchSlow(x, &x.obs, x.prev.Running)
	}
	// The charts' samples are the observations' numbers (observe needs the last round's state).
	if err := d.keepProgress(ctx, ds); err != nil {
		rerr = errors.Join(rerr, err)
	}
	errs := []error{rerr}
	for _, x := range ds {
		if err := d.judge(ctx, x, records[x.p.Name], tick); err != nil {
			errs = append(errs, fmt.Errorf("detection of %s: %w", x.p.Name, err))
		}
	}
	return r, errors.Join(errs...)
}

// faultAt is when the fault behind the active symptoms became visible: the query's last
// heartbeat line, or the moment records began to wait with no commit; zero when unknown.
func faultAt(active []Signal, obs Observation) time.Time {
	var at time.Time
	if slices.Contains(active, SignalSilent) && !obs.BeatAt.IsZero() {
		at = obs.BeatAt
	}
	if slices.Contains(active, SignalSlow) && !obs.RunningSince.IsZero() {
		if at.IsZero() || obs.RunningSince.Before(at) {
			at = obs.RunningSince
		}
	}
	if slices.Contains(active, SignalStale) && obs.WaitingFor >= 0 {
		if t := obs.At.Add(-obs.WaitingFor); at.IsZero() || t.Before(at) {
			at = t
		}
	}
	return at
}

// learnIntervals notes each auto pipeline's newest commit in its history and learns its
// batch interval from the history (stale_after: auto).
func (d *Detector) learnIntervals(ctx context.Context, ds []*detected) {
	for _, x := range ds {
		if !x.p.Checkpoint.StaleAuto {
			continue
		}
		if x.prog != nil && x.prog.Batch >= 0 && !x.prog.CommittedAt.IsZero() {
			c := state.Commit{Batch: x.prog.Batch, At: x.prog.CommittedAt}
			if x.batches != nil && x.batches.Batch == c.Batch {
				c.Took = x.batches.Took
			}
			if err := d.Store.NoteCommit(ctx, x.p.Name, c); err != nil {
				d.log().Warn("detection: could not keep the commit history", "pipeline", x.p.Name, "err", err)
			}
		}
		h, err := d.Store.CommitHistory(ctx, x.p.Name)
		if err != nil {
			d.log().Warn("detection: could not read the commit history", "pipeline", x.p.Name, "err", err)
			continue
		}
		x.interval, x.usual = BatchInterval(h), UsualDuration(h)
	}
}

// readRetention reads the retention of the pipelines' topics it has not read within the hour,
// one DescribeConfigs per cluster.
func (d *Detector) readRetention(ctx context.Context, ds []*detected) {
	now := d.now()
	want := map[string][]string{}
	d.mu.Lock()
	if d.retention == nil {
		d.retention = map[partKey]knownRetention{}
	}
	for _, x := range ds {
		if warnShare(x.p) <= 0 || x.round.Err != nil {
			continue
		}
		for _, t := range x.p.Kafka.Topics {
			k := partKey{cluster: x.round.Cluster, topic: t}
			if r, ok := d.retention[k]; !ok || now.Sub(r.at) >= retentionEvery {
				if !slices.Contains(want[k.cluster], t) {
					want[k.cluster] = append(want[k.cluster], t)
				}
			}
		}
	}
	d.mu.Unlock()
	for cluster, topics := range want {
		got, err := d.Kafka.TopicRetention(ctx, cluster, topics...)
		if err != nil {
			d.log().Warn("detection: could not read the topics' retention", "cluster", cluster, "err", err)
			continue
		}
		d.mu.Lock()
		for _, t := range topics {
			r, ok := got[t]
			d.retention[partKey{cluster: cluster, topic: t}] = knownRetention{Retention: r, known: ok, at: now}
		}
		d.mu.Unlock()
	}
}

// warnShare is detect.retention_warning as a fraction (0: off).
func warnShare(p *config.Pipeline) float64 { return p.Detect.RetentionWarning.Fraction() }

// retentionRisk judges, partition by partition, the oldest record the checkpoint has not
// reached against its topic's retention.ms: the share of the retention it has used, and the
// time left before retention deletes it unread. Compacted topics are left out, and said to be.
func (d *Detector) retentionRisk(x *detected, obs *Observation, parts []PartitionProgress) {
	if warnShare(x.p) <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	judged := false
	for _, pp := range parts {
		r, ok := d.retention[partKey{cluster: x.round.Cluster, topic: pp.Topic}]
		if !ok || !r.known {
			continue
		}
		if r.Compacted {
			if !slices.Contains(obs.Compacted, pp.Topic) {
				obs.Compacted = append(obs.Compacted, pp.Topic)
			}
			continue
		}
		if r.Time <= 0 {
			continue
		}
		judged = true
		if pp.Waiting <= 0 || !pp.OldestKnown {
			continue
		}
		share := float64(pp.Oldest) / float64(r.Time)
		if share >= warnShare(x.p) {
			obs.RetentionParts = append(obs.RetentionParts, pp.Partition)
		}
		if share > obs.RetentionShare {
			obs.RetentionShare, obs.RetentionTopic, obs.Retention = share, pp.Topic, r.Time
			obs.RetentionLeft = max(r.Time-pp.Oldest, 0)
		}
	}
	if judged {
		obs.Holds[SignalRetention] = obs.RetentionShare >= retentionIncident
	}
}

// retentionIncident is the share of the retention past which unread records are about to be
// deleted: an incident, not a warning.
const retentionIncident = 0.9

// readBeats reads each watched pipeline's heartbeats from the end of its driver logs.
func (d *Detector) readBeats(ctx context.Context, ds []*detected) {
	for _, x := range ds {
		if x.p.Detect.HeartbeatAfter <= 0 || !x.p.Logs.Configured() {
			continue
		}
		opts := StorageOptions(d.Config, d.Getenv)
		x.beats, x.berr = driverlog.LastBeatsIn(ctx, x.p.Logs.Paths, min(x.p.Logs.MaxBytes, driverlog.HeartbeatBytes), nil, &opts, logSources(*x.p, d.Getenv)...)
		_, x.written, _ = driverlog.LastWriteIn(ctx, x.p.Logs.Paths, &opts)
	}
}

// liveness judges the query's heartbeat: silent once its newest progress or idle line is
// older than detect.heartbeat_after; not judged without logs, or before the log has one.
func liveness(x *detected, obs *Observation) {
	p := x.p
	obs.SilentFor, obs.HeartbeatAfter = -1, p.Detect.HeartbeatAfter
	switch {
	case p.Detect.HeartbeatAfter <= 0:
		return // turned off: nothing to say
	case !p.Logs.Configured():
		obs.Liveness = LivenessNoLog
		return
	case x.berr != nil:
		obs.Liveness, obs.LivenessErr = LivenessUnreadable, x.berr.Error()
		return
	case len(x.beats) == 0:
		obs.Liveness = LivenessNoBeat
		return
	}
	b := x.beats[0]
	obs.BeatAt, obs.BeatLine, obs.BeatRun, obs.LogWritten = b.At, b.Line, b.Run, x.written
	if b.Note != "" {
		obs.BeatLog, obs.BeatNote = b.File, b.Note
	}
	obs.SilentFor = max(obs.At.Sub(b.At), 0)
	obs.Holds[SignalSilent] = obs.SilentFor > p.Detect.HeartbeatAfter
}

// readCheckpoints reads the progress of each pipeline's checkpoint, at most 8 at a time: a
// list of commits/, a stat of the newest commit, and the offsets file of that batch when it
// is new (spark.ReadProgress).
func (d *Detector) readCheckpoints(ctx context.Context, ds []*detected) {
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, x := range ds {
		if x.p.Checkpoint.Location == "" || x.round.Err != nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			st, err := d.checkpointStore(x.p)
			if err != nil {
				x.perr = err
				return
			}
			d.mu.Lock()
			last := d.progress[x.p.Name]
			d.mu.Unlock()
			cctx, cancel := context.WithTimeout(ctx, cmp.Or(d.CheckpointTimeout, checkpointTimeout))
			prog, err := spark.ReadProgress(cctx, st, last)
			cancel()
			if err != nil {
				x.perr = err
				return
			}
			x.prog = prog
			if x.p.Checkpoint.StaleAuto {
				d.mu.Lock()
				lastB := d.batches[x.p.Name]
				d.mu.Unlock()
				cctx, cancel := context.WithTimeout(ctx, checkpointTimeout)
				b, err := spark.ReadBatches(cctx, st, prog, lastB)
				cancel()
				if err != nil {
					d.log().Warn("detection: could not read the checkpoint's batch times", "pipeline", x.p.Name, "err", err)
				} else {
					x.batches = b
				}
			}
			d.mu.Lock()
			if d.progress == nil {
				d.progress = map[string]*spark.Progress{}
				d.batches = map[string]*spark.Batches{}
			}
			d.progress[x.p.Name] = prog
			if x.batches != nil {
				d.batches[x.p.Name] = x.batches
			}
			d.mu.Unlock()
			x.checkpoint = map[kafka.TopicPartition]int64{}
			for _, pl := range x.round.Partitions {
				if off, ok := prog.Offsets[pl.Topic][pl.Partition]; ok {
					x.checkpoint[kafka.TopicPartition{Topic: pl.Topic, Partition: pl.Partition}] = off
				}
			}
		})
	}
	wg.Wait()
}

func (d *Detector) checkpointStore(p *config.Pipeline) (storage.Store, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st, ok := d.stores[p.Name]; ok {
		return st, nil
	}
	st, err := storage.Open(p.Checkpoint.Location, StorageOptions(d.Config, d.Getenv))
	if err != nil {
		return nil, err
	}
	if d.stores == nil {
		d.stores = map[string]storage.Store{}
	}
	d.stores[p.Name] = st
	return st, nil
}

// waitingBeyond says whether more than the allowed lag waits beyond off on pl's partition.
func waitingBeyond(pl kafka.PartitionLag, off, allowed int64) bool {
	return pl.LogEnd >= 0 && pl.LogEnd-off > allowed
}

// readRecordTimes fetches the timestamps of the records at the checkpoint's offsets of the
// partitions where records wait: one Fetch per partition leader for every pipeline of a
// cluster, and only for an offset not fetched before (the record at an offset that did not
// move is the same record). An offset retention deleted answers out of range: then the
// partitions' log starts are read (rarely: only then) and the oldest record still there is
// fetched instead.
func (d *Detector) readRecordTimes(ctx context.Context, ds []*detected) {
	byCluster := map[string][]kafka.RecordQuery{}
	d.mu.Lock()
	if d.times == nil {
		d.times = map[recordKey]time.Time{}
	}
	// Forget the records whose partition moved on: the cache holds one entry per partition.
	keep := map[recordKey]time.Time{}
	starts := map[partKey]int64{}
	for _, x := range ds {
		for _, pl := range x.round.Partitions {
			tp := kafka.TopicPartition{Topic: pl.Topic, Partition: pl.Partition}
			off, ok := x.checkpoint[tp]
			if !ok {
				continue
			}
			pk := partKey{x.round.Cluster, pl.Topic, pl.Partition}
			if st, ok := d.starts[pk]; ok && st > off {
				starts[pk], off = st, st
			}
			if !waitingBeyond(pl, off, x.p.Kafka.AllowedLag) {
				continue
			}
			k := recordKey{x.round.Cluster, pl.Topic, pl.Partition, off}
			if at, ok := d.times[k]; ok {
				keep[k] = at
				continue
			}
			byCluster[x.round.Cluster] = append(byCluster[x.round.Cluster], kafka.RecordQuery{Topic: pl.Topic, Partition: pl.Partition, Offset: off})
		}
	}
	d.times, d.starts = keep, starts
	d.mu.Unlock()
	var wg sync.WaitGroup
	for cluster, qs := range byCluster {
		wg.Go(func() {
			gone := d.fetchTimes(ctx, cluster, dedupQueries(qs))
			if len(gone) == 0 {
				return
			}
			var topics []string
			for _, q := range gone {
				if !slices.Contains(topics, q.Topic) {
					topics = append(topics, q.Topic)
				}
			}
			tr, err := d.Kafka.TopicRanges(ctx, cluster, topics...)
			if err != nil {
				d.log().Warn("detection: log starts", "cluster", cluster, "err", err)
				return
			}
			var again []kafka.RecordQuery
			d.mu.Lock()
			for _, q := range gone {
				r := tr.Partitions[kafka.TopicPartition{Topic: q.Topic, Partition: q.Partition}]
				if r.Start > q.Offset {
					d.starts[partKey{cluster, q.Topic, q.Partition}] = r.Start
					if r.End > r.Start {
						again = append(again, kafka.RecordQuery{Topic: q.Topic, Partition: q.Partition, Offset: r.Start})
					}
				}
			}
			d.mu.Unlock()
			d.fetchTimes(ctx, cluster, again)
		})
	}
	wg.Wait()
}

// fetchTimes fetches and keeps the timestamps of the records qs name; it returns the queries
// whose offset the brokers no longer hold.
func (d *Detector) fetchTimes(ctx context.Context, cluster string, qs []kafka.RecordQuery) []kafka.RecordQuery {
	if len(qs) == 0 {
		return nil
	}
	times, unavailable, err := d.Kafka.RecordTimes(ctx, cluster, qs, recordTimeBytes)
	if err != nil {
		d.log().Warn("detection: record timestamps", "cluster", cluster, "err", err)
		return nil
	}
	for _, u := range unavailable {
		d.log().Debug("detection: record timestamps unavailable", "cluster", cluster, "what", u.What, "err", u.Err)
	}
	var gone []kafka.RecordQuery
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range qs {
		t, ok := times[kafka.TopicPartition{Topic: q.Topic, Partition: q.Partition}]
		switch {
		case !ok:
		case t.OutOfRange:
			gone = append(gone, q)
		case !t.At.IsZero():
			d.times[recordKey{cluster, q.Topic, q.Partition, q.Offset}] = t.At
		}
	}
	return gone
}

// dedupQueries drops repeated queries (two pipelines reading one topic).
func dedupQueries(qs []kafka.RecordQuery) []kafka.RecordQuery {
	seen := map[kafka.RecordQuery]bool{}
	out := qs[:0]
	for _, q := range qs {
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}

// observe turns a pipeline's round, checkpoint and record times into an observation, with
// the clock of records waiting beyond the checkpoint: the checkpoint is stale once records
// have waited stale_after with no commit, counted from the later of the newest commit and
// the moment they began to wait (the oldest waiting record's timestamp, else the first round
// that saw them, never before the last round that saw none), so a quiet topic's idle time
// does not count.
func (d *Detector) observe(x *detected, now time.Time, clock HeldClock) (Observation, HeldClock) {
	p, r := x.p, x.round
	obs := Observation{At: now, Batch: -1, CommitAge: -1, Waiting: -1, GroupWaiting: -1, WaitingFor: -1, Group: p.Kafka.Group,
		Holds: map[Signal]bool{}, StaleAfter: StaleAfter(p, x.interval), Interval: x.interval, MaxLag: p.Detect.MaxLag}
	allowed := p.Kafka.AllowedLag
	keepParts := d.Config.HTTP.MetricsPartitions
	liveness(x, &obs)

	// The documented group.
	if r.Err == nil {
		if waiting, known := kafka.SumLag(r.Partitions); known > 0 {
			obs.GroupWaiting = waiting
		}
		if r.Status != kafka.StatusUnknown {
			sum := r.Summary
			obs.GroupStatus, obs.GroupStatusN, obs.GroupSummary = r.Status.String(), int(r.Status), &sum
			obs.Holds[SignalStalled] = r.Status == kafka.StatusStalled || r.Status == kafka.StatusStopped
		}
	}

	// The checkpoint against the brokers.
	var committedAt time.Time
	switch {
	case x.perr != nil:
		obs.CheckpointErr = x.perr.Error()
	case x.prog != nil:
		obs.CheckpointKnown, obs.Batch = true, x.prog.Batch
		if x.prog.Batch >= 0 && !x.prog.CommittedAt.IsZero() {
			committedAt = x.prog.CommittedAt
			obs.CommitAge = max(now.Sub(committedAt), 0)
		}
	}
	if !obs.CheckpointKnown || len(x.checkpoint) == 0 {
		return obs, clock
	}
	var waiting int64
	var parts []PartitionProgress
	anyWaits, ends, timesKnown := false, 0, true
	var oldestAt time.Time
	d.mu.Lock()
	for _, pl := range r.Partitions {
		tp := kafka.TopicPartition{Topic: pl.Topic, Partition: pl.Partition}
		off, ok := x.checkpoint[tp]
		pp := PartitionProgress{Topic: pl.Topic, Partition: pl.Partition, Waiting: -1, GroupWaiting: pl.Lag}
		if ok && pl.LogEnd >= 0 {
			if st, gone := d.starts[partKey{r.Cluster, pl.Topic, pl.Partition}]; gone && st > off {
				// Records retention deleted before the query read them no longer wait.
				obs.Lost += st - off
				off = st
			}
			ends++
			pp.Waiting = max(pl.LogEnd-off, 0)
			waiting += pp.Waiting
			if waitingBeyond(pl, off, allowed) {
				anyWaits = true
				if at, ok := d.times[recordKey{r.Cluster, pl.Topic, pl.Partition, off}]; ok {
					if oldestAt.IsZero() || at.Before(oldestAt) {
						oldestAt = at
					}
					// A record cannot have waited since before the last round that saw
					// nothing waiting, whatever its timestamp says.
					at = later(at, clock.Clear)
					pp.Oldest, pp.OldestKnown = max(now.Sub(at), 0), true
					if !obs.OldestKnown || pp.Oldest > obs.Oldest {
						obs.Oldest, obs.OldestKnown, obs.OldestAt = pp.Oldest, true, tpKey(tp)
					}
				} else {
					timesKnown = false
				}
			}
		}
		if keepParts {
			obs.Partitions = append(obs.Partitions, pp)
		}
		parts = append(parts, pp)
	}
	d.mu.Unlock()
	d.retentionRisk(x, &obs, parts)
	if ends == 0 {
		return obs, clock
	}
	obs.Waiting = waiting
	clock = clock.Observe(now, anyWaits, oldestAt)
	obs.WaitingSince = clock.Since
	if anyWaits && obs.CommitAge >= 0 {
		obs.WaitingFor = clock.For(now, committedAt)
		obs.Holds[SignalStale] = obs.WaitingFor >= obs.StaleAfter
	} else if obs.CommitAge >= 0 {
		obs.Holds[SignalStale] = false
	}
	if p.Detect.MaxLag > 0 {
		switch {
		case !anyWaits:
			obs.Holds[SignalLag] = false
		case obs.OldestKnown && obs.Oldest > p.Detect.MaxLag:
			// One partition known to be over is enough, whatever the others.
			obs.Holds[SignalLag] = true
		case timesKnown:
			obs.Holds[SignalLag] = false
		}
	}
	if !anyWaits {
		obs.Oldest, obs.OldestKnown = 0, true
	}
	return obs, clock
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// judge applies a pipeline's observation to its state, acts on the change, publishes its
// position and stores the record.
func (d *Detector) judge(ctx context.Context, x *detected, rec state.DetectRecord, tick time.Time) error {
	p, obs, prev := x.p, x.obs, x.prev
	var pub PublishState
	if len(rec.Publish) > 0 {
		_ = json.Unmarshal(rec.Publish, &pub)
	}
	next, change, fresh := Step(prev, obs)
	next.Waiting, next.Running = x.waiting, x.running
	if obs.BeatRun != "" {
		if prev.Run != "" && prev.Run != obs.BeatRun && next.Incident != "" {
			// A new runId is a restart: the thread of the pipeline's incident hears of it.
			if inc, err := d.Store.Get(ctx, next.Incident); err == nil && inc.Status != state.StatusResolved {
				_ = d.Store.NoteDetected(ctx, next.Incident, "detected",
					d.say(Message{Kind: MsgRestarted, Pipeline: p.Name, Observation: obs, Run: obs.BeatRun, PrevRun: prev.Run}))
			}
		}
		next.Run = obs.BeatRun
	}
	// Retention headroom: one warning in the channel per episode (past retention_warning);
	// past 90% the retention_risk symptom opens the incident.
	if w := warnShare(p); w > 0 && obs.Retention > 0 {
		switch {
		case obs.RetentionShare >= w && !prev.RetentionWarned:
			next.RetentionWarned = true
			if err := d.Store.EnqueueNotice(ctx, p.Channel, d.say(Message{Kind: MsgRetentionWarning, Pipeline: p.Name, Observation: obs})); err != nil {
				return err
			}
		case obs.RetentionShare < w:
			next.RetentionWarned = false
		}
	}
	obs.Active = next.Active()
	var errs []error
	if err := d.act(ctx, p, &next, change, fresh, obs); err != nil {
		errs = append(errs, err)
	}
	if p.Kafka.PublishGroup != "" {
		d.publish(ctx, x, &pub)
	}
	state, _ := json.Marshal(next)
	observation, _ := json.Marshal(obs)
	published, _ := json.Marshal(pub)
	if ok, err := d.Store.SaveDetectRecord(ctx, p.Name, stateRecord(tick, state, observation, published)); err != nil {
		errs = append(errs, err)
	} else if !ok {
		d.log().Warn("detection: a later round's record was stored first; this one is dropped", "pipeline", p.Name, "tick", tick)
	}
	return errors.Join(errs...)
}

// previous is the state a pipeline's last round left.
func (d *Detector) previous(name string, rec state.DetectRecord) DetectState {
	var prev DetectState
	if len(rec.State) > 0 {
		if err := json.Unmarshal(rec.State, &prev); err != nil {
			d.log().Warn("detection: stored state unreadable; starting afresh", "pipeline", name, "err", err)
			return DetectState{}
		}
	}
	return prev
}

func stateRecord(tick time.Time, st, obs, pub []byte) state.DetectRecord {
	return state.DetectRecord{Round: tick.UnixMilli(), State: st, Observation: obs, Publish: pub}
}

// fingerprint is detection's alert in a pipeline's incident.
func fingerprint(pipeline string) string { return "detect:" + pipeline }

// act turns a change of a pipeline's symptoms into Slack: the incident (or a notice) when a
// symptom begins, a thread note when another one joins, a root edit every round while it
// persists, one recovery note when all clear.
func (d *Detector) act(ctx context.Context, p *config.Pipeline, st *DetectState, change Change, fresh []Signal, obs Observation) error {
	active := st.Active()
	line := d.say(Message{Kind: MsgDetected, Pipeline: p.Name, Signals: active, Observation: obs})
	log := d.log().With("pipeline", p.Name)
	switch change {
	case Unchanged:
		return nil
	case Began:
		log.Warn("detection: symptom", "symptoms", active, "waiting", obs.Waiting, "batch", obs.Batch, "commit_age", obs.CommitAge)
		st.Suppressed = false
		if !p.Detect.OpenIncident {
			st.Noticed = true
			return d.Store.EnqueueNotice(ctx, p.Channel, d.say(Message{Kind: MsgNotice, Pipeline: p.Name, Signals: active, Observation: obs}))
		}
		return d.begin(ctx, p, st, active, obs, line)
	case Recovered:
		note := d.say(Message{Kind: MsgRecovered, Pipeline: p.Name, Observation: obs})
		log.Info("detection: recovered", "waiting", obs.Waiting, "batch", obs.Batch, "commit_age", obs.CommitAge)
		switch {
		case st.Suppressed:
			st.Suppressed = false
			return nil
		case st.Noticed:
			st.Noticed = false
			return d.Store.EnqueueNotice(ctx, p.Channel, d.say(Message{Kind: MsgRecoveredNotice, Pipeline: p.Name, Observation: obs}))
		case st.Incident == "":
			return nil
		}
		for range 3 { // follow merges
			rec, err := d.Store.RecoverDetected(ctx, st.Incident, fingerprint(p.Name), note)
			if err != nil {
				return err
			}
			if rec.MergedInto == "" {
				if rec.Resolves {
					log.Info("detection: the incident resolves: streamwatch opened it and nothing else fires", "incident", st.Incident)
				}
				if d.Recovered != nil && rec.Status != "" && rec.Status != state.StatusResolved {
					d.Recovered(st.Incident, p.Name)
				}
				return nil
			}
			st.Incident = rec.MergedInto
		}
		return nil
	}
	// Grew or Persists: the episode goes on.
	if st.Suppressed || st.Noticed || st.Incident == "" {
		return nil
	}
	// Symptoms still active that no longer hold are clearing: their numbers are no headline.
	var holding []Signal
	for _, sym := range active {
		if obs.Holds[sym] {
			holding = append(holding, sym)
		}
	}
	if len(holding) == 0 {
		line = d.say(Message{Kind: MsgClearing, Pipeline: p.Name, Signals: active, Observation: obs})
	} else {
		line = d.say(Message{Kind: MsgDetected, Pipeline: p.Name, Signals: holding, Observation: obs})
	}
	active = holding
	if change == Grew {
		log.Warn("detection: another symptom", "symptoms", fresh)
		if err := d.Store.NoteDetected(ctx, st.Incident, "detected",
			d.say(Message{Kind: MsgNowAlso, Pipeline: p.Name, Signals: fresh, Observation: obs})); err != nil {
			return err
		}
	}
	return d.update(ctx, p, st, active, obs, line)
}

// begin opens the pipeline's incident for a new episode, or joins its open one.
func (d *Detector) begin(ctx context.Context, p *config.Pipeline, st *DetectState, active []Signal, obs Observation, line string) error {
	if st.Incident != "" {
		// The last episode's incident may still be open (an alert that joined it still
		// fires): the symptom returns there.
		if inc, err := d.Store.Get(ctx, st.Incident); err == nil && inc.Status != state.StatusResolved {
			if err := d.Store.NoteDetected(ctx, st.Incident, "detected", d.say(Message{Kind: MsgAgain, Pipeline: p.Name, Signals: active, Observation: obs})); err != nil {
				return err
			}
			return d.update(ctx, p, st, active, obs, line)
		}
	}
	sev := p.Detect.Severity.Level()
	if sev == 0 {
		sev = 2 // detect.severity's default, for a Pipeline not read from a file
	}
	out, err := d.Store.RecordAlert(ctx, state.AlertRecord{
		Key: fingerprint(p.Name), Fingerprint: fingerprint(p.Name), Title: d.say(Message{Kind: MsgTitle, Pipeline: p.Name, Signals: active, Observation: obs}), Severity: sev,
		Pipeline: p.Name, Channel: p.Channel, Source: state.SourceDetect, Detail: line,
		// A label silence can name them: alertname=streamwatch_detected, pipeline=….
		Labels: map[string]string{"alertname": "streamwatch_detected", "pipeline": p.Name},
	})
	if err != nil {
		return err
	}
	st.Incident = out.Incident
	switch out.Result {
	case state.ResultSilenced:
		d.log().Info("detection: a label silence holds the symptom; nothing is posted until it recovers",
			"pipeline", p.Name, "silence", out.Silence)
		st.Suppressed = true
		return nil
	case state.ResultOpened:
		st.Own = true
		// Its repeats edit the root; the thread hears only of changes.
		if err := d.Store.MarkQuiet(ctx, out.Incident); err != nil {
			return err
		}
		if err := d.update(ctx, p, st, active, obs, line); err != nil {
			return err
		}
		if at := faultAt(active, obs); !at.IsZero() {
			if err := d.Store.SetFaultAt(ctx, out.Incident, at); err != nil {
				return err
			}
			if d.TimeToDetect != nil {
				d.TimeToDetect(max(obs.At.Sub(at), 0))
			}
		}
		return nil
	default: // correlated into the pipeline's open incident, or that key's own incident is open
		st.Own = false
		if inc, err := d.Store.Get(ctx, out.Incident); err == nil {
			st.Own = inc.Source == state.SourceDetect
		}
		return d.update(ctx, p, st, active, obs, line)
	}
}

// update edits the root of the episode's incident with this round's numbers, following a
// merge; a person's resolution while the symptom holds silences the episode.
func (d *Detector) update(ctx context.Context, p *config.Pipeline, st *DetectState, active []Signal, obs Observation, line string) error {
	for range 3 {
		title := ""
		if st.Own && len(active) > 0 {
			title = d.say(Message{Kind: MsgTitle, Pipeline: p.Name, Signals: active, Observation: obs})
		}
		u, err := d.Store.UpdateDetected(ctx, st.Incident, line, title)
		if err != nil {
			return err
		}
		switch {
		case u.MergedInto != "":
			st.Incident, st.Own = u.MergedInto, false
			continue
		case u.Status == state.StatusResolved || u.Status == "":
			d.log().Info("detection: the incident was closed while the symptom holds; nothing more is posted until it recovers",
				"pipeline", p.Name, "incident", st.Incident)
			st.Suppressed = true
		}
		return nil
	}
	return nil
}

// say words a message: text is made in commands (Words).
func (d *Detector) say(m Message) string {
	if d.Words != nil {
		return d.Words(m)
	}
	return words(m)
}

// publish commits the checkpoint's processed offsets to the pipeline's publish group
// (planPublish says what may be committed). A refusal is logged when it begins or changes,
// and kept for `status`.
func (d *Detector) publish(ctx context.Context, x *detected, pub *PublishState) {
	p := x.p
	log := d.log().With("pipeline", p.Name, "publish_group", p.Kafka.PublishGroup)
	if pub.Group != p.Kafka.PublishGroup {
		*pub = PublishState{Group: p.Kafka.PublishGroup}
	}
	if x.prog == nil || x.prog.Batch < 0 || len(x.checkpoint) == 0 || x.round.Err != nil {
		return // nothing to publish this round
	}
	refuse := func(r Refusal) {
		if pub.refuse(r, d.now()) {
			log.Warn("publish_group: not committed", "refusal", r.Code, "members", r.Members, "err", r.Err, "held", r.Held)
		}
	}
	plan := planPublish(x.checkpoint, x.round.Publish, *pub)
	if plan.refusal != nil {
		refuse(*plan.refusal)
		return
	}
	if len(plan.offsets) > 0 {
		err := d.Kafka.CommitOffsets(ctx, p.Kafka.Cluster, p.Kafka.PublishGroup, plan.offsets,
			fmt.Sprintf("streamwatch: checkpoint of %s, batch %d", p.Name, x.prog.Batch))
		var refused *kafka.CommitRefusedError
		switch {
		case errors.As(err, &refused):
			refuse(Refusal{Code: RefuseCluster, Commit: refused.Refusal, Err: fmt.Sprint(refused.Err)})
			return
		case err != nil:
			log.Warn("publish_group: commit failed; next round tries again", "err", err)
			return
		}
		if pub.Committed == nil {
			pub.Committed = map[string]int64{}
		}
		for tp, off := range plan.offsets {
			pub.Committed[tpKey(tp)] = off
		}
		pub.Batch, pub.At = x.prog.Batch, d.now()
		if len(plan.rewound) > 0 {
			msg := d.say(Message{Kind: MsgPublishRewound, Pipeline: p.Name, Observation: x.obs, Group: p.Kafka.PublishGroup, Batch: x.prog.Batch, Rewound: plan.rewound})
			log.Warn("publish_group: the checkpoint went back; the group follows it", "partitions", plan.rewound)
			if err := d.Store.EnqueueNotice(ctx, p.Channel, msg); err != nil {
				log.Warn("publish_group: notice", "err", err)
			}
		}
	}
	if len(plan.held) > 0 {
		refuse(Refusal{Code: RefuseGroupAhead, Held: plan.held})
		return
	}
	if pub.Refusing() {
		log.Info("publish_group: committing again", "was", pub.Refusal, "since", pub.Since)
	}
	pub.committed()
}

// Observations returns the last observation of every pipeline detection judges, by pipeline.
func (d *Detector) Observations(ctx context.Context) (map[string]Observation, error) {
	names := d.Pipelines()
	recs, err := d.Store.DetectRecords(ctx, names...)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Observation, len(recs))
	for name, r := range recs {
		var obs Observation
		if len(r.Observation) > 0 && json.Unmarshal(r.Observation, &obs) == nil {
			out[name] = obs
		}
	}
	return out, nil
}

// Pipelines lists the pipelines detection judges: those with Kafka settings.
func (d *Detector) Pipelines() []string {
	var out []string
	for _, p := range d.Config.Pipelines {
		if p.Kafka.Enabled() {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// StatusNotes are what `status` and the digest add below the table for detection: active
// symptoms, unwatched liveness and publish_group refusals, as data (commands words them).
func (d *Detector) StatusNotes(ctx context.Context) ([]StatusNote, error) {
	names := d.Pipelines()
	recs, err := d.Store.DetectRecords(ctx, names...)
	if err != nil {
		return nil, err
	}
	var notes []StatusNote
	for _, name := range names {
		r, ok := recs[name]
		if !ok {
			continue
		}
		var st DetectState
		var obs Observation
		var pub PublishState
		_ = json.Unmarshal(r.State, &st)
		_ = json.Unmarshal(r.Observation, &obs)
		_ = json.Unmarshal(r.Publish, &pub)
		if active := st.Active(); len(active) > 0 {
			notes = append(notes, StatusNote{Kind: NoteDetected, Pipeline: name, Active: active, Observation: obs, Incident: st.Incident})
		}
		if obs.Liveness != "" && obs.HeartbeatAfter > 0 {
			notes = append(notes, StatusNote{Kind: NoteLivenessUnwatched, Pipeline: name, Observation: obs})
		}
		if pub.Refusing() {
			notes = append(notes, StatusNote{Kind: NotePublishRefused, Pipeline: name, Publish: pub})
		}
	}
	return notes, nil
}
