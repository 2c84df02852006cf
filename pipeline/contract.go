package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
)

// Contract is what a pipeline's configuration documents about it (pipelines[]): the facts a
// deployment, its checkpoint and the brokers can contradict.
type Contract struct {
	Pipeline   string
	Cluster    string
	Brokers    []string
	Topics     []string
	Group      string
	Checkpoint string
	// Lines are the file and line each field is written on ("/etc/streamwatch.yaml:14"),
	// by field; absent when not known (a default, or a configuration not read from a file).
	Lines map[string]string
}

// ContractOf is pipeline p's documented facts.
func ContractOf(cfg *config.Config, p *config.Pipeline) Contract {
	c := Contract{Pipeline: p.Name, Cluster: p.Kafka.Cluster, Topics: p.Kafka.Topics, Group: p.Kafka.Group,
		Checkpoint: p.Checkpoint.Location, Lines: map[string]string{}}
	if cl, ok := cfg.Kafka.Clusters[p.Kafka.Cluster]; ok {
		c.Brokers = cl.Brokers
	}
	i := slices.IndexFunc(cfg.Pipelines, func(q config.Pipeline) bool { return q.Name == p.Name })
	for field, path := range map[string]string{FieldGroup: "kafka.group", FieldTopics: "kafka.topics",
		FieldCheckpoint: "checkpoint.location"} {
		if l := cfg.Line(fmt.Sprintf("pipelines[%d].%s", i, path)); l != "" {
			c.Lines[field] = l
		}
	}
	if l := cfg.Line("kafka.clusters." + p.Kafka.Cluster + ".brokers"); l != "" {
		c.Lines[FieldBrokers] = l
	}
	return c
}

// DocumentedAt is where the contract documents a field: its key, and the file and line it
// is written on when known.
func (c Contract) DocumentedAt(field string) string {
	at := DocumentedAt(c.Pipeline, field)
	if l := c.Lines[field]; l != "" {
		at += ", " + l
	}
	return at
}

// The documented fields a contradiction can be about; commands words them.
const (
	FieldGroup      = "group"
	FieldTopics     = "topics"
	FieldBrokers    = "bootstrap"
	FieldCheckpoint = "checkpoint"
)

// DocumentedAt is where the configuration documents a field of pipeline name.
func DocumentedAt(name, field string) string {
	switch field {
	case FieldGroup:
		return "pipelines[" + name + "].kafka.group"
	case FieldTopics:
		return "pipelines[" + name + "].kafka.topics"
	case FieldBrokers:
		return "kafka.clusters (pipelines[" + name + "].kafka.cluster)"
	case FieldCheckpoint:
		return "pipelines[" + name + "].checkpoint.location"
	}
	return "pipelines[" + name + "]"
}

// Contradiction is one documented fact that something observed contradicts: the deployed
// configuration, the checkpoint's own files, or the brokers. Its Kind says what was observed
// and which fields hold it; commands words it.
type Contradiction struct {
	Kind         ContradictionKind
	Field        string // Field*
	Documented   string
	DocumentedAt string // where the configuration says it
	Observed     string `json:",omitempty"` // the value observed, as the Kind says
	ObservedAt   string `json:",omitempty"` // where it was seen, as the Kind says
	Source       Source // the signal's source (SourceConfig, SourceCheckpoint, SourceBrokers)
	// Drift is, for ContraDeployed, the deployed config's difference, whose reason commands
	// words; Reason is an earlier version's words for it.
	Drift  *deployconf.Difference `json:",omitempty"`
	Reason string                 `json:",omitempty"`
	// NotRead and NotDocumented are the topics documented but not read, and read but not
	// documented (ContraCheckpointTopics).
	NotRead       []string `json:",omitempty"`
	NotDocumented []string `json:",omitempty"`
	// Cause is the cause the contradiction supports; Risk says no present symptom needs it.
	Cause string
	Risk  bool
}

// ContradictionKind says what contradicts a documented fact.
type ContradictionKind string

// The contradictions, with the fields each uses besides Field, Documented and DocumentedAt.
const (
	// ContraDeployed: the deployed config says otherwise (Observed: its value, "" when it does
	// not set it; ObservedAt: its evidence, "job.conf:13: subscribe=x"; Drift).
	ContraDeployed ContradictionKind = "deployed"
	// ContraNoCheckpoint: the documented location holds no checkpoint at all (ObservedAt: the
	// location read).
	ContraNoCheckpoint ContradictionKind = "no_checkpoint"
	// ContraCheckpointTopics: the checkpoint's offsets read other topics (Observed: the topics
	// read; ObservedAt: the offsets file; NotRead, NotDocumented).
	ContraCheckpointTopics ContradictionKind = "checkpoint_topics"
	// ContraNoSuchTopic: a documented topic does not exist on the documented cluster
	// (Documented: the topic; ObservedAt: the cluster).
	ContraNoSuchTopic ContradictionKind = "no_such_topic"
)

// contractCause is the cause a contradiction of each field supports.
var contractCause = map[string]string{
	FieldGroup:      CauseGroupMismatch,
	FieldTopics:     CauseTopicMismatch,
	FieldBrokers:    CauseClusterMismatch,
	FieldCheckpoint: CauseCheckpointMismatch,
}

// driftField maps the deployed config's fields onto the documented ones.
func driftField(f string) string {
	switch f {
	case deployconf.FieldGroup:
		return FieldGroup
	case deployconf.FieldTopics, deployconf.FieldPattern:
		return FieldTopics
	case deployconf.FieldBootstrap:
		return FieldBrokers
	case deployconf.FieldCheckpointLocation:
		return FieldCheckpoint
	}
	return ""
}

