package pipeline

import (
	"slices"

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
		ch := Check{Cause: id, Status: CheckFound, Reason: ReasonFound}
		if !found[id] {
			ch = j.ruleOut(id)
		}
		j.v.Checked = append(j.v.Checked, ch)
	}
	if len(j.v.Unexplained) > 0 {
		j.v.Next = j.nextStep()
	}
}

// CheckReason is the evidence a diagnosis ruled a cause out with, or why it could not check
// it; commands words it with the Check's fields.
type CheckReason string

// The reasons, with the Check fields each uses.
const (
	// ReasonFound: the cause is among the verdict's causes.
	ReasonFound CheckReason = "found"
	// ReasonOnlyRisk: its evidence explains no present symptom; it is among the risks.
	ReasonOnlyRisk CheckReason = "only_risk"
	// ReasonAccessJudged: the read-only probe judged the job's write access (Detail: its reason).
	ReasonAccessJudged CheckReason = "access_judged"
	// ReasonWriteProbeOK: a write probe wrote and deleted a file (At: when it ran).
	ReasonWriteProbeOK CheckReason = "write_probe_ok"
	// ReasonAccessNotJudged: the access check could not judge and no write probe has run
	// (Detail: why not).
	ReasonAccessNotJudged CheckReason = "access_not_judged"
	// ReasonNoAccessCheck: no checkpoint access check ran.
	ReasonNoAccessCheck CheckReason = "no_access_check"
	// ReasonCheckpointUnread: the checkpoint was not read.
	ReasonCheckpointUnread CheckReason = "checkpoint_unread"
	// ReasonFilesParse: the newest checkpoint files parse (Items: the files).
	ReasonFilesParse CheckReason = "files_parse"
	// ReasonGroupsUnread: the consumer groups were not read.
	ReasonGroupsUnread CheckReason = "groups_unread"
	// ReasonNoOtherGroup: no other group consumes the documented topics (Source: where the
	// deployed config names the documented group, "" when it does not).
	ReasonNoOtherGroup CheckReason = "no_other_group"
	// ReasonCheckpointTopics: the checkpoint reads the documented topics (Detail: its file;
	// Items: the topics).
	ReasonCheckpointTopics CheckReason = "checkpoint_topics"
	// ReasonDeployedTopics: the deployed config subscribes to the documented topics (Source).
	ReasonDeployedTopics CheckReason = "deployed_topics"
	// ReasonTopicsUnknown: neither the checkpoint nor a deployed config names the topics read.
	ReasonTopicsUnknown CheckReason = "topics_unknown"
	// ReasonBootstrapShared: the deployed bootstrap servers share a broker with the
	// documented cluster (Source).
	ReasonBootstrapShared CheckReason = "bootstrap_shared"
	// ReasonNoDeployedBootstrap: no deployed config names the bootstrap servers.
	ReasonNoDeployedBootstrap CheckReason = "no_deployed_bootstrap"
	// ReasonDeployedLocation: the deployed checkpoint location is the documented one (Source).
	ReasonDeployedLocation CheckReason = "deployed_location"
	// ReasonNoDeployedLocation: no deployed config names the checkpoint location.
	ReasonNoDeployedLocation CheckReason = "no_deployed_location"
	// ReasonOffsetsHeld: every offset the checkpoint resumes from is still on the brokers.
	ReasonOffsetsHeld CheckReason = "offsets_held"
	// ReasonEarliestUnread: the brokers' earliest offsets were not read.
	ReasonEarliestUnread CheckReason = "earliest_unread"
	// ReasonPartitionsKnown: the checkpoint knows every partition of the topics it reads.
	ReasonPartitionsKnown CheckReason = "partitions_known"
	// ReasonPartitionsUnread: the brokers' partitions were not read.
	ReasonPartitionsUnread CheckReason = "partitions_unread"
	// ReasonBrokersAnswered: the brokers answered (N: for how many partitions).
	ReasonBrokersAnswered CheckReason = "brokers_answered"
	// ReasonBrokersUnasked: the brokers were not asked.
	ReasonBrokersUnasked CheckReason = "brokers_unasked"
	// ReasonLagNotGrowing: the documented group's lag is not growing (Detail: its status).
	ReasonLagNotGrowing CheckReason = "lag_not_growing"
	// ReasonGroupUnread: the consumer group was not read.
	ReasonGroupUnread CheckReason = "group_unread"
)

