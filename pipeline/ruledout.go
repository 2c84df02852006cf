package pipeline

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark"
)

// Ruled is a cause a diagnosis looked for, as the reason of a symptom nothing explains, and
// what it saw instead: the one-line evidence that rules it out, or why it could not look.
type Ruled struct {
	Cause   string
	Checked bool     // false: the check could not look (Seen says why)
	Seen    string   // a Ruled* code
	Facts   []string // the values Seen's line names, in order
}

// What a check saw of a cause it ruled out (Checked), or why it could not look.
const (
	RuledFoundAsRisk      = "FOUND_AS_RISK"      // found, but it explains no present symptom: a risk
	RuledAccessWritable   = "ACCESS_WRITABLE"    // [who may create files, as the access check judged]
	RuledProbeOK          = "PROBE_OK"           // [when]: the read-only probe read the checkpoint
	RuledFilesParse       = "FILES_PARSE"        // [files]: the newest checkpoint files parse
	RuledNoOtherGroup     = "NO_OTHER_GROUP"     // [documented group, topics]: no other group consumes them
	RuledDeployedAgrees   = "DEPLOYED_AGREES"    // [field, file]: the deployed config agrees on the field
	RuledCheckpointReads  = "CHECKPOINT_READS"   // [topics, file]: the checkpoint reads the documented topics
	RuledTopicsExist      = "TOPICS_EXIST"       // [topics, cluster]: the documented topics exist there
	RuledLocationHolds    = "LOCATION_HOLDS"     // [location, query id]: the documented location holds the checkpoint
	RuledBrokersAnswer    = "BROKERS_ANSWER"     // [cluster or ""]: the brokers answered
	RuledOffsetsOnBrokers = "OFFSETS_ON_BROKERS" // [file, partitions, cluster]: every offset lies within the log
	RuledPartitionsKnown  = "PARTITIONS_KNOWN"   // [file, partitions]: the checkpoint knows every partition
	RuledAccessNotJudged  = "ACCESS_NOT_JUDGED"  // [why]
	RuledNoProbe          = "NO_PROBE"           // no probe ran
	RuledCheckpointUnread = "CHECKPOINT_UNREAD"  // [error]
	RuledNoKafka          = "NO_KAFKA"           // the pipeline has no kafka section
	RuledLagUnread        = "LAG_UNREAD"         // [error]
	RuledBrokersUnread    = "BROKERS_UNREAD"     // [error]
	RuledNoDeployed       = "NO_DEPLOYED_CONFIG" // pipelines[].deployed_config is not set
	RuledDeployedUnread   = "DEPLOYED_UNREAD"    // [error]
	RuledNoKafkaOffsets   = "NO_KAFKA_OFFSETS"   // the checkpoint holds no Kafka offsets to compare
	RuledUnfinished       = "UNFINISHED"         // [check]: the check did not finish in time
)

// The one next step when a present symptom has no cause.
const (
	NextDiagnoseAgain     = "DIAGNOSE_AGAIN"      // checks did not finish: diagnose again
	NextReadLogs          = "READ_LOGS"           // `logs PIPELINE`: the driver's last error
	NextReadDriverLog     = "READ_DRIVER_LOG"     // read the driver's log (logs.paths is not set)
	NextCheckJobOptions   = "CHECK_JOB_OPTIONS"   // compare the running job's options with deployed_config
	NextSetDeployedConfig = "SET_DEPLOYED_CONFIG" // set deployed_config so the job's options are compared
	NextRunProbe          = "RUN_PROBE"           // `probe PIPELINE`: the probe's failure class
)

// ruleOut lists, when a present symptom has no cause, every cause that could explain it with
// what the checks saw of it, and chooses the one next step.
func (j *judge) ruleOut() {
	if len(j.v.Unexplained) == 0 {
		return
	}
	found := map[string]bool{}
	for _, c := range j.v.Causes {
		found[c.ID] = true
	}
	for _, id := range causeOrder {
		if found[id] || !j.couldExplain(id) {
			continue
		}
		if _, ok := j.signals[id]; ok {
			j.v.RuledOut = append(j.v.RuledOut, Ruled{Cause: id, Checked: true, Seen: RuledFoundAsRisk})
			continue
		}
		j.v.RuledOut = append(j.v.RuledOut, j.ruled(id)...)
	}
	j.v.Next = j.next()
}

// couldExplain says whether cause explains one of the unexplained symptoms by its kind.
func (j *judge) couldExplain(cause string) bool {
	for _, sid := range j.v.Unexplained {
		if slices.Contains(causeDefs[cause].explains, sid) {
			return true
		}
	}
	return false
}

