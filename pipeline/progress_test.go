package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/charts"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

const chartPipelineYAML = "    kafka: {cluster: main, group: sms-prod, topics: [t]}\n    checkpoint: {location: /tmp/x, stale_after: 10m}\n"
const chartMore = "kafka: {clusters: {main: {brokers: ['127.0.0.1:9092']}}}\ncharts: {window: 3h, time_zone: Europe/Paris}\n"

// stalledRounds are 4 h of 30 s rounds of a pipeline that commits a batch a round until
// 12:30, stalls until 13:05 (records pile up, the oldest ages), then commits again.
func stalledRounds(start time.Time) []state.ProgressSample {
	stallAt := time.Date(2026, 12, 5, 12, 30, 0, 0, time.UTC)
	resumed := time.Date(2026, 12, 5, 13, 5, 0, 0, time.UTC)
	var out []state.ProgressSample
	batch := int64(0)
	for at := start; at.Before(start.Add(4 * time.Hour)); at = at.Add(30 * time.Second) {
		s := state.ProgressSample{At: at, Waiting: 3, GroupLag: 2, Oldest: 4 * time.Second, Batch: batch, CommittedAt: at.Add(-5 * time.Second)}
		switch {
		case !at.After(stallAt), !at.Before(resumed):
			batch++
		default:
			s.Waiting, s.GroupLag, s.Oldest = int64(at.Sub(stallAt)/time.Second), int64(at.Sub(stallAt)/time.Second)-7, at.Sub(stallAt)
			s.Batch, s.CommittedAt = batch-1, stallAt.Add(-5*time.Second)
		}
		out = append(out, s)
	}
	return out
}

