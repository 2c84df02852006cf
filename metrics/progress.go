package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Progress is one pipeline's progress as detection last saw it (docs/detection.md#metrics).
// A field whose Known flag is false is left out of /metrics rather than reported as 0.
type Progress struct {
	Pipeline string
	// ObservedAt is when detection last judged the pipeline.
	ObservedAt time.Time
	// Records waiting beyond the checkpoint's offsets and beyond the documented group's.
	CheckpointWaiting      float64
	CheckpointWaitingKnown bool
	GroupWaiting           float64
	GroupWaitingKnown      bool
	// OldestSeconds is the age of the oldest record the checkpoint has not reached.
	OldestSeconds float64
	OldestKnown   bool
	// CommitAgeSeconds is the age of the checkpoint's newest commit.
	CommitAgeSeconds float64
	CommitAgeKnown   bool
	// LagStatus is the evaluator's status of the documented group (see the HELP text).
	LagStatus      float64
	LagStatusKnown bool
	// ProbeStatus is the newest probe's status: 0 OK, 1 DEGRADED, 2 FAILED.
	ProbeStatus      float64
	ProbeStatusKnown bool
	// Signals are detection's symptoms, each active (true) or not.
	Signals map[string]bool
	// Partitions are per-partition numbers, only with http.metrics_partitions.
	Partitions []PartitionProgress
}

// PartitionProgress is one partition's part of Progress.
type PartitionProgress struct {
	Topic                  string
	Partition              int32
	CheckpointWaiting      float64
	CheckpointWaitingKnown bool
	GroupWaiting           float64
	GroupWaitingKnown      bool
	OldestSeconds          float64
	OldestKnown            bool
}

// ProgressSource reads every pipeline's progress (from Redis: every replica answers alike).
type ProgressSource func(ctx context.Context) ([]Progress, error)

// progressTimeout bounds the read behind one scrape.
const progressTimeout = 2 * time.Second

var (
	descWaiting = prometheus.NewDesc("streamwatch_pipeline_records_waiting",
		"Records the brokers hold beyond a pipeline's position: from=\"checkpoint\" beyond the Spark checkpoint's processed offsets (its newest committed batch), from=\"group\" beyond the documented consumer group's commits.",
		[]string{"pipeline", "from"}, nil)
	descOldest = prometheus.NewDesc("streamwatch_pipeline_oldest_waiting_seconds",
		"Age of the oldest record the pipeline's checkpoint has not reached (Spark's true lag), from the record's own timestamp; 0 when nothing waits.",
		[]string{"pipeline"}, nil)
	descCommitAge = prometheus.NewDesc("streamwatch_pipeline_checkpoint_commit_age_seconds",
		"Age of the pipeline's newest checkpoint commit (commits/<N>) at the last sampling round (see streamwatch_pipeline_observed_timestamp_seconds).", []string{"pipeline"}, nil)
	descLagStatus = prometheus.NewDesc("streamwatch_pipeline_lag_status",
		"The lag evaluator's status of the documented group: 0 UNKNOWN, 1 OK, 2 NO_COMMITS, 3 WARNING, 4 REWOUND, 5 STALLED, 6 STOPPED.",
		[]string{"pipeline"}, nil)
	descProbe = prometheus.NewDesc("streamwatch_pipeline_probe_status",
		"The newest checkpoint-access probe of the pipeline: 0 OK, 1 DEGRADED, 2 FAILED (absent before the first probe).",
		[]string{"pipeline"}, nil)
	descSignal = prometheus.NewDesc("streamwatch_pipeline_symptom_active",
		"1 while detection finds the symptom (it held two sampling rounds and has not been clear for two): checkpoint_stale, group_stalled, lag.",
		[]string{"pipeline", "symptom"}, nil)
	descObserved = prometheus.NewDesc("streamwatch_pipeline_observed_timestamp_seconds",
		"When detection last judged the pipeline (Unix time): a sampling round that stops running shows here.",
		[]string{"pipeline"}, nil)
	descPartWaiting = prometheus.NewDesc("streamwatch_partition_records_waiting",
		"streamwatch_pipeline_records_waiting per partition (http.metrics_partitions).",
		[]string{"pipeline", "topic", "partition", "from"}, nil)
	descPartOldest = prometheus.NewDesc("streamwatch_partition_oldest_waiting_seconds",
		"streamwatch_pipeline_oldest_waiting_seconds per partition (http.metrics_partitions).",
		[]string{"pipeline", "topic", "partition"}, nil)
)

// progressCollector reports Progress at every scrape.
type progressCollector struct{ src ProgressSource }

// WatchProgress makes /metrics report the pipelines' progress read from src at every scrape.
func (m *Metrics) WatchProgress(src ProgressSource) {
	m.reg.MustRegister(progressCollector{src})
}

func (progressCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descWaiting, descOldest, descCommitAge, descLagStatus, descProbe, descSignal,
		descObserved, descPartWaiting, descPartOldest} {
		ch <- d
	}
}

func (c progressCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), progressTimeout)
	defer cancel()
	ps, err := c.src(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descObserved, err)
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, p := range ps {
		name := p.Pipeline
		if !p.ObservedAt.IsZero() {
			gauge(descObserved, float64(p.ObservedAt.UnixMilli())/1000, name)
		}
		if p.CheckpointWaitingKnown {
			gauge(descWaiting, p.CheckpointWaiting, name, "checkpoint")
		}
		if p.GroupWaitingKnown {
			gauge(descWaiting, p.GroupWaiting, name, "group")
		}
		if p.OldestKnown {
			gauge(descOldest, p.OldestSeconds, name)
		}
		if p.CommitAgeKnown {
			gauge(descCommitAge, p.CommitAgeSeconds, name)
		}
		if p.LagStatusKnown {
			gauge(descLagStatus, p.LagStatus, name)
		}
		if p.ProbeStatusKnown {
			gauge(descProbe, p.ProbeStatus, name)
		}
		for s, on := range p.Signals {
			v := 0.0
			if on {
				v = 1
			}
			gauge(descSignal, v, name, s)
		}
		for _, pp := range p.Partitions {
			part := strconv.Itoa(int(pp.Partition))
			if pp.CheckpointWaitingKnown {
				gauge(descPartWaiting, pp.CheckpointWaiting, name, pp.Topic, part, "checkpoint")
			}
			if pp.GroupWaitingKnown {
				gauge(descPartWaiting, pp.GroupWaiting, name, pp.Topic, part, "group")
			}
			if pp.OldestKnown {
				gauge(descPartOldest, pp.OldestSeconds, name, pp.Topic, part)
			}
		}
	}
}