// contradictions compares the contract with the deployed config, the checkpoint and the
// brokers. The deployed config is text a person wrote (an indirect signal); the checkpoint's
// offsets and the brokers are what the query really read and what really exists (direct).
func contradictions(in Inputs) []Contradiction {
	c := in.Contract
	var out []Contradiction
	for _, d := range in.Drift {
		f := driftField(d.Field)
		if f == "" || unsetInFile(d) {
			continue
		}
		out = append(out, Contradiction{Kind: ContraDeployed, Field: f, Documented: d.Documented, DocumentedAt: c.DocumentedAt(f),
			Observed: d.Deployed, ObservedAt: d.Evidence, Source: SourceConfig, Drift: &d})
	}
	if r := in.Checkpoint; r != nil && c.Checkpoint != "" && !r.Has(spark.CodeUnreadable) {
		if f := r.Finding(spark.CodeMissing); f != nil && f.File == "" && f.Severity == spark.SeverityCritical {
			// Not even a metadata file: the job checkpoints elsewhere, or never started here.
			out = append(out, Contradiction{Kind: ContraNoCheckpoint, Field: FieldCheckpoint, Documented: c.Checkpoint,
				DocumentedAt: c.DocumentedAt(FieldCheckpoint), ObservedAt: r.Location, Source: SourceCheckpoint})
		}
	}
	if len(c.Topics) == 0 {
		return out
	}
	documented := strings.Join(sortedSet(c.Topics), ", ")
	if read, file := checkpointTopics(in.Checkpoint); len(read) > 0 && !slices.Equal(read, sortedSet(c.Topics)) {
		out = append(out, Contradiction{Kind: ContraCheckpointTopics, Field: FieldTopics, Documented: documented,
			DocumentedAt: c.DocumentedAt(FieldTopics), Observed: strings.Join(read, ", "), ObservedAt: file, Source: SourceCheckpoint,
			NotRead: without(sortedSet(c.Topics), read), NotDocumented: without(read, sortedSet(c.Topics))})
	}
	if b := in.Brokers; b != nil {
		for _, t := range b.Missing {
			if slices.Contains(c.Topics, t) {
				out = append(out, Contradiction{Kind: ContraNoSuchTopic, Field: FieldTopics, Documented: t,
					DocumentedAt: c.DocumentedAt(FieldTopics), ObservedAt: c.Cluster, Source: SourceBrokers})
			}
		}
	}
	return out
}

// unsetInFile says the deployed file does not set a field other than the group at all: that
// contradicts nothing (the job may set it in its code), it is a risk to look at. A group it
// does not set is a contradiction: Spark then generates its own groups.
func unsetInFile(d deployconf.Difference) bool {
	return d.Severity == deployconf.SeverityMissing && d.Field != deployconf.FieldGroup
}

// checkpointTopics are the Kafka topics the checkpoint's newest offsets read (of the
// committed batch, else the planned one), sorted, with that file; none for a query that reads
// no Kafka source.
func checkpointTopics(r *spark.Report) ([]string, string) {
	if r == nil {
		return nil, ""
	}
	pb := r.CommittedOffsets
	if pb == nil || pb.Offsets == nil {
		pb = r.Planned
	}
	if pb == nil || pb.Offsets == nil {
		return nil, ""
	}
	var topics []string
	for _, s := range pb.Offsets.Sources {
		for t := range s.Kafka {
			topics = append(topics, t)
		}
	}
	return sortedSet(topics), pb.File
}

// unread is what waits on documented topics that the checkpoint has no offsets for: whole
// topics it does not read, and partitions of topics it reads that its newest offsets do not
// know. Records count what the brokers still hold.
type unread struct {
	topics     []string // documented topics the checkpoint does not read
	partitions int
	records    int64
	// new are the partitions of read topics the checkpoint does not know (a part of the above);
	// newAbove0 those whose log starts above offset 0.
	newPartitions int
	newRecords    int64
	newAbove0     int
}

func unreadOf(in Inputs) unread {
	var u unread
	read, _ := checkpointTopics(in.Checkpoint)
	b := in.Brokers
	if len(read) == 0 || b == nil {
		return u
	}
	for _, t := range sortedSet(in.Contract.Topics) {
		if slices.Contains(read, t) || slices.Contains(b.Missing, t) {
			continue
		}
		n := int64(0)
		for _, p := range b.Topic(t) {
			if r := b.Partitions[kafka.TopicPartition{Topic: t, Partition: p}].Records(); r > 0 {
				n += r
				u.partitions++
			}
		}
		if n > 0 {
			u.topics = append(u.topics, t)
			u.records += n
		}
	}
	if r := in.Checkpoint; r.UnknownRecords > 0 {
		for _, k := range r.Kafka {
			if k.Note == spark.NoteNotInCheckpoint && slices.Contains(in.Contract.Topics, k.Topic) && k.LogEnd > k.LogStart && k.LogStart >= 0 {
				u.newPartitions++
				u.newRecords += k.LogEnd - k.LogStart
				if k.LogStart > 0 {
					u.newAbove0++
				}
			}
		}
		u.partitions += u.newPartitions
		u.records += u.newRecords
	}
	return u
}

func (u unread) evidence(in Inputs) []Fact {
	var out []Fact
	_, file := checkpointTopics(in.Checkpoint)
	if len(u.topics) > 0 {
		out = append(out, Fact{Kind: FactUnreadTopics, Items: u.topics, N: u.records - u.newRecords, File: file})
	}
	if u.newPartitions > 0 {
		out = append(out, Fact{Kind: FactUnknownPartitions, N: u.newRecords, M: int64(u.newPartitions), File: file})
	}
	return out
}

func sortedSet(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// without is a less b; both sorted.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}
