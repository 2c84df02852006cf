// Package health runs checkpoint-access probes, turns their results into incidents and
// notices only when health changes, and builds the health digest. It knows no Slack types.
package health

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/state"
)

// Pipeline is what the probes need to know of one pipeline.
type Pipeline struct {
	Name         string
	Channel      string
	Probe        probe.Options
	OpenIncident bool // probe.open_incident: a failure opens incident "probe:<name>"
	Scheduled    bool // the probe has a schedule
}

// LagSource gives the recent total lag samples of a pipeline (oldest first) for the digest.
type LagSource interface {
	RecentLag(ctx context.Context, pipeline string) ([]int64, error)
}

// Service probes pipelines and reports their health.
type Service struct {
	Store     *state.Store
	Pipelines []Pipeline
	Lag       LagSource // optional
	Timeout   time.Duration
	Now       func() time.Time
	// OnOpen, when set, runs once for each incident a failing probe opens (the automatic
	// diagnosis); Service runs it in the background and Wait waits for it.
	OnOpen func(ctx context.Context, incident, pipeline string)

	background sync.WaitGroup
}

// Wait waits for the background work of OnOpen to end.
func (s *Service) Wait() { s.background.Wait() }

// Pipeline returns the named pipeline.
func (s *Service) Pipeline(name string) (Pipeline, bool) {
	for _, p := range s.Pipelines {
		if p.Name == name {
			return p, true
		}
	}
	return Pipeline{}, false
}

