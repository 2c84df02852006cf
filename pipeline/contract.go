package pipeline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
)

// The documented facts of a pipeline (pipelines[] in the configuration) that the deployment,
// the checkpoint and the brokers are compared with.
const (
	FieldCluster    = "kafka.cluster" // the cluster, by its bootstrap servers
	FieldTopics     = "kafka.topics"
	FieldGroup      = "kafka.group"
	FieldCheckpoint = "checkpoint.location"
)

// Where a fact was seen.
const (
	SeenConfig     = "streamwatch config"
	SeenDeployed   = "deployed config"
	SeenCheckpoint = "checkpoint"
	SeenBrokers    = "brokers"
	SeenDefault    = "Spark's default"
)

// Fact is one value of a pipeline's contract as one place shows it.
type Fact struct {
	Value string // "" when the place does not set it
	Seen  string // SeenConfig, SeenDeployed, SeenCheckpoint, SeenBrokers, SeenDefault
	// Where is the file and line ("sms-replies.conf:4"), the checkpoint file ("offsets/12
	// line 3"), or the cluster and its brokers ("cluster main (127.0.0.1:9092)").
	Where string
}

// Contract is what a pipeline documents, with where each fact is written.
type Contract struct {
	Cluster, Topics, Group, Checkpoint Fact
	TopicList                          []string // the documented topics
	Brokers                            []string // the documented cluster's brokers
}

// ContractOf reads pipeline p's documented facts from cfg.
func ContractOf(cfg *config.Config, p *config.Pipeline) Contract {
	i := slices.IndexFunc(cfg.Pipelines, func(q config.Pipeline) bool { return q.Name == p.Name })
	key := func(k string) string { return cfg.Where(fmt.Sprintf("pipelines[%d].%s", i, k)) }
	c := Contract{TopicList: p.Kafka.Topics,
		Topics:     Fact{Value: strings.Join(p.Kafka.Topics, ", "), Seen: SeenConfig, Where: key("kafka.topics")},
		Group:      Fact{Value: p.Kafka.Group, Seen: SeenConfig, Where: key("kafka.group")},
		Checkpoint: Fact{Value: p.Checkpoint.Location, Seen: SeenConfig, Where: key("checkpoint.location")},
	}
	if cl, ok := cfg.Kafka.Clusters[p.Kafka.Cluster]; ok {
		c.Brokers = cl.Brokers
		c.Cluster = Fact{Value: fmt.Sprintf("%s (%s)", p.Kafka.Cluster, strings.Join(cl.Brokers, ", ")), Seen: SeenConfig,
			Where: cfg.Where("kafka.clusters." + p.Kafka.Cluster + ".brokers")}
	}
	return c
}

// Contradiction is a documented fact another place contradicts.
type Contradiction struct {
	Field      string // FieldCluster, FieldTopics, FieldGroup, FieldCheckpoint
	Documented Fact
	Observed   Fact
	// Reason is what follows from it, as the deployed config's comparison says it ("" when
	// it says nothing).
	Reason string
	// Absent are the documented values the place does not have at all (topics the cluster
	// does not know).
	Absent []string
}

// Codes of what the brokers hold against the checkpoint's offsets.
const (
	// OffsetsDeleted: the checkpoint's next offset is below the partition's log start; the
	// records in between were deleted (retention) before the query read them.
	OffsetsDeleted = "OFFSETS_DELETED"
	// OffsetsAhead: the checkpoint's offset is beyond the partition's log end (the topic was
	// recreated or truncated, or the job reads another cluster).
	OffsetsAhead = "OFFSETS_AHEAD"
	// PartitionsGone: partitions (or their whole topic) the checkpoint reads no longer exist.
	PartitionsGone = "PARTITIONS_GONE"
	// PartitionsUnknown: partitions of the checkpoint's topics that it does not know.
	PartitionsUnknown = "PARTITIONS_UNKNOWN"
)

// maxNamedPartitions is how many partitions a finding names; it counts them all.
const maxNamedPartitions = 5

// OffsetsFinding is partitions where the brokers contradict the checkpoint's offsets, with
// counts and what Spark does about them on restart.
type OffsetsFinding struct {
	Code           string
	Partitions     []string // "topic/p", the first few
	PartitionCount int
	// Records are, by code: the records deleted unread (OffsetsDeleted), the offsets the
	// checkpoint is ahead by (OffsetsAhead), the records waiting there (PartitionsUnknown);
	// -1 when they cannot be counted (PartitionsGone).
	Records int64
	// StartAbove0 counts (PartitionsUnknown) the partitions whose log start is above 0:
	// Spark reads a partition it discovers from offset 0, and fails on one that starts later
	// under failOnDataLoss.
	StartAbove0 int
	File        string // the checkpoint's offsets file the offsets are from
	Brokers     string // the cluster and its brokers
	// FailOnDataLoss is the option's value and where it is set (the deployed config, or
	// Spark's default).
	FailOnDataLoss Fact
}

// Fails says whether Spark fails the query over it on restart (and at its next batch):
// failOnDataLoss true, and for unknown partitions only when one starts above offset 0.
func (f OffsetsFinding) Fails() bool {
	if !strings.EqualFold(f.FailOnDataLoss.Value, "true") {
		return false
	}
	return f.Code != PartitionsUnknown || f.StartAbove0 > 0
}

// Finding is what a check found that Judge turns into a cause when a live symptom it
// explains is present, and into a risk otherwise: a documented fact contradicted, or the
// checkpoint's offsets against what the brokers hold.
type Finding struct {
	Cause         string
	Contradiction *Contradiction
	Offsets       *OffsetsFinding
}

