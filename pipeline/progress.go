package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/charts"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/state"
)

// ProgressStore keeps detection's samples for charts (state.Progress).
type ProgressStore interface {
	Record(ctx context.Context, samples map[string]state.ProgressSample) error
}

// keepProgress stores this round's numbers of every pipeline it observed, for charts.
func (d *Detector) keepProgress(ctx context.Context, ds []*detected) error {
	if d.Progress == nil || len(ds) == 0 {
		return nil
	}
	samples := make(map[string]state.ProgressSample, len(ds))
	for _, x := range ds {
		// A round that learnt nothing of a pipeline (its cluster unreachable, no checkpoint)
		// is no sample: a chart says there are none rather than draw nothing.
		if s := ProgressOf(x.obs, x.prog); s.Waiting >= 0 || s.GroupLag >= 0 || s.Batch >= 0 {
			samples[x.p.Name] = s
		}
	}
	return d.Progress.Record(ctx, samples)
}

// ProgressOf is the progress sample of a round's observation and checkpoint read.
func ProgressOf(obs Observation, prog *spark.Progress) state.ProgressSample {
	s := state.ProgressSample{At: obs.At, Waiting: obs.Waiting, GroupLag: obs.GroupWaiting, Oldest: -1, Batch: -1}
	if obs.OldestKnown && obs.Waiting >= 0 {
		s.Oldest = obs.Oldest
	}
	if prog != nil && prog.Batch >= 0 && !prog.CommittedAt.IsZero() {
		s.Batch, s.CommittedAt = prog.Batch, prog.CommittedAt
	}
	return s
}

// ChartSamples reads a pipeline's stored samples (state.Progress).
type ChartSamples interface {
	Window() time.Duration
	Samples(ctx context.Context, pipeline string, since time.Time) ([]state.ProgressSample, error)
	Probes(ctx context.Context, pipeline string, since time.Time) ([]state.ProbeMark, error)
}

// ChartIncidents reads the incident a chart marks and the pipeline's remediations
// (state.Store).
type ChartIncidents interface {
	Get(ctx context.Context, id string) (*state.Incident, error)
	FullTimeline(ctx context.Context, id string) ([]state.Event, int64, error)
	AuditTrail(ctx context.Context, match func(state.AuditEntry) bool, n, scan int) ([]state.AuditEntry, error)
	PipelineIncident(ctx context.Context, pipeline string) (string, error)
}

// Charts assembles progress charts: a pipeline's stored samples, its stall, and the events of
// an incident (opened, acknowledged, the checkpoint repairs and restores of its pipeline,
// recovered).
type Charts struct {
	Config    *config.Config
	Samples   ChartSamples
	Incidents ChartIncidents
	Now       func() time.Time
}

// NoChartError says why a pipeline's chart cannot be drawn (commands words it). Unsampled:
// the pipeline has no samples and never will (charts are off, or it has no kafka section).
type NoChartError struct {
	Why      NoChart
	Pipeline string
	// Span and Every are, for NoChartYet, the span without samples and the sampling interval.
	Span, Every time.Duration
	Unsampled   bool
}

// NoChart is why a chart cannot be drawn.
type NoChart string

// The reasons a chart cannot be drawn.
const (
	NoChartOff     NoChart = "charts_off" // charts.enabled is false
	NoChartNoKafka NoChart = "no_kafka"   // the pipeline has no kafka section: nothing samples it
	NoChartYet     NoChart = "no_samples" // no progress sample in Span yet
)

func (e *NoChartError) Error() string { return e.Pipeline + ": " + string(e.Why) }

// auditScan bounds how far back the audit trail is read for a chart's repairs.
const auditScan = 20000

// minChartSpan is the narrowest span a chart shows, however few samples there are.
const minChartSpan = 10 * time.Minute

// Chart assembles the chart of pipeline over the last span (0: charts.window), marking
// incident's events ("": the pipeline's open incident, if any). A chart that cannot be drawn
// is a *NoChartError.
func (c *Charts) Chart(ctx context.Context, pipeline string, span time.Duration, incident string) (charts.Chart, error) {
	cfg := c.Config
	p, ok := cfg.Pipeline(pipeline)
	switch {
	case !ok:
		return charts.Chart{}, fmt.Errorf("no pipeline named %q", pipeline)
	case !cfg.Charts.Enabled || c.Samples == nil:
		return charts.Chart{}, &NoChartError{Why: NoChartOff, Pipeline: pipeline, Unsampled: true}
	case !p.Kafka.Enabled():
		return charts.Chart{}, &NoChartError{Why: NoChartNoKafka, Pipeline: pipeline, Unsampled: true}
	}
	window := c.Samples.Window()
	if span <= 0 || span > window {
		span = window
	}
	to := c.Now()
	from := to.Add(-span)
	samples, err := c.Samples.Samples(ctx, pipeline, from)
	if err != nil {
		return charts.Chart{}, err
	}
	if len(samples) == 0 {
		return charts.Chart{}, &NoChartError{Why: NoChartYet, Pipeline: pipeline, Span: span, Every: cfg.Kafka.SampleInterval}
	}
	// The span begins with the first sample, but is never narrower than minChartSpan.
	if first := samples[0].At; first.After(from) {
		from = first
	}
	if to.Sub(from) < min(minChartSpan, span) {
		from = to.Add(-min(minChartSpan, span))
	}
	ch := charts.Chart{Pipeline: pipeline, From: from, To: to, TimeZone: cfg.Charts.TimeZone}
	var last state.ProgressSample
	for i, s := range samples {
		pt := charts.Point{At: s.At, Waiting: s.Waiting, GroupLag: s.GroupLag, Oldest: -1}
		if s.Oldest >= 0 {
			pt.Oldest = int64(s.Oldest / time.Second)
		}
		ch.Points = append(ch.Points, pt)
		if s.Batch >= 0 && !s.CommittedAt.IsZero() && (i == 0 || s.Batch != last.Batch || !s.CommittedAt.Equal(last.CommittedAt)) &&
			!s.CommittedAt.Before(from) {
			ch.Commits = append(ch.Commits, charts.Commit{At: s.CommittedAt, Batch: s.Batch})
		}
		last = s
	}
	probes, err := c.Samples.Probes(ctx, pipeline, from)
	if err != nil {
		return charts.Chart{}, err
	}
	for _, pr := range probes {
		ch.Probes = append(ch.Probes, charts.Probe{At: pr.At, OK: pr.OK})
	}

	var inc *state.Incident
	if incident == "" && c.Incidents != nil {
		incident, _ = c.Incidents.PipelineIncident(ctx, pipeline)
	}
	if incident != "" && c.Incidents != nil {
		if inc, err = c.Incidents.Get(ctx, incident); err != nil && !errors.Is(err, state.ErrNotFound) {
			return charts.Chart{}, err
		}
	}
	events, err := c.events(ctx, p, inc, from, to)
	if err != nil {
		return charts.Chart{}, err
	}
	ch.Events = events
	var opened time.Time
	if inc != nil {
		opened = inc.FirstSeen
	}
	ch.Stall = pickStall(Stalls(samples, p.Checkpoint.StaleAfter, p.Kafka.AllowedLag), opened)
	return ch, nil
}

