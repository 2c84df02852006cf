package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/state"
)

// ProbeTarget is what the probes need to know of one pipeline.
type ProbeTarget struct {
	Name         string
	Description  string // pipelines[].description
	Channel      string
	Probe        probe.Options
	OpenIncident bool // probe.open_incident: a failure opens incident "probe:<name>"
	Scheduled    bool // the probe has a schedule
}

// LagSource gives the recent total lag samples of a pipeline (oldest first) for the digest
// (LagSamples).
type LagSource interface {
	RecentLag(ctx context.Context, pipeline string) ([]int64, error)
}

// ProbeStore records probe results and announces changes of health: notices, and the
// incidents of pipelines whose failing probe opens one (state.Store).
type ProbeStore interface {
	LastProbes
	RecordProbe(ctx context.Context, pipeline string, r state.ProbeRecord) (string, error)
	ProbeHistory(ctx context.Context, pipeline string, n int64) ([]state.ProbeRecord, error)
	RecordAlert(ctx context.Context, a state.AlertRecord) (state.Outcome, error)
	MarkQuiet(ctx context.Context, id string) error
	Note(ctx context.Context, id, ev, actor, detail, once string) (bool, error)
	EnqueueNotice(ctx context.Context, channel, text string) error
}

// Probes probes pipelines and reports their health.
type Probes struct {
	Store     ProbeStore
	Pipelines []ProbeTarget
	Lag       LagSource // optional
	Timeout   time.Duration
	Now       func() time.Time
	// Notes, when set, adds lines to the digest and `status` (detection's symptoms and
	// publish_group refusals: Detector).
	Notes StatusNotes
	// Words words what a probe stores and posts (commands.ProbeMessage: text is made in
	// commands); nil stores each message's kind and pipeline.
	Words func(ProbeMessage) string
}

// ProbeMessageKind says which of the probes' messages a ProbeMessage is.
type ProbeMessageKind string

// The probes' messages. Each names the fields of ProbeMessage it uses besides Pipeline.
const (
	// ProbeReason is why a probe's status is what it is (Result), stored with the result and
	// quoted by the other messages as their Reason.
	ProbeReason ProbeMessageKind = "reason"
	// ProbeTitle is the title of incident probe:<name> a failure opens (Reason).
	ProbeTitle ProbeMessageKind = "title"
	// ProbeFailingAgain is the thread note when the probe fails again after a recovery (At,
	// Failure).
	ProbeFailingAgain ProbeMessageKind = "failing_again"
	// ProbeFailsDifferently is the thread note when the failure's class or reason changes
	// (At, Failure, Before).
	ProbeFailsDifferently ProbeMessageKind = "fails_differently"
	// ProbeFailed is the channel's notice of a failure without an incident (Class, Reason).
	ProbeFailed ProbeMessageKind = "failed"
	// ProbeOKAgain is the detail of the resolve that closes the incident on recovery (Status,
	// At).
	ProbeOKAgain ProbeMessageKind = "ok_again"
	// ProbeRecovered is the channel's notice of a recovery without an incident (Status).
	ProbeRecovered ProbeMessageKind = "recovered"
)

// ProbeMessage is one thing a probe stores or posts, as data: commands words it
// (Probes.Words).
type ProbeMessage struct {
	Kind     ProbeMessageKind
	Pipeline string
	At       time.Time // when the probe started
	Status   probe.Status
	Class    probe.Class
	Reason   string
	// Failure is the failure's class and reason (probe.FailureKey); Before the previous one's.
	Failure, Before string
	// Result is the probe's result (ProbeReason).
	Result *probe.Result
}

func (s *Probes) say(m ProbeMessage) string {
	if s.Words != nil {
		return s.Words(m)
	}
	return string(m.Kind) + " " + m.Pipeline
}

// StatusNotes are what the digest and `status` show below the table (Detector).
type StatusNotes interface {
	StatusNotes(ctx context.Context) ([]StatusNote, error)
}

// NewProbes describes every pipeline of cfg with a checkpoint to the probes.
func NewProbes(cfg *config.Config, store ProbeStore, getenv func(string) string) *Probes {
	ps := &Probes{Store: store, Timeout: cfg.Diagnose.Timeout}
	for _, p := range cfg.Pipelines {
		if p.Checkpoint.Location == "" {
			continue
		}
		ps.Pipelines = append(ps.Pipelines, ProbeTarget{
			Name: p.Name, Description: p.Description, Channel: p.Channel, OpenIncident: p.Probe.OpenIncident, Scheduled: p.Probe.Enabled(),
			Probe: ProbeOptions(cfg, p, getenv),
		})
	}
	return ps
}

// Pipeline returns the named pipeline.
func (s *Probes) Pipeline(name string) (ProbeTarget, bool) {
	for _, p := range s.Pipelines {
		if p.Name == name {
			return p, true
		}
	}
	return ProbeTarget{}, false
}