// TestChartDataAreTheStoredSamples: the series a chart hands to the renderer are the samples
// Redis keeps after downsampling, point by point; commits are the batches the samples saw,
// each once; the stall starts at the last commit before it.
func TestChartDataAreTheStoredSamples(t *testing.T) {
	ctx := context.Background()
	cfg := parseConfig(t, chartPipelineYAML, chartMore)
	st, clock := newStore(t)
	progress := state.NewProgress(st, cfg.Charts.Window)
	start := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	rounds := stalledRounds(start)
	for _, r := range rounds {
		if err := progress.Record(ctx, map[string]state.ProgressSample{"sms-replies": r}); err != nil {
			t.Fatal(err)
		}
	}
	now := rounds[len(rounds)-1].At.Add(10 * time.Second)
	clock.Add(now.Sub(clock.Now()))
	c := &pipeline.Charts{Config: cfg, Samples: progress, Incidents: st, Now: clock.Now}
	ch, err := c.Chart(ctx, "sms-replies", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := progress.Samples(ctx, "sms-replies", now.Add(-3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 120+120 || len(ch.Points) != len(stored) {
		t.Fatalf("the chart has %d points; Redis keeps %d samples of the window (want 240: 2 h of minutes, 1 h of rounds)", len(ch.Points), len(stored))
	}
	for i, s := range stored {
		want := charts.Point{At: s.At, Waiting: s.Waiting, GroupLag: s.GroupLag, Oldest: int64(s.Oldest / time.Second)}
		if ch.Points[i] != want {
			t.Errorf("point %d: %+v, stored %+v", i, ch.Points[i], s)
		}
	}
	if ch.From != stored[0].At || ch.To != now || ch.TimeZone != "Europe/Paris" || ch.Pipeline != "sms-replies" {
		t.Errorf("chart of %s from %v to %v in %q", ch.Pipeline, ch.From, ch.To, ch.TimeZone)
	}
	// Commits: every batch a sample saw, once, in order.
	for i := 1; i < len(ch.Commits); i++ {
		if ch.Commits[i].Batch <= ch.Commits[i-1].Batch || !ch.Commits[i].At.After(ch.Commits[i-1].At) {
			t.Fatalf("commits out of order or repeated at %d: %+v %+v", i, ch.Commits[i-1], ch.Commits[i])
		}
	}
	stallAt := time.Date(2026, 12, 5, 12, 30, 0, 0, time.UTC).Add(-5 * time.Second)
	if ch.Stall == nil || !ch.Stall.From.Equal(stallAt) || !ch.Stall.To.Equal(time.Date(2026, 12, 5, 13, 4, 55, 0, time.UTC)) {
		t.Errorf("stall %+v, want from the last commit before it (%v) to the first after it", ch.Stall, stallAt)
	}
	if slices.ContainsFunc(ch.Commits, func(c charts.Commit) bool { return c.At.After(stallAt) && c.At.Before(ch.Stall.To) }) {
		t.Error("a commit inside the stall")
	}
}

// TestChartEvents: the chart of an incident marks its opening, its acknowledgment, the
// pipeline's repair (from the audit trail) and its recovery (the timeline), each at its time.
func TestChartEvents(t *testing.T) {
	ctx := context.Background()
	cfg := parseConfig(t, chartPipelineYAML, chartMore)
	st, clock := newStore(t)
	progress := state.NewProgress(st, cfg.Charts.Window)
	start := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for _, r := range stalledRounds(start) {
		if err := progress.Record(ctx, map[string]state.ProgressSample{"sms-replies": r}); err != nil {
			t.Fatal(err)
		}
	}
	at := func(h, m int) time.Time { return time.Date(2026, 12, 5, h, m, 0, 0, time.UTC) }
	clock.Add(at(12, 42).Sub(clock.Now()))
	out, err := st.RecordAlert(ctx, state.AlertRecord{Key: "k", Fingerprint: "f", Title: "stalled", Severity: 2, Pipeline: "sms-replies", Channel: "C0PIPE", Source: "alertmanager"})
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(at(12, 47).Sub(clock.Now()))
	if err := st.Acknowledge(ctx, out.Incident, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := st.Audit(ctx, state.AuditEntry{At: at(12, 58), Actor: "alice", Action: "checkpoint repair", Outcome: "done", Pipeline: "sms-replies"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Audit(ctx, state.AuditEntry{At: at(12, 55), Actor: "bob", Action: "checkpoint repair", Outcome: "refused", Pipeline: "sms-replies"}); err != nil {
		t.Fatal(err)
	}
	clock.Add(at(13, 6).Sub(clock.Now()))
	if _, err := st.Note(ctx, out.Incident, "remediation", "streamwatch", "Recovery: sms-replies is progressing again.", ""); err != nil {
		t.Fatal(err)
	}
	clock.Add(at(13, 59).Sub(clock.Now()))
	c := &pipeline.Charts{Config: cfg, Samples: progress, Incidents: st, Now: clock.Now}
	ch, err := c.Chart(ctx, "sms-replies", 2*time.Hour, out.Incident)
	if err != nil {
		t.Fatal(err)
	}
	want := []charts.Event{{At: at(12, 42), Kind: charts.Opened, Label: out.Incident + " opened"}, {At: at(12, 47), Kind: charts.Acknowledged, Label: "acknowledged"},
		{At: at(12, 58), Kind: charts.Fixed, Label: "repaired"}, {At: at(13, 6), Kind: charts.Recovered, Label: "recovered"}}
	if !slices.EqualFunc(ch.Events, want, func(a, b charts.Event) bool { return a.At.Equal(b.At) && a.Kind == b.Kind && a.Label == b.Label }) {
		t.Errorf("events %+v\nwant %+v", ch.Events, want)
	}
	if !ch.From.Equal(at(11, 59)) {
		t.Errorf("a 2 h chart begins %v", ch.From)
	}
}

// TestChartCannotBeDrawn: no samples, no kafka section, charts off: each says why, with its
// numbers (commands.TestChartCommand words them).
func TestChartCannotBeDrawn(t *testing.T) {
	ctx := context.Background()
	st, clock := newStore(t)
	for _, tc := range []struct {
		name, pipelineYAML, more string
		want                     pipeline.NoChartError
	}{
		{"no samples yet", chartPipelineYAML, chartMore, pipeline.NoChartError{Why: pipeline.NoChartYet, Pipeline: "sms-replies", Span: 3 * time.Hour, Every: 30 * time.Second}},
		{"no kafka section", "", "", pipeline.NoChartError{Why: pipeline.NoChartNoKafka, Pipeline: "sms-replies", Unsampled: true}},
		{"charts off", chartPipelineYAML, chartMore + "", pipeline.NoChartError{Why: pipeline.NoChartOff, Pipeline: "sms-replies", Unsampled: true}},
	} {
		more := tc.more
		if tc.name == "charts off" {
			more = "kafka: {clusters: {main: {brokers: ['127.0.0.1:9092']}}}\ncharts: {enabled: false}\n"
		}
		cfg := parseConfig(t, tc.pipelineYAML, more)
		c := &pipeline.Charts{Config: cfg, Samples: state.NewProgress(st, cfg.Charts.Window), Incidents: st, Now: clock.Now}
		_, err := c.Chart(ctx, "sms-replies", 0, "")
		var nc *pipeline.NoChartError
		if !errors.As(err, &nc) || *nc != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, err, tc.want)
		}
	}
}

// TestStalls: a stall runs from the last commit before the checkpoint went stale with records
// waiting to the next commit, or to the first round with nothing waiting; one still going has
// no end; stale commits with nothing waiting are no stall.
func TestStalls(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	sample := func(m int, waiting int64, batch int64, committed int) state.ProgressSample {
		return state.ProgressSample{At: at(m), Waiting: waiting, GroupLag: -1, Oldest: -1, Batch: batch, CommittedAt: at(committed)}
	}
	for _, tc := range []struct {
		name    string
		samples []state.ProgressSample
		want    []charts.Span
	}{
		{"progressing", []state.ProgressSample{sample(0, 5, 1, 0), sample(5, 5, 2, 5), sample(10, 5, 3, 10)}, nil},
		{"quiet topic", []state.ProgressSample{sample(0, 0, 1, 0), sample(30, 0, 1, 0), sample(60, 1, 1, 0)}, nil},
		{"stall, then a commit", []state.ProgressSample{sample(0, 5, 1, 0), sample(11, 50, 1, 0), sample(20, 90, 1, 0), sample(25, 0, 2, 24)},
			[]charts.Span{{From: at(0), To: at(24)}}},
		{"stall, then nothing waits", []state.ProgressSample{sample(0, 5, 1, 0), sample(12, 50, 1, 0), sample(20, 0, 1, 0)},
			[]charts.Span{{From: at(0), To: at(20)}}},
		{"two stalls, the second goes on", []state.ProgressSample{sample(0, 5, 1, 0), sample(15, 5, 1, 0), sample(16, 5, 2, 16),
			sample(40, 7, 2, 16)}, []charts.Span{{From: at(0), To: at(16)}, {From: at(16)}}},
		{"a quiet topic, then a burst the query never reads: the stall starts with the burst",
			[]state.ProgressSample{sample(0, 0, 1, 0), sample(20, 0, 1, 0), sample(40, 90, 1, 0), sample(55, 90, 1, 0)},
			[]charts.Span{{From: at(40)}}},
		{"no checkpoint", []state.ProgressSample{{At: at(0), Waiting: 50, Batch: -1}, {At: at(30), Waiting: 90, Batch: -1}}, nil},
	} {
		got := pipeline.Stalls(tc.samples, 10*time.Minute, 1)
		if !slices.EqualFunc(got, tc.want, func(a, b charts.Span) bool { return a.From.Equal(b.From) && a.To.Equal(b.To) }) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