// events are the incident's opening, acknowledgment and recoveries, and the pipeline's
// confirmed checkpoint repairs and restores, within the span, in time order.
func (c *Charts) events(ctx context.Context, p *config.Pipeline, inc *state.Incident, from, to time.Time) ([]charts.Event, error) {
	var out []charts.Event
	add := func(at time.Time, kind charts.EventKind, label string) {
		if !at.IsZero() && !at.Before(from) && !at.After(to) {
			out = append(out, charts.Event{At: at, Kind: kind, Label: label})
		}
	}
	if inc != nil {
		add(inc.FirstSeen, charts.Opened, inc.ID+" opened")
		add(inc.AckAt, charts.Acknowledged, "acknowledged")
		tl, _, err := c.Incidents.FullTimeline(ctx, inc.ID)
		if err != nil {
			return nil, err
		}
		for _, e := range tl {
			// Detection's recovery, or the recovery watch's report of progress.
			if e.Name == state.EventRecovered || (e.Name == state.EventRemediation && e.Actor == "streamwatch" && strings.HasPrefix(e.Detail, "Recovery:")) {
				add(e.At, charts.Recovered, "recovered")
			}
		}
	}
	if c.Incidents != nil {
		fixes, err := c.Incidents.AuditTrail(ctx, func(e state.AuditEntry) bool {
			return e.Pipeline == p.Name && e.Outcome == "done" && (e.Action == auditAction(KindRepair) || e.Action == auditAction(KindRestore)) &&
				!e.At.Before(from) && !e.At.After(to)
		}, 20, auditScan)
		if err != nil {
			return nil, err
		}
		for _, f := range fixes {
			label := "repaired"
			if f.Action == auditAction(KindRestore) {
				label = "restored"
			}
			add(f.At, charts.Fixed, label)
		}
	}
	sortEvents(out)
	return out, nil
}

func sortEvents(es []charts.Event) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].At.Before(es[j-1].At); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

// Stalls are the spans in which the checkpoint made no progress while records waited beyond
// the allowed lag, as the samples show them, with detection's clock (clock.go): a stall starts
// when records began to wait with no commit — the oldest waiting record's time, never before
// the last commit nor the last sample with nothing waiting (a quiet topic's idle time is no
// stall) — once they have waited staleAfter; it ends at the next commit, or at the first
// sample with nothing waiting; an ongoing stall has no end.
func Stalls(samples []state.ProgressSample, staleAfter time.Duration, allowed int64) []charts.Span {
	var out []charts.Span
	var cur *charts.Span
	var commit, clear, begin time.Time
	end := func(at time.Time) {
		if cur != nil {
			out = append(out, charts.Span{From: cur.From, To: at})
			cur = nil
		}
	}
	for _, s := range samples {
		committed := s.Batch >= 0 && !s.CommittedAt.IsZero()
		if committed && !s.CommittedAt.Equal(commit) {
			if !commit.IsZero() {
				end(s.CommittedAt)
			}
			commit, begin = s.CommittedAt, time.Time{}
		}
		switch {
		case s.Waiting < 0: // not known this round: counts neither way
		case s.Waiting <= allowed:
			end(s.At)
			clear, begin = s.At, time.Time{}
		default:
			if begin.IsZero() {
				begin = s.At
				if s.Oldest >= 0 {
					begin = s.At.Add(-s.Oldest)
				}
				begin = later(later(begin, clear), commit)
			}
			if cur == nil && committed && s.At.Sub(begin) >= staleAfter {
				cur = &charts.Span{From: begin}
			}
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// pickStall is the stall a chart shades: the one under way when the incident opened, else
// the newest.
func pickStall(stalls []charts.Span, opened time.Time) *charts.Span {
	if len(stalls) == 0 {
		return nil
	}
	if !opened.IsZero() {
		for i := range stalls {
			if !opened.Before(stalls[i].From) && (stalls[i].To.IsZero() || !opened.After(stalls[i].To)) {
				return &stalls[i]
			}
		}
	}
	return &stalls[len(stalls)-1]
}

// auditAction is the audit trail's action of a repair or restore: its command's path.
func auditAction(k Kind) string { return "checkpoint " + string(k) }