// Names lists the pipelines with a checkpoint to probe.
func (s *Probes) Names() []string {
	var out []string
	for _, p := range s.Pipelines {
		out = append(out, p.Name)
	}
	return out
}

// Probe runs one probe of the named pipeline, records it and announces a change of health,
// once: nothing on repeated OK; a new failure posts one message (the root of incident
// probe:<name> when OpenIncident, diagnosed in its thread); a failure that persists with the
// same class and reason only edits that root (since when, how many probes failed); a failure
// whose class or reason changes, or that returns after a recovery, posts one thread reply; a
// recovery posts one.
func (s *Probes) Probe(ctx context.Context, name string) (probe.Result, error) {
	p, ok := s.Pipeline(name)
	if !ok {
		return probe.Result{}, fmt.Errorf("unknown pipeline %q (known: %s)", name, strings.Join(s.Names(), ", "))
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	res := probe.Run(pctx, p.Probe)
	cancel()
	return res, s.record(ctx, p, res)
}

func (s *Probes) record(ctx context.Context, p ProbeTarget, res probe.Result) error {
	before, err := s.Store.LastProbe(ctx, p.Name)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(res)
	reason := s.say(ProbeMessage{Kind: ProbeReason, Pipeline: p.Name, Result: &res})
	prev, err := s.Store.RecordProbe(ctx, p.Name, state.ProbeRecord{
		At: res.Started, Status: string(res.Status), Class: string(res.Class), Reason: reason, Result: raw,
	})
	if err != nil {
		return err
	}
	failed := res.Status == probe.StatusFailed
	wasFailed := prev == string(probe.StatusFailed)
	key := "probe:" + p.Name
	failure := probe.FailureKey(res.Class, reason)
	switch {
	case failed && p.OpenIncident:
		out, err := s.Store.RecordAlert(ctx, state.AlertRecord{
			Key: key, Fingerprint: key, Title: s.say(ProbeMessage{Kind: ProbeTitle, Pipeline: p.Name, Reason: reason}),
			Severity: 2, Pipeline: p.Name, Channel: p.Channel, Source: "probe", Detail: failure,
			// A label silence can name them: alertname=streamwatch_probe_failed, pipeline=….
			Labels: probeLabels(p.Name),
		})
		if err != nil {
			return err
		}
		switch {
		case out.Result == state.ResultSilenced:
			// Recorded under the silence; nothing is posted while it holds.
		case out.Result == "opened":
			if err := s.Store.MarkQuiet(ctx, out.Incident); err != nil {
				return err
			}
		case out.Result == state.ResultCorrelated:
			// The failure joined the pipeline's open incident; the join says so in its thread.
		case !wasFailed:
			_, err = s.Store.Note(ctx, out.Incident, "probe", "probe",
				s.say(ProbeMessage{Kind: ProbeFailingAgain, Pipeline: p.Name, At: res.Started, Failure: failure}), "")
		case probe.FailureKey(probe.Class(before.Last.Class), before.Last.Reason) != failure:
			_, err = s.Store.Note(ctx, out.Incident, "probe", "probe",
				s.say(ProbeMessage{Kind: ProbeFailsDifferently, Pipeline: p.Name, At: res.Started, Failure: failure,
					Before: probe.FailureKey(probe.Class(before.Last.Class), before.Last.Reason)}), "")
		}
		return err
	case failed && !wasFailed:
		err = s.Store.EnqueueNotice(ctx, p.Channel, s.say(ProbeMessage{Kind: ProbeFailed, Pipeline: p.Name, Class: res.Class, Reason: reason}))
	case !failed && wasFailed && p.OpenIncident:
		_, err = s.Store.RecordAlert(ctx, state.AlertRecord{
			Key: key, Fingerprint: key, Resolved: true, Pipeline: p.Name, Channel: p.Channel, Source: "probe", Labels: probeLabels(p.Name),
			Detail: s.say(ProbeMessage{Kind: ProbeOKAgain, Pipeline: p.Name, Status: res.Status, At: res.Started}),
		})
	case !failed && wasFailed:
		err = s.Store.EnqueueNotice(ctx, p.Channel, s.say(ProbeMessage{Kind: ProbeRecovered, Pipeline: p.Name, Status: res.Status}))
	}
	return err
}

// probeLabels are the labels of a probe's failure, as an alert's, for label silences.
func probeLabels(pipeline string) map[string]string {
	return map[string]string{"alertname": "streamwatch_probe_failed", "pipeline": pipeline}
}

// History returns the newest n stored results of a pipeline, newest first.
func (s *Probes) History(ctx context.Context, name string, n int64) ([]state.ProbeRecord, error) {
	if _, ok := s.Pipeline(name); !ok {
		return nil, fmt.Errorf("unknown pipeline %q (known: %s)", name, strings.Join(s.Names(), ", "))
	}
	return s.Store.ProbeHistory(ctx, name, n)
}