// ruleOut is what the inputs say against a cause that was not found.
func (j *judge) ruleOut(id string) Check {
	in := j.in
	out := func(r CheckReason) Check { return Check{Cause: id, Status: CheckRuledOut, Reason: r} }
	not := func(r CheckReason) Check { return Check{Cause: id, Status: CheckNotChecked, Reason: r} }
	with := func(c Check, source string) Check { c.Source = source; return c }
	if j.isRisk(id) {
		return out(ReasonOnlyRisk)
	}
	cp := in.Checkpoint
	switch id {
	case CauseNotWritable:
		if a := in.Probe; a != nil && a.Access.Judged() {
			c := out(ReasonAccessJudged)
			c.Access = a.Access
			return c
		}
		if w := in.LastWrite; w != nil && w.Status == probe.StatusOK {
			c := out(ReasonWriteProbeOK)
			c.At = w.Started
			return c
		}
		if a := in.Probe; a != nil && a.Access != nil {
			c := not(ReasonAccessNotJudged)
			c.Access = a.Access
			return c
		}
		return not(ReasonNoAccessCheck)
	case CauseCorrupt:
		if cp == nil {
			return not(ReasonCheckpointUnread)
		}
		c := out(ReasonFilesParse)
		if cp.Planned != nil {
			c.Items = append(c.Items, cp.Planned.File)
		}
		if cp.Committed != nil {
			c.Items = append(c.Items, cp.Committed.File)
		}
		return c
	case CauseGroupMismatch:
		if in.Lag == nil {
			return not(ReasonGroupsUnread)
		}
		if d := in.Deployed; d != nil && d.GroupID != "" {
			return with(out(ReasonNoOtherGroup), d.Sources[deployconf.FieldGroup])
		}
		return out(ReasonNoOtherGroup)
	case CauseTopicMismatch:
		read, file := checkpointTopics(cp)
		switch {
		case len(read) > 0:
			c := out(ReasonCheckpointTopics)
			c.Detail, c.Items = file, read
			return c
		case in.Deployed != nil && len(in.Deployed.Topics) > 0:
			return with(out(ReasonDeployedTopics), in.Deployed.Sources[deployconf.FieldTopics])
		}
		return not(ReasonTopicsUnknown)
	case CauseClusterMismatch:
		if d := in.Deployed; d != nil && len(d.Bootstrap) > 0 {
			return with(out(ReasonBootstrapShared), d.Sources[deployconf.FieldBootstrap])
		}
		return not(ReasonNoDeployedBootstrap)
	case CauseCheckpointMismatch:
		if d := in.Deployed; d != nil && d.CheckpointLocation != "" {
			return with(out(ReasonDeployedLocation), d.Sources[deployconf.FieldCheckpointLocation])
		}
		return not(ReasonNoDeployedLocation)
	case CauseOffsetsGone:
		if cp != nil && in.Brokers != nil {
			return out(ReasonOffsetsHeld)
		}
		return not(ReasonEarliestUnread)
	case CausePartitionsUnknown:
		if cp != nil && in.Brokers != nil {
			return out(ReasonPartitionsKnown)
		}
		return not(ReasonPartitionsUnread)
	case CauseBrokerDown:
		c := out(ReasonBrokersAnswered)
		switch {
		case in.Lag != nil:
			c.N = in.Lag.Totals.Partitions
			return c
		case in.Brokers != nil:
			c.N = len(in.Brokers.Partitions)
			return c
		}
		return not(ReasonBrokersUnasked)
	case CauseSlowConsumer:
		if in.Lag != nil {
			c := out(ReasonLagNotGrowing)
			c.Detail = in.Lag.Status.String()
			return c
		}
		return not(ReasonGroupUnread)
	}
	return not("")
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