// TopicUnread is a documented topic whose records wait on the brokers while the checkpoint
// reads none of its partitions (DOCUMENTED_TOPIC_UNREAD).
type TopicUnread struct {
	Topic      string
	Records    int64 // the records the brokers hold of it
	Partitions int
	File       string // the checkpoint's offsets file that does not name it
	Reads      string // the topics that file reads
}

// failOnDataLoss is the deployed option, or Spark's default.
func failOnDataLoss(dep *deployconf.Deployed) Fact {
	if dep != nil && dep.FailOnDataLoss != "" {
		return Fact{Value: strings.ToLower(dep.FailOnDataLoss), Seen: SeenDeployed, Where: dep.Sources[deployconf.FieldFailOnDataLoss]}
	}
	return Fact{Value: "true", Seen: SeenDefault}
}

// brokersWhere names the cluster an answer came from.
func brokersWhere(r *kafka.LogRanges) string {
	return fmt.Sprintf("cluster %s (%s)", r.Cluster, strings.Join(r.Bootstrap, ", "))
}

// baseline is the checkpoint's offsets file the offsets are compared from: the newest
// committed batch's, else the newest planned one's.
func baseline(r *spark.Report) *spark.PlannedBatch {
	if r.CommittedOffsets != nil && r.CommittedOffsets.Offsets != nil {
		return r.CommittedOffsets
	}
	if r.Planned != nil && r.Planned.Offsets != nil {
		return r.Planned
	}
	return nil
}

// checkpointTopics are the Kafka topics an offsets file reads, sorted, with the line of
// each ("offsets/12 line 3").
func checkpointTopics(pb *spark.PlannedBatch) ([]string, map[string]string) {
	var topics []string
	where := map[string]string{}
	for _, src := range pb.Offsets.Sources {
		for t := range src.Kafka {
			if _, ok := where[t]; !ok {
				topics = append(topics, t)
				where[t] = pb.File + " line " + strconv.Itoa(3+src.Index)
			}
		}
	}
	slices.Sort(topics)
	return topics, where
}

// offsetsFindings compares the checkpoint's offsets (its baseline file) with what the brokers
// hold: partitions gone, offsets below the log start or beyond the log end, partitions of its
// topics it does not know. Only topics the brokers were asked about are judged.
func offsetsFindings(r *spark.Report, brokers *kafka.LogRanges, fail Fact) []*OffsetsFinding {
	pb := baseline(r)
	if pb == nil || brokers == nil {
		return nil
	}
	committed := pb == r.CommittedOffsets
	by := map[string]*OffsetsFinding{}
	var order []string
	add := func(code, tp string, records int64) *OffsetsFinding {
		f := by[code]
		if f == nil {
			f = &OffsetsFinding{Code: code, File: pb.File, Brokers: brokersWhere(brokers), FailOnDataLoss: fail}
			by[code] = f
			order = append(order, code)
		}
		f.PartitionCount++
		if len(f.Partitions) < maxNamedPartitions {
			f.Partitions = append(f.Partitions, tp)
		}
		if records < 0 || f.Records < 0 {
			f.Records = -1
		} else {
			f.Records += records
		}
		return f
	}
	for _, row := range r.Kafka {
		tr, asked := brokers.Topic(row.Topic)
		if !asked {
			continue
		}
		tp := fmt.Sprintf("%s/%d", row.Topic, row.Partition)
		base := row.Planned
		if committed {
			base = row.Committed
		}
		pr, onBrokers := brokers.Partition(row.Topic, row.Partition)
		switch {
		case base >= 0 && (!tr.Exists || !onBrokers):
			add(PartitionsGone, tp, -1)
		case !onBrokers || pr.LogEnd < 0:
		case base < 0:
			if pr.LogStart >= 0 {
				f := add(PartitionsUnknown, tp, max(pr.LogEnd-pr.LogStart, 0))
				if pr.LogStart > 0 {
					f.StartAbove0++
				}
			}
		case base > pr.LogEnd:
			add(OffsetsAhead, tp, base-pr.LogEnd)
		case pr.LogStart > base:
			add(OffsetsDeleted, tp, pr.LogStart-base)
		}
	}
	out := make([]*OffsetsFinding, 0, len(order))
	for _, code := range order {
		out = append(out, by[code])
	}
	slices.SortFunc(out, func(a, b *OffsetsFinding) int { return strings.Compare(a.Code, b.Code) })
	return out
}

// unreadTopics are the documented topics the brokers hold records of while the checkpoint,
// which reads Kafka, reads none of their partitions.
func unreadTopics(documented []string, r *spark.Report, brokers *kafka.LogRanges) []TopicUnread {
	pb := baseline(r)
	if pb == nil || brokers == nil {
		return nil
	}
	reads, _ := checkpointTopics(pb)
	if len(reads) == 0 {
		return nil
	}
	var out []TopicUnread
	for _, t := range documented {
		if slices.Contains(reads, t) {
			continue
		}
		tr, ok := brokers.Topic(t)
		if !ok || !tr.Exists {
			continue
		}
		u := TopicUnread{Topic: t, Partitions: len(tr.Partitions), File: pb.File, Reads: strings.Join(reads, ", ")}
		for _, p := range tr.Partitions {
			if p.LogStart >= 0 && p.LogEnd > p.LogStart {
				u.Records += p.LogEnd - p.LogStart
			}
		}
		if u.Records > 0 {
			out = append(out, u)
		}
	}
	return out
}
