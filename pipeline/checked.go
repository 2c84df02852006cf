package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/probe"
)

// checked says, for every cause of the catalogue, whether the diagnosis found it, ruled it out
// (with the one line of evidence that did) or could not check it, and, when a symptom has no
// cause, the one next step: "no probable cause found" is an answer with content.
func (j *judge) checked() {
	found := map[string]bool{}
	for _, c := range j.v.Causes {
		found[c.ID] = true
	}
	for _, id := range Causes {
		ch := Check{Cause: id}
		if found[id] {
			ch.Status, ch.Evidence = CheckFound, "see above"
		} else {
			ch.Status, ch.Evidence = j.ruleOut(id)
		}
		j.v.Checked = append(j.v.Checked, ch)
	}
	if len(j.v.Unexplained) > 0 {
		j.v.Next = j.nextStep()
	}
}

// ruleOut is what the inputs say against a cause that was not found.
func (j *judge) ruleOut(id string) (CheckStatus, string) {
	in := j.in
	if j.isRisk(id) {
		return CheckRuledOut, "only a risk: no present symptom needs it (see risks)"
	}
	cp := in.Checkpoint
	switch id {
	case CauseNotWritable:
		if a := in.Probe; a != nil && a.Access.Judged() {
			if a.Access.Note != "" {
				return CheckRuledOut, a.Access.Reason + " (judged without writing; " + a.Access.Note + ")"
			}
			return CheckRuledOut, a.Access.Reason + " (judged without writing)"
		}
		if w := in.LastWrite; w != nil && w.Status == probe.StatusOK {
			return CheckRuledOut, "the write probe of " + stamp(w.Started) + " wrote and deleted a file"
		}
		if a := in.Probe; a != nil && a.Access != nil {
			return CheckNotChecked, "access not judged: " + a.Access.Err + "; no write probe has run"
		}
		return CheckNotChecked, "no checkpoint access check ran"
	case CauseCorrupt:
		if cp == nil {
			return CheckNotChecked, "the checkpoint was not read"
		}
		var files []string
		if cp.Planned != nil {
			files = append(files, cp.Planned.File)
		}
		if cp.Committed != nil {
			files = append(files, cp.Committed.File)
		}
		return CheckRuledOut, "the newest checkpoint files parse (" + strings.Join(files, ", ") + ")"
	case CauseGroupMismatch:
		if in.Lag == nil {
			return CheckNotChecked, "the consumer groups were not read"
		}
		ev := "no other group consumes the documented topics"
		if d := in.Deployed; d != nil && d.GroupID != "" {
			ev += "; the deployed group is the documented one (" + d.Sources[deployconf.FieldGroup] + ")"
		}
		return CheckRuledOut, ev
	case CauseTopicMismatch:
		read, file := checkpointTopics(cp)
		switch {
		case len(read) > 0:
			return CheckRuledOut, "the checkpoint (" + file + ") reads the documented topics: " + strings.Join(read, ", ")
		case in.Deployed != nil && len(in.Deployed.Topics) > 0:
			return CheckRuledOut, "the deployed config subscribes to the documented topics (" + in.Deployed.Sources[deployconf.FieldTopics] + ")"
		}
		return CheckNotChecked, "neither the checkpoint nor a deployed config names the topics read"
	case CauseClusterMismatch:
		if d := in.Deployed; d != nil && len(d.Bootstrap) > 0 {
			return CheckRuledOut, "the deployed bootstrap servers share a broker with the documented cluster (" + d.Sources[deployconf.FieldBootstrap] + ")"
		}
		return CheckNotChecked, "no deployed config names the bootstrap servers (pipelines[].deployed_config)"
	case CauseCheckpointMismatch:
		if d := in.Deployed; d != nil && d.CheckpointLocation != "" {
			return CheckRuledOut, "the deployed checkpoint location is the documented one (" + d.Sources[deployconf.FieldCheckpointLocation] + ")"
		}
		return CheckNotChecked, "no deployed config names the checkpoint location (pipelines[].deployed_config)"
	case CauseOffsetsGone:
		if cp != nil && in.Brokers != nil {
			return CheckRuledOut, "every offset the checkpoint resumes from is still on the brokers"
		}
		return CheckNotChecked, "the brokers' earliest offsets were not read"
	case CausePartitionsUnknown:
		if cp != nil && in.Brokers != nil {
			return CheckRuledOut, "the checkpoint knows every partition of the topics it reads"
		}
		return CheckNotChecked, "the brokers' partitions were not read"
	case CauseBrokerDown:
		switch {
		case in.Lag != nil:
			return CheckRuledOut, fmt.Sprintf("the brokers answered for %d partitions", in.Lag.Totals.Partitions)
		case in.Brokers != nil:
			return CheckRuledOut, fmt.Sprintf("the brokers answered for %d partitions", len(in.Brokers.Partitions))
		}
		return CheckNotChecked, "the brokers were not asked"
	case CauseSlowConsumer:
		if in.Lag != nil {
			return CheckRuledOut, "the documented group's lag is not growing (" + in.Lag.Status.String() + ")"
		}
		return CheckNotChecked, "the consumer group was not read"
	}
	return CheckNotChecked, ""
}

// isRisk says whether the cause's evidence was kept as a risk (it explains no present symptom).
func (j *judge) isRisk(id string) bool {
	_, seen := j.signals[id]
	return seen && !slices.ContainsFunc(j.v.Causes, func(c Cause) bool { return c.ID == id })
}

// nextStep is the one thing a person should do about a symptom nothing explains.
func (j *judge) nextStep() NextStep {
	in := j.in
	switch {
	case len(in.Unfinished) > 0:
		return NextWaitForChecks
	case in.Logs == nil && in.LogsErr == nil:
		return NextConfigureLogs
	}
	for _, c := range j.v.Checked {
		if c.Cause == CauseNotWritable && c.Status == CheckNotChecked {
			return NextWriteProbe
		}
	}
	if in.Logs != nil && len(in.Logs.Matches) > 0 {
		return NextReadLogs
	}
	return NextCheckJob
}