// Names lists the pipelines with a checkpoint to probe.
func (s *Service) Names() []string {
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
func (s *Service) Probe(ctx context.Context, name string) (probe.Result, error) {
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

func (s *Service) record(ctx context.Context, p Pipeline, res probe.Result) error {
	before, err := s.Store.LastProbe(ctx, p.Name)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(res)
	prev, err := s.Store.RecordProbe(ctx, p.Name, state.ProbeRecord{
		At: res.Started, Status: string(res.Status), Class: string(res.Class), Reason: res.Reason, Result: raw,
	})
	if err != nil {
		return err
	}
	failed := res.Status == probe.StatusFailed
	wasFailed := prev == string(probe.StatusFailed)
	key := "probe:" + p.Name
	failure := probe.FailureKey(res.Class, res.Reason)
	switch {
	case failed && p.OpenIncident:
		out, err := s.Store.RecordAlert(ctx, state.AlertRecord{
			Key: key, Fingerprint: key, Title: "Checkpoint probe failed for " + p.Name + ": " + res.Reason,
			Severity: 2, Pipeline: p.Name, Channel: p.Channel, Source: "probe", Detail: failure,
		})
		if err != nil {
			return err
		}
		switch {
		case out.Result == "opened":
			if err := s.Store.MarkQuiet(ctx, out.Incident); err != nil {
				return err
			}
			if s.OnOpen != nil {
				s.background.Add(1)
				go func() {
					defer s.background.Done()
					s.OnOpen(context.WithoutCancel(ctx), out.Incident, p.Name)
				}()
			}
		case !wasFailed:
			_, err = s.Store.Note(ctx, out.Incident, "probe", "probe",
				fmt.Sprintf("Failing again since %s: %s", res.Started.UTC().Format("15:04:05Z"), failure), "")
		case probe.FailureKey(probe.Class(before.Last.Class), before.Last.Reason) != failure:
			_, err = s.Store.Note(ctx, out.Incident, "probe", "probe",
				fmt.Sprintf("The probe now fails differently (%s): %s\nbefore: %s", res.Started.UTC().Format("15:04:05Z"), failure,
					probe.FailureKey(probe.Class(before.Last.Class), before.Last.Reason)), "")
		}
		return err
	case failed && !wasFailed:
		err = s.Store.EnqueueNotice(ctx, p.Channel, fmt.Sprintf("Checkpoint probe of %s FAILED (%s): %s", p.Name, res.Class, res.Reason))
	case !failed && wasFailed && p.OpenIncident:
		_, err = s.Store.RecordAlert(ctx, state.AlertRecord{
			Key: key, Fingerprint: key, Resolved: true, Pipeline: p.Name, Channel: p.Channel, Source: "probe",
			Detail: fmt.Sprintf("checkpoint probe of %s is %s again (%s)", p.Name, res.Status, res.Started.UTC().Format("15:04:05Z")),
		})
	case !failed && wasFailed:
		err = s.Store.EnqueueNotice(ctx, p.Channel, fmt.Sprintf("Checkpoint probe of %s recovered: %s", p.Name, res.Status))
	}
	return err
}

// History returns the newest n stored results of a pipeline, newest first.
func (s *Service) History(ctx context.Context, name string, n int64) ([]state.ProbeRecord, error) {
	if _, ok := s.Pipeline(name); !ok {
		return nil, fmt.Errorf("unknown pipeline %q (known: %s)", name, strings.Join(s.Names(), ", "))
	}
	return s.Store.ProbeHistory(ctx, name, n)
}

// Row is one pipeline's line of the digest.
type Row struct {
	Pipeline  string
	Status    string // OK, DEGRADED, FAILED, or "never probed"
	Since     time.Time
	CommitAge time.Duration // -1 when unknown
	Lag       []int64       // recent total lag samples, oldest first
}

// Digest is the health summary posted on health.digest_schedule and shown by `status`.
type Digest struct {
	At     time.Time
	Rows   []Row
	Missed int64 // scheduled ticks nobody ran since the last digest
}

// Digest builds the summary of every pipeline.
func (s *Service) Digest(ctx context.Context) (Digest, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	d := Digest{At: now()}
	for _, p := range s.Pipelines {
		last, err := s.Store.LastProbe(ctx, p.Name)
		if err != nil {
			return d, err
		}
		row := Row{Pipeline: p.Name, Status: last.Status, Since: last.Since, CommitAge: -1}
		if row.Status == "" {
			row.Status = "never probed"
		}
		var res probe.Result
		if json.Unmarshal(last.Last.Result, &res) == nil && !res.NewestCommit.IsZero() {
			row.CommitAge = d.At.Sub(res.NewestCommit)
		}
		if s.Lag != nil {
			if lag, err := s.Lag.RecentLag(ctx, p.Name); err == nil {
				row.Lag = lag
			}
		}
		d.Rows = append(d.Rows, row)
	}
	sort.SliceStable(d.Rows, func(i, j int) bool { return rank(d.Rows[i].Status) < rank(d.Rows[j].Status) })
	return d, nil
}

func rank(status string) int {
	switch status {
	case "FAILED":
		return 0
	case "DEGRADED":
		return 1
	case "OK":
		return 3
	}
	return 2
}

// Lines renders the digest as a table.
func (d Digest) Lines() []string {
	lines := []string{fmt.Sprintf("%-20s %-13s %-12s %-12s %s", "PIPELINE", "PROBE", "LAST COMMIT", "LAG", "LAG TREND")}
	for _, r := range d.Rows {
		age := "-"
		if r.CommitAge >= 0 {
			age = Age(r.CommitAge) + " ago"
		}
		lag := "-"
		if len(r.Lag) > 0 {
			lag = fmt.Sprint(r.Lag[len(r.Lag)-1])
		}
		lines = append(lines, fmt.Sprintf("%-20s %-13s %-12s %-12s %s", r.Pipeline, r.Status, age, lag, Sparkline(r.Lag)))
	}
	if d.Missed > 0 {
		lines = append(lines, fmt.Sprintf("%d scheduled tick(s) were missed since the last digest: no replica was running.", d.Missed))
	}
	return lines
}

// Text is the digest as one message.
func (d Digest) Text() string {
	return "Pipeline health at " + d.At.UTC().Format("2006-01-02 15:04Z") + "\n```\n" + strings.Join(d.Lines(), "\n") + "\n```"
}

// Sparkline draws values with the eight block characters, scaled between their min and max.
func Sparkline(values []int64) string {
	if len(values) == 0 {
		return ""
	}
	const bars = "▁▂▃▄▅▆▇█"
	runes := []rune(bars)
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	var b strings.Builder
	for _, v := range values {
		i := 0
		if hi > lo {
			i = int((v - lo) * int64(len(runes)-1) / (hi - lo))
		}
		b.WriteRune(runes[i])
	}
	return b.String()
}

// Age renders a duration the way people read ages: 45s, 7m, 3h10m, 2d4h.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}
