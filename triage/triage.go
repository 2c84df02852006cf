// Package triage judges a pipeline from the results of every diagnostic at once and names the
// probable causes, ranked, each with its evidence and the next step. Judge is pure: it reads
// results, it fetches nothing.
package triage

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
)

// Check names, as reported when one did not finish in time.
const (
	CheckLag        = "lag and status"
	CheckCheckpoint = "checkpoint"
	CheckProbe      = "read-only probe"
	CheckLogs       = "driver logs"
	CheckDrift      = "config drift"
)

// Inputs are the diagnostics' results; a nil result with a nil error means the check does
// not apply to the pipeline (no Kafka, no logs configured…).
type Inputs struct {
	Pipeline      string
	Lag           *kafka.LagReport
	LagErr        error
	Checkpoint    *spark.Report
	CheckpointErr error
	Probe         *probe.Result // the read-only probe run now
	LastWrite     *probe.Result // the newest scheduled probe with a write test, if any
	Logs          *driverlog.Report
	LogsErr       error
	Drift         []deployconf.Difference
	DriftErr      error
	Unfinished    []string // checks still running at the deadline
}

// Cause IDs, in the order the product tells them apart.
const (
	CauseNotWritable   = "CHECKPOINT_NOT_WRITABLE"
	CauseGroupMismatch = "CONSUMER_GROUP_MISMATCH"
	CauseCorrupt       = "CHECKPOINT_CORRUPT"
	CauseStaleWithData = "CHECKPOINT_STALE_WITH_NEW_DATA"
	CauseBrokerDown    = "BROKER_UNREACHABLE"
	CauseSlowConsumer  = "CONSUMER_SLOWER_THAN_PRODUCER"
)

// Cause is one probable cause.
type Cause struct {
	ID       string
	Title    string
	Score    int // higher is more probable; evidence from several checks adds up
	Evidence []string
	Next     string
}

// Verdict is the answer of diagnose.
type Verdict struct {
	Pipeline   string
	Healthy    bool
	Causes     []Cause // most probable first
	Notes      []string
	Unfinished []string
}