// ruled is what the checks saw of a cause nothing found.
func (j *judge) ruled(cause string) []Ruled {
	in := j.in
	r := func(seen string, facts ...string) Ruled {
		return Ruled{Cause: cause, Checked: true, Seen: seen, Facts: facts}
	}
	not := func(seen string, facts ...string) Ruled { return Ruled{Cause: cause, Seen: seen, Facts: facts} }
	unfinished := func(check string) bool { return slices.Contains(in.Unfinished, check) }
	switch cause {
	case CauseNotWritable:
		var out []Ruled
		switch p := in.Probe; {
		case unfinished(CheckProbe):
			return []Ruled{not(RuledUnfinished, CheckProbe)}
		case p == nil:
			return []Ruled{not(RuledNoProbe)}
		case p.Access != nil && p.Access.Judged():
			out = append(out, r(RuledAccessWritable, j.v.Access))
		case p.Access != nil:
			out = append(out, not(RuledAccessNotJudged, p.Access.Err))
		}
		if p := in.Probe; p.Status != probe.StatusFailed {
			out = append(out, r(RuledProbeOK, stamp(p.Started)))
		}
		return out
	case CauseCorrupt:
		switch c := in.Checkpoint; {
		case unfinished(CheckCheckpoint):
			return []Ruled{not(RuledUnfinished, CheckCheckpoint)}
		case c == nil:
			return []Ruled{not(RuledCheckpointUnread, errText(in.CheckpointErr))}
		default:
			var files []string
			if c.Planned != nil {
				files = append(files, c.Planned.File)
			}
			if c.Committed != nil {
				files = append(files, c.Committed.File)
			}
			return []Ruled{r(RuledFilesParse, strings.Join(files, ", "))}
		}
	case CauseBrokerDown:
		switch {
		case in.Lag != nil:
			return []Ruled{r(RuledBrokersAnswer, in.Lag.Cluster)}
		case in.Brokers != nil:
			return []Ruled{r(RuledBrokersAnswer, in.Brokers.Cluster)}
		case unfinished(CheckLag):
			return []Ruled{not(RuledUnfinished, CheckLag)}
		}
		return []Ruled{j.noKafka(cause)}
	case CauseGroupMismatch:
		out := []Ruled{j.deployedOn(cause, FieldGroup)}
		switch {
		case in.Lag != nil && in.Lag.Mismatch == nil:
			out = append([]Ruled{r(RuledNoOtherGroup, in.Lag.Group.Name, strings.Join(in.Lag.Topics, ", "))}, out...)
		case unfinished(CheckLag):
			out = append(out, not(RuledUnfinished, CheckLag))
		case in.Lag == nil:
			out = append(out, j.noKafka(cause))
		}
		return out
	case CauseTopicMismatch:
		var out []Ruled
		if c := in.Checkpoint; c != nil {
			if pb := baseline(c); pb != nil {
				if reads, _ := checkpointTopics(pb); len(reads) > 0 {
					out = append(out, r(RuledCheckpointReads, strings.Join(reads, ", "), pb.File))
				}
			}
		}
		if b := in.Brokers; b != nil && len(in.Contract.TopicList) > 0 {
			out = append(out, r(RuledTopicsExist, strings.Join(in.Contract.TopicList, ", "), brokersWhere(b)))
		}
		return append(out, j.deployedOn(cause, FieldTopics))
	case CauseClusterMismatch:
		return []Ruled{j.deployedOn(cause, FieldCluster)}
	case CauseLocationMismatch:
		var out []Ruled
		if c := in.Checkpoint; c != nil && !c.Has(spark.CodeUnreadable) {
			id := c.QueryID
			out = append(out, r(RuledLocationHolds, c.Location, id))
		}
		return append(out, j.deployedOn(cause, FieldCheckpoint))
	case CauseOffsetsGone, CausePartitionsUnknown:
		c, b := in.Checkpoint, in.Brokers
		switch {
		case unfinished(CheckCheckpoint):
			return []Ruled{not(RuledUnfinished, CheckCheckpoint)}
		case c == nil:
			return []Ruled{not(RuledCheckpointUnread, errText(in.CheckpointErr))}
		case b == nil && in.BrokersErr != nil:
			return []Ruled{not(RuledBrokersUnread, in.BrokersErr.Error())}
		case b == nil:
			return []Ruled{j.noKafka(cause)}
		}
		pb := baseline(c)
		if pb == nil {
			return []Ruled{not(RuledNoKafkaOffsets)}
		}
		known := 0
		for _, row := range c.Kafka {
			if _, asked := b.Topic(row.Topic); asked {
				known++
			}
		}
		if cause == CauseOffsetsGone {
			return []Ruled{r(RuledOffsetsOnBrokers, pb.File, strconv.Itoa(known), brokersWhere(b))}
		}
		return []Ruled{r(RuledPartitionsKnown, pb.File, strconv.Itoa(known))}
	}
	return nil
}

// deployedOn is what the deployed config says of a field it does not contradict.
func (j *judge) deployedOn(cause, field string) Ruled {
	switch in := j.in; {
	case in.Deployed != nil:
		return Ruled{Cause: cause, Checked: true, Seen: RuledDeployedAgrees, Facts: []string{field, in.Deployed.File}}
	case in.DriftErr != nil:
		return Ruled{Cause: cause, Seen: RuledDeployedUnread, Facts: []string{in.DriftErr.Error()}}
	case slices.Contains(in.Unfinished, CheckDrift):
		return Ruled{Cause: cause, Seen: RuledUnfinished, Facts: []string{CheckDrift}}
	}
	return Ruled{Cause: cause, Seen: RuledNoDeployed}
}

// noKafka says why the brokers were not compared.
func (j *judge) noKafka(cause string) Ruled {
	switch {
	case j.in.LagErr != nil && !errors.Is(j.in.LagErr, kafka.ErrUnreachable):
		return Ruled{Cause: cause, Seen: RuledLagUnread, Facts: []string{j.in.LagErr.Error()}}
	case j.in.BrokersErr != nil:
		return Ruled{Cause: cause, Seen: RuledBrokersUnread, Facts: []string{j.in.BrokersErr.Error()}}
	}
	return Ruled{Cause: cause, Seen: RuledNoKafka}
}

// next is the one step a person should take about the first symptom nothing explains.
func (j *judge) next() string {
	in := j.in
	if len(in.Unfinished) > 0 {
		return NextDiagnoseAgain
	}
	logs := in.Logs != nil || in.LogsErr != nil
	deployed := in.Deployed != nil || in.DriftErr != nil
	switch j.v.Unexplained[0] {
	case SymptomDocumentedGroupIdle, SymptomTopicUnread:
		if deployed {
			return NextCheckJobOptions
		}
		return NextSetDeployedConfig
	case SymptomProbeFailing:
		return NextRunProbe
	}
	if logs {
		return NextReadLogs
	}
	return NextReadDriverLog
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