// Judge names the probable causes. A pipeline with no cause is healthy; it never guesses.
func Judge(in Inputs) Verdict {
	v := Verdict{Pipeline: in.Pipeline, Unfinished: in.Unfinished}
	causes := map[string]*Cause{}
	add := func(id, title, next string, score int, evidence ...string) {
		c := causes[id]
		if c == nil {
			c = &Cause{ID: id, Title: title, Next: next}
			causes[id] = c
		}
		c.Score += score
		for _, e := range evidence {
			if e != "" && !contains(c.Evidence, e) {
				c.Evidence = append(c.Evidence, e)
			}
		}
	}
	const (
		notWritable = "The checkpoint location is not writable: the query cannot commit progress"
		nextWrite   = "Restore write access for the job's user on the checkpoint location (storage policy, ACL, mount options), then watch for the next commit: `watch PIPELINE`."
	)

	// Write access: the probes and the driver logs.
	for _, pr := range []*probe.Result{in.Probe, in.LastWrite} {
		if pr == nil || pr.Status != probe.StatusFailed || pr.Class != probe.ClassPermissionDenied {
			continue
		}
		ev := []string{"probe " + pr.Started.UTC().Format("15:04:05Z") + ": " + pr.Reason}
		if pr.Owner != nil {
			ev = append(ev, pr.Owner.Line())
		}
		add(CauseNotWritable, notWritable, nextWrite, 60, ev...)
	}
	if in.Checkpoint != nil {
		for _, f := range in.Checkpoint.Findings {
			if f.Code == spark.CodeUnreadable {
				add(CauseNotWritable, notWritable, nextWrite, 40, f.Summary)
			}
		}
	}
	if in.Logs != nil {
		for _, m := range in.Logs.Matches {
			switch m.Signature.ID {
			case "PERMISSION_DENIED", "CHECKPOINT_WRITE_FAILED", "STORAGE_FULL":
				add(CauseNotWritable, notWritable, nextWrite, 30, logEvidence(m))
			case "CHECKPOINT_LOG_CORRUPT":
				add(CauseCorrupt, "The newest checkpoint file is corrupted: Spark cannot restart on it",
					"Back up the checkpoint (`checkpoint backup PIPELINE`), then quarantine the corrupted fragment (`checkpoint repair PIPELINE`) and restart the query.", 30, logEvidence(m))
			}
		}
	}

	// The consumer group.
	if in.Lag != nil && in.Lag.Mismatch != nil {
		mm := in.Lag.Mismatch
		ev := []string{mm.Evidence}
		if mm.Evidence == "" {
			ev[0] = fmt.Sprintf("documented group %s is %s: %s", mm.Documented, mm.Reason, mm.Detail)
		}
		add(CauseGroupMismatch, "The job consumes with a different consumer group than the documented one",
			"Check the deployed job's kafka.group.id / groupIdPrefix; either redeploy with the documented group or update the pipeline's documented group.", 50, ev...)
	}
	for _, d := range in.Drift {
		if d.Field == deployconf.FieldGroup {
			add(CauseGroupMismatch, "The job consumes with a different consumer group than the documented one",
				"Check the deployed job's kafka.group.id / groupIdPrefix; either redeploy with the documented group or update the pipeline's documented group.", 30,
				fmt.Sprintf("deployed config: group %q, documented %q (%s)", d.Deployed, d.Documented, d.Evidence))
		} else {
			v.Notes = append(v.Notes, fmt.Sprintf("config drift: %s documented %q, deployed %q (%s)", d.Field, d.Documented, d.Deployed, d.Evidence))
		}
	}

	// The checkpoint's content.
	if in.Checkpoint != nil {
		for _, f := range in.Checkpoint.Findings {
			switch {
			case f.Code == spark.CodeCorruptFile:
				add(CauseCorrupt, "The newest checkpoint file is corrupted: Spark cannot restart on it",
					"Back up the checkpoint (`checkpoint backup PIPELINE`), then quarantine the corrupted fragment (`checkpoint repair PIPELINE`) and restart the query.",
					50, fileEvidence(f))
			case f.Code == spark.CodeStale && in.Checkpoint.PendingTotal > 0:
				add(CauseStaleWithData, "The checkpoint is stale while the brokers hold new data: the query is not progressing",
					"Look at the driver: is the query running, failing or stuck? `logs PIPELINE`, then restart it once the cause is fixed.",
					35, append([]string{f.Summary}, fmt.Sprintf("%d records pending on the brokers", in.Checkpoint.PendingTotal))...)
			}
		}
	}
	if in.Probe != nil && in.Probe.Status == probe.StatusFailed && in.Probe.Class == probe.ClassCorrupt {
		add(CauseCorrupt, "The newest checkpoint file is corrupted: Spark cannot restart on it",
			"Back up the checkpoint (`checkpoint backup PIPELINE`), then quarantine the corrupted fragment (`checkpoint repair PIPELINE`) and restart the query.",
			20, "probe: "+in.Probe.Reason)
	}

	// Kafka itself.
	if in.LagErr != nil && (errors.Is(in.LagErr, kafka.ErrUnreachable) || errors.Is(in.LagErr, kafka.ErrAuth)) {
		add(CauseBrokerDown, "The Kafka brokers cannot be reached", "Check the brokers and the network path from the job (and from streamwatch); the lag cannot be judged meanwhile.", 45, in.LagErr.Error())
	}
	if in.Lag != nil {
		for _, u := range in.Lag.Unavailable {
			add(CauseBrokerDown, "The Kafka brokers cannot be reached", "Check the brokers and the network path from the job (and from streamwatch); the lag cannot be judged meanwhile.",
				25, fmt.Sprintf("%s unavailable for %d partition(s): %v", u.What, len(u.Partitions), u.Err))
		}
		switch in.Lag.Status {
		case kafka.StatusWarning:
			add(CauseSlowConsumer, "The consumer is healthy but slower than the producer: lag grows while commits advance",
				"Scale the job (more executors or partitions) or reduce the batch work; nothing is stuck.", 30, in.Lag.Evidence)
		case kafka.StatusStalled, kafka.StatusStopped:
			if in.Lag.Mismatch == nil {
				v.Notes = append(v.Notes, "group status "+in.Lag.Status.String()+": "+in.Lag.Evidence)
			}
		}
	}
	if in.CheckpointErr != nil {
		v.Notes = append(v.Notes, "checkpoint: "+in.CheckpointErr.Error())
	}
	if in.LogsErr != nil {
		v.Notes = append(v.Notes, "driver logs: "+in.LogsErr.Error())
	}
	if in.DriftErr != nil {
		v.Notes = append(v.Notes, "deployed config: "+in.DriftErr.Error())
	}
	if in.LagErr != nil && causes[CauseBrokerDown] == nil {
		v.Notes = append(v.Notes, "lag: "+in.LagErr.Error())
	}

	for _, c := range causes {
		v.Causes = append(v.Causes, *c)
	}
	sort.SliceStable(v.Causes, func(i, j int) bool {
		if v.Causes[i].Score != v.Causes[j].Score {
			return v.Causes[i].Score > v.Causes[j].Score
		}
		return v.Causes[i].ID < v.Causes[j].ID
	})
	v.Healthy = len(v.Causes) == 0 && len(in.Unfinished) == 0
	return v
}

func logEvidence(m driverlog.Match) string {
	when := ""
	if !m.Last.IsZero() {
		when = " (last " + m.Last.UTC().Format("2006-01-02 15:04:05Z") + ")"
	}
	return fmt.Sprintf("driver log: %s ×%d%s: %s", m.Signature.Title, m.Count, when, m.Example)
}

func fileEvidence(f spark.Finding) string {
	s := f.Summary
	if f.File != "" && !strings.Contains(s, f.File) {
		s = f.File + ": " + s
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Lines renders the verdict for people.
func (v Verdict) Lines() []string {
	var out []string
	switch {
	case v.Healthy:
		out = append(out, v.Pipeline+" is healthy: no probable cause found.")
	case len(v.Causes) == 0:
		out = append(out, "No probable cause among the checks that finished.")
	}
	for i, c := range v.Causes {
		out = append(out, fmt.Sprintf("%d. %s [%s]", i+1, c.Title, c.ID))
		for _, e := range c.Evidence {
			out = append(out, "   - "+e)
		}
		out = append(out, "   next: "+strings.ReplaceAll(c.Next, "PIPELINE", v.Pipeline))
	}
	for _, n := range v.Notes {
		out = append(out, "note: "+n)
	}
	if len(v.Unfinished) > 0 {
		out = append(out, "did not finish in time: "+strings.Join(v.Unfinished, ", "))
	}
	return out
}

// Summary is the verdict in one line.
func (v Verdict) Summary() string {
	if v.Healthy {
		return v.Pipeline + ": healthy"
	}
	if len(v.Causes) == 0 {
		return v.Pipeline + ": no probable cause found"
	}
	var ids []string
	for _, c := range v.Causes {
		ids = append(ids, c.ID)
	}
	return v.Pipeline + ": probable cause " + strings.Join(ids, ", ")
}
