package pipeline_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/pipeline"
)

var contract = pipeline.Contract{Pipeline: "sms-replies", Cluster: "main", Brokers: []string{"kafka-0:9092"},
	Topics: []string{"client.replies.sms"}, Group: "sms-replies-prod", Checkpoint: "/cp"}

// reading is a checkpoint whose newest commit (of batch 3, age old) read topic's partitions
// 0..2 up to offset 10, against brokers holding [start, end) of every partition of the
// documented topic and of topic.
func reading(topic string, age time.Duration, start, end int64) (*spark.Report, *kafka.TopicRanges) {
	offsets := &spark.PlannedBatch{ID: 3, File: "offsets/3", Offsets: &spark.OffsetSeq{Sources: []spark.SourceOffset{{Kind: spark.SourceKafka,
		Kafka: spark.KafkaOffsets{topic: {0: 10, 1: 10, 2: 10}}}}}}
	r := &spark.Report{Committed: &spark.CommittedBatch{ID: 3, File: "commits/3", ModTime: at.Add(-age)}, Planned: offsets, CommittedOffsets: offsets,
		WaitingFor: -1, StaleAfter: 10 * time.Minute, Findings: []spark.Finding{{Code: spark.CodeOK}}}
	b := &kafka.TopicRanges{Partitions: map[kafka.TopicPartition]kafka.PartitionRange{}}
	for _, t := range []string{"client.replies.sms", topic} {
		for p := range int32(3) {
			b.Partitions[kafka.TopicPartition{Topic: t, Partition: p}] = kafka.PartitionRange{Start: start, End: end}
		}
	}
	return r, b
}

// stall makes r a checkpoint whose records have waited 30 minutes with no commit.
func stall(r *spark.Report, waiting int64) *spark.Report {
	r.PendingKnown, r.PendingTotal, r.WaitingFor = true, waiting, 30*time.Minute
	r.Findings = []spark.Finding{{Code: spark.CodeStale, Severity: spark.SeverityCritical, File: "commits/3", Summary: spark.Line{Kind: spark.LineRecordsWaited, N: waiting, For: 30 * time.Minute, Limit: 10 * time.Minute}}}
	return r
}

func drift(field, documented, deployed, evidence string) []deployconf.Difference {
	return []deployconf.Difference{{Field: field, Documented: documented, Deployed: deployed, Evidence: evidence, Severity: deployconf.SeverityMismatch}}
}

// TestJudgeContract: each documented fact of a pipeline, contradicted while progress stops,
// is the first cause, naming the field, both values and where each was seen; the same
// contradiction while the pipeline progresses is a risk under "healthy".
func TestJudgeContract(t *testing.T) {
	cases := []struct {
		name  string
		stops func() pipeline.Inputs
		goes  func() pipeline.Inputs
		cause string
		want  []pipeline.Contradiction // patterns of the first cause's evidence
	}{
		{name: "topics: the job subscribes to another topic, its checkpoint reads it, the documented topic fills up unread",
			stops: func() pipeline.Inputs {
				r, b := reading("client.replies.sms.v2", time.Second, 0, 90)
				return pipeline.Inputs{Checkpoint: r, Brokers: b, Lag: healthyLag(),
					Drift: drift(deployconf.FieldTopics, "client.replies.sms", "client.replies.sms.v2", "sms-replies.conf:13: spark.kafka.subscribe=client.replies.sms.v2")}
			},
			goes: func() pipeline.Inputs { // the checkpoint reads the documented topic: the file is stale
				r, b := reading("client.replies.sms", time.Second, 0, 10)
				return pipeline.Inputs{Checkpoint: r, Brokers: b, Lag: healthyLag(),
					Drift: drift(deployconf.FieldTopics, "client.replies.sms", "client.replies.sms.v2", "sms-replies.conf:13: spark.kafka.subscribe=client.replies.sms.v2")}
			},
			cause: pipeline.CauseTopicMismatch,
			want: []pipeline.Contradiction{{Kind: pipeline.ContraCheckpointTopics, Source: pipeline.SourceCheckpoint, Field: pipeline.FieldTopics, Documented: "client.replies.sms",
				DocumentedAt: "pipelines[sms-replies].kafka.topics", Observed: "client.replies.sms.v2", ObservedAt: "offsets/3",
				NotRead: []string{"client.replies.sms"}, NotDocumented: []string{"client.replies.sms.v2"}},
				{Kind: pipeline.ContraDeployed, Source: pipeline.SourceConfig, Field: pipeline.FieldTopics, Documented: "client.replies.sms",
					DocumentedAt: "pipelines[sms-replies].kafka.topics", Observed: "client.replies.sms.v2", ObservedAt: "sms-replies.conf:13: spark.kafka.subscribe=client.replies.sms.v2"}}},
		{name: "bootstrap servers: the job reads another cluster",
			stops: func() pipeline.Inputs {
				r, b := reading("client.replies.sms", 40*time.Minute, 0, 40)
				return pipeline.Inputs{Checkpoint: stall(r, 90), Brokers: b,
					Drift: drift(deployconf.FieldBootstrap, "kafka-0:9092", "kafka-dr-0:9092", "sms-replies.conf:14: spark.kafka.bootstrap.servers=kafka-dr-0:9092")}
			},
			goes: func() pipeline.Inputs {
				r, b := reading("client.replies.sms", time.Second, 0, 10)
				return pipeline.Inputs{Checkpoint: r, Brokers: b,
					Drift: drift(deployconf.FieldBootstrap, "kafka-0:9092", "kafka-dr-0:9092", "sms-replies.conf:14: spark.kafka.bootstrap.servers=kafka-dr-0:9092")}
			},
			cause: pipeline.CauseClusterMismatch,
			want: []pipeline.Contradiction{{Kind: pipeline.ContraDeployed, Source: pipeline.SourceConfig, Field: pipeline.FieldBrokers, Documented: "kafka-0:9092",
				DocumentedAt: "kafka.clusters (pipelines[sms-replies].kafka.cluster)", Observed: "kafka-dr-0:9092", ObservedAt: "sms-replies.conf:14"}}},
		{name: "checkpoint location: the job writes elsewhere",
			stops: func() pipeline.Inputs {
				r, b := reading("client.replies.sms", 40*time.Minute, 0, 40)
				return pipeline.Inputs{Checkpoint: stall(r, 90), Brokers: b, Probe: probeWith(true),
					Drift: drift(deployconf.FieldCheckpointLocation, "/cp", "/cp-v2", "sms-replies.conf:21: option.checkpointLocation=/cp-v2")}
			},
			goes: func() pipeline.Inputs {
				r, b := reading("client.replies.sms", time.Second, 0, 10)
				return pipeline.Inputs{Checkpoint: r, Brokers: b, Probe: probeWith(true),
					Drift: drift(deployconf.FieldCheckpointLocation, "/cp", "/cp-v2", "sms-replies.conf:21: option.checkpointLocation=/cp-v2")}
			},
			cause: pipeline.CauseCheckpointMismatch,
			want: []pipeline.Contradiction{{Kind: pipeline.ContraDeployed, Source: pipeline.SourceConfig, Field: pipeline.FieldCheckpoint, Documented: "/cp",
				DocumentedAt: "pipelines[sms-replies].checkpoint.location", Observed: "/cp-v2", ObservedAt: "sms-replies.conf:21: option.checkpointLocation=/cp-v2"}}},
		{name: "group: the job consumes as another group",
			stops: func() pipeline.Inputs {
				r, b := reading("client.replies.sms", time.Second, 0, 10)
				return pipeline.Inputs{Checkpoint: r, Brokers: b, Lag: &kafka.LagReport{Status: kafka.StatusOK, Mismatch: otherGroupConsumes},
					Drift: drift(deployconf.FieldGroup, "sms-replies-prod", "sms-replies-v2", "sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2")}
			},
			goes: func() pipeline.Inputs {
				r, b := reading("client.replies.sms", time.Second, 0, 10)
				return pipeline.Inputs{Checkpoint: r, Brokers: b, Lag: healthyLag(),
					Drift: drift(deployconf.FieldGroup, "sms-replies-prod", "sms-replies-v2", "sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2")}
			},
			cause: pipeline.CauseGroupMismatch,
			want: []pipeline.Contradiction{{Kind: pipeline.ContraDeployed, Source: pipeline.SourceConfig, Field: pipeline.FieldGroup, Documented: "sms-replies-prod",
				DocumentedAt: "pipelines[sms-replies].kafka.group", Observed: "sms-replies-v2", ObservedAt: "sms-replies.conf:12"}}},
		{name: "topics: the documented topic does not exist on the documented cluster",
			stops: func() pipeline.Inputs {
				r, b := reading("client.replies.sms.v2", time.Second, 0, 10)
				for p := range int32(3) {
					delete(b.Partitions, kafka.TopicPartition{Topic: "client.replies.sms", Partition: p})
				}
				b.Missing = []string{"client.replies.sms"}
				return pipeline.Inputs{Checkpoint: r, Brokers: b, Lag: &kafka.LagReport{Status: kafka.StatusStopped, Summary: kafka.Summary{Status: kafka.StatusStopped, Judged: 1, Same: 1, Worst: kafka.PartitionVerdict{Lag: 5, Evidence: kafka.Evidence{Rule: kafka.RuleStopped, For: 20 * time.Minute}}},
					Group: kafka.GroupInfo{Name: "sms-replies-prod"}}}
			},
			goes: func() pipeline.Inputs {
				r, b := reading("client.replies.sms.v2", time.Second, 0, 10)
				for p := range int32(3) {
					delete(b.Partitions, kafka.TopicPartition{Topic: "client.replies.sms", Partition: p})
				}
				b.Missing = []string{"client.replies.sms"}
				return pipeline.Inputs{Checkpoint: r, Brokers: b, Lag: healthyLag()}
			},
			cause: pipeline.CauseTopicMismatch,
			want: []pipeline.Contradiction{{Kind: pipeline.ContraNoSuchTopic, Source: pipeline.SourceBrokers, Field: pipeline.FieldTopics, Documented: "client.replies.sms",
				DocumentedAt: "pipelines[sms-replies].kafka.topics", ObservedAt: "main"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.stops()
			in.Pipeline, in.Now, in.Contract = "sms-replies", at, contract
			v := pipeline.Judge(in)
			if len(v.Causes) == 0 || v.Causes[0].ID != c.cause {
				t.Fatalf("causes %+v, want %s first (symptoms %+v)", v.Causes, c.cause, v.Symptoms)
			}
			for _, w := range c.want {
				if !hasFact(v.Causes[0].Evidence, contra(w)) {
					t.Errorf("the cause's evidence lacks %+v:\n%+v", w, v.Causes[0].Evidence)
				}
			}
			if len(v.Causes[0].Contradictions) == 0 || v.Causes[0].Contradictions[0].Risk {
				t.Errorf("contradictions %+v", v.Causes[0].Contradictions)
			}

			in = c.goes()
			in.Pipeline, in.Now, in.Contract = "sms-replies", at, contract
			v = pipeline.Judge(in)
			if !v.Healthy || len(v.Causes) != 0 {
				t.Fatalf("progressing: healthy %v, causes %+v, symptoms %+v", v.Healthy, v.Causes, v.Symptoms)
			}
			risk := contra(c.want[len(c.want)-1])
			risk.Risk = c.cause
			if !hasFact(v.Risks, risk) {
				t.Errorf("risks lack the contradiction %+v:\n%+v", c.want[len(c.want)-1], v.Risks)
			}
			for _, k := range v.Contradictions {
				if !k.Risk || k.Cause != c.cause {
					t.Errorf("contradiction %+v: want a risk of %s", k, c.cause)
				}
			}
		})
	}
}

// TestJudgeAgainstTheBrokers: offsets retention deleted before the query read them, and a
// partition the checkpoint does not know, each named first with their counts; the waiting
// count is what still exists.
func TestJudgeAgainstTheBrokers(t *testing.T) {
	t.Run("offsets no longer on the brokers", func(t *testing.T) {
		r, b := reading("client.replies.sms", 40*time.Minute, 30, 40)
		r = stall(r, 30)
		r.LostRecords, r.LostPartitions = 60, 3
		r.Findings = append(r.Findings, spark.Finding{Code: spark.CodeOffsetsGone, Severity: spark.SeverityCritical, File: "offsets/3",
			Evidence: []spark.Line{{Kind: spark.LineDeletedUnread, Topic: "client.replies.sms", Partition: 0, M: 10, N: 20}}})
		lost := pipeline.Fact{Kind: pipeline.FactOffsetsGone, N: 60, M: 3, File: "offsets/3"}
		for _, c := range []struct {
			deployed *deployconf.Deployed
			want     pipeline.Fact
			first    string
		}{
			{nil, pipeline.Fact{Restart: pipeline.RestartFail}, pipeline.CauseOffsetsGone},
			{&deployconf.Deployed{FailOnDataLoss: "false", Sources: map[string]string{deployconf.FieldFailOnDataLoss: "job.conf:16"}},
				pipeline.Fact{Restart: pipeline.RestartSkip, Value: "false", Source: "job.conf:16", Risk: pipeline.CauseOffsetsGone}, ""},
		} {
			v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Contract: contract, Checkpoint: r, Brokers: b, Deployed: c.deployed, Probe: probeWith(true)})
			all := v.Risks
			for _, c := range v.Causes {
				all = append(all, c.Evidence...)
			}
			want := c.want
			want.Kind, want.N, want.M, want.File = lost.Kind, lost.N, lost.M, lost.File
			if !hasFact(all, want) || v.Restart != c.want.Restart {
				t.Errorf("lacks %+v (restart %q):\n%+v", want, v.Restart, all)
			}
			if c.deployed == nil && hasFact(all, pipeline.Fact{Kind: pipeline.FactOffsetsGone, Value: "f"}) {
				t.Errorf("a failOnDataLoss nobody set is named: %+v", all)
			}
			switch {
			case c.first != "" && (len(v.Causes) == 0 || v.Causes[0].ID != c.first):
				t.Errorf("causes %+v, want %s first", v.Causes, c.first)
			case c.first == "" && len(v.Causes) != 0:
				// Spark skips the gap: the loss is a risk, not why progress stopped.
				t.Errorf("causes %+v: the skipped records explain no stop", v.Causes)
			}
		}
	})
	t.Run("a partition the checkpoint does not know", func(t *testing.T) {
		r, b := reading("client.replies.sms", time.Second, 0, 10)
		b.Partitions[kafka.TopicPartition{Topic: "client.replies.sms", Partition: 3}] = kafka.PartitionRange{Start: 0, End: 7}
		r.UnknownPartitions, r.UnknownRecords = 1, 7
		r.Kafka = []spark.KafkaPartition{{Topic: "client.replies.sms", Partition: 3, LogStart: 0, LogEnd: 7, Committed: -1, Planned: -1, Note: spark.NoteNotInCheckpoint}}
		v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Contract: contract, Checkpoint: r, Brokers: b, Lag: healthyLag(), Probe: probeWith(true)})
		if len(v.Causes) != 1 || v.Causes[0].ID != pipeline.CausePartitionsUnknown || len(v.Symptoms) != 1 || v.Symptoms[0].ID != pipeline.SymptomRecordsUnread {
			t.Fatalf("causes %+v symptoms %+v", v.Causes, v.Symptoms)
		}
		if ev := v.Causes[0].Evidence; !hasFact(ev, pipeline.Fact{Kind: pipeline.FactNewPartitions, N: 7, M: 1}) {
			t.Errorf("evidence %+v lacks the counts", ev)
		}
		if ev := v.Symptoms[0].Evidence; len(ev) != 1 || !hasFact(ev, pipeline.Fact{Kind: pipeline.FactUnknownPartitions, N: 7, M: 1, File: "offsets/3"}) {
			t.Errorf("the symptom's evidence %+v lacks the unknown partition's records", ev)
		}
	})
}

// TestJudgeNoCauseHasContent: a stop nothing explains lists every cause with what ruled it
// out, or why it was not checked, and one next step.
func TestJudgeNoCauseHasContent(t *testing.T) {
	r, b := reading("client.replies.sms", 40*time.Minute, 0, 40)
	v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Contract: contract, Checkpoint: stall(r, 90), Brokers: b,
		Lag: healthyLag(), Probe: probeWith(true), Deployed: &deployconf.Deployed{GroupID: "sms-replies-prod", Topics: []string{"client.replies.sms"},
			Bootstrap: []string{"kafka-0:9092"}, CheckpointLocation: "/cp", Sources: map[string]string{deployconf.FieldGroup: "job.conf:12"}}})
	if v.Healthy || len(v.Causes) != 0 || len(v.Unexplained) != 1 {
		t.Fatalf("verdict %+v", v)
	}
	if len(v.Checked) != len(pipeline.Causes) {
		t.Fatalf("checked %d causes, want every one of %d", len(v.Checked), len(pipeline.Causes))
	}
	for _, c := range v.Checked {
		if c.Status != pipeline.CheckRuledOut || c.Reason == "" {
			t.Errorf("%s: %s %q, want ruled out with evidence", c.Cause, c.Status, c.Reason)
		}
	}
	if v.Next != pipeline.NextConfigureLogs {
		t.Errorf("next step %q, want %q (no driver log is configured)", v.Next, pipeline.NextConfigureLogs)
	}
}

// TestJudgeContractEdges: a field the deployed file does not set (other than the group)
// contradicts nothing, the job may set it in its code: a risk, never the cause of a stop; a
// documented location that holds no checkpoint at all contradicts the documentation and
// explains the documented group's stop; a documented fact is named with its file and line.
func TestJudgeContractEdges(t *testing.T) {
	t.Run("bootstrap not set in the deployed file", func(t *testing.T) {
		r, b := reading("client.replies.sms", 40*time.Minute, 0, 40)
		v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Contract: contract, Checkpoint: stall(r, 90), Brokers: b,
			Lag: healthyLag(), Probe: probeWith(true), Drift: []deployconf.Difference{{Field: deployconf.FieldBootstrap, Documented: "kafka-0:9092",
				Evidence: "sms-replies.conf: no kafka.bootstrap.servers", Severity: deployconf.SeverityMissing}}})
		if len(v.Causes) != 0 || len(v.Contradictions) != 0 {
			t.Fatalf("causes %+v, contradictions %+v: a setting the file leaves out is no contradiction", v.Causes, v.Contradictions)
		}
		if !hasFact(v.Risks, pipeline.Fact{Kind: pipeline.FactNotSet, What: deployconf.FieldBootstrap, Value: "kafka-0:9092", Source: "sms-replies.conf: no kafka.bootstrap.servers"}) {
			t.Errorf("risks %+v", v.Risks)
		}
	})
	t.Run("the deployed config's reasons travel as its difference", func(t *testing.T) {
		r, b := reading("client.replies.sms", 40*time.Minute, 0, 40)
		other := deployconf.Difference{Field: deployconf.FieldBootstrap, Documented: "kafka-0:9092", Deployed: "kafka-dr-0:9092",
			Evidence: "sms-replies.conf:14: spark.kafka.bootstrap.servers=kafka-dr-0:9092", Severity: deployconf.SeverityMismatch, Why: deployconf.WhyOtherCluster}
		none := deployconf.Difference{Field: deployconf.FieldTopics, Documented: "client.replies.sms",
			Evidence: "sms-replies.conf: no subscribe, subscribePattern or assign", Severity: deployconf.SeverityMissing, Why: deployconf.WhyNoTopics}
		v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Contract: contract, Checkpoint: stall(r, 90), Brokers: b,
			Probe: probeWith(true), Drift: []deployconf.Difference{other, none}})
		if len(v.Contradictions) != 1 || v.Contradictions[0].Drift == nil || !reflect.DeepEqual(*v.Contradictions[0].Drift, other) || v.Contradictions[0].Reason != "" {
			t.Errorf("contradictions %+v: want the bootstrap's, carrying its difference", v.Contradictions)
		}
		if !hasFact(v.Risks, pipeline.Fact{Kind: pipeline.FactNotSet, What: deployconf.FieldTopics, Value: "client.replies.sms", Source: none.Evidence, Drift: &none}) {
			t.Errorf("risks %+v: want the topics not set, carrying the difference", v.Risks)
		}
	})
	t.Run("no checkpoint at the documented location", func(t *testing.T) {
		r := &spark.Report{Location: "/cp", WaitingFor: -1, Findings: []spark.Finding{{Code: spark.CodeMissing, Severity: spark.SeverityCritical,
			Summary: spark.Line{Kind: spark.LineNotACheckpoint, File: "/cp"}}}}
		v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Contract: contract, Checkpoint: r,
			Lag: &kafka.LagReport{Status: kafka.StatusStopped, Summary: kafka.Summary{Status: kafka.StatusStopped, Judged: 1, Same: 1, Worst: kafka.PartitionVerdict{Lag: 5, Evidence: kafka.Evidence{Rule: kafka.RuleStopped, For: 20 * time.Minute}}}, Group: kafka.GroupInfo{Name: "sms-replies-prod"}}})
		if len(v.Causes) == 0 || v.Causes[0].ID != pipeline.CauseCheckpointMismatch {
			t.Fatalf("causes %+v, symptoms %+v", v.Causes, v.Symptoms)
		}
		if ev := v.Causes[0].Evidence; !hasFact(ev, contra(pipeline.Contradiction{Kind: pipeline.ContraNoCheckpoint, Source: pipeline.SourceCheckpoint,
			Field: pipeline.FieldCheckpoint, Documented: "/cp", DocumentedAt: "pipelines[sms-replies].checkpoint.location", ObservedAt: "/cp"})) {
			t.Errorf("evidence %+v", ev)
		}
	})
	t.Run("the file and line of a documented fact", func(t *testing.T) {
		c := contract
		c.Lines = map[string]string{pipeline.FieldTopics: "/etc/streamwatch.yaml:14"}
		if got := c.DocumentedAt(pipeline.FieldTopics); got != "pipelines[sms-replies].kafka.topics, /etc/streamwatch.yaml:14" {
			t.Errorf("DocumentedAt = %q", got)
		}
		if got := c.DocumentedAt(pipeline.FieldGroup); got != "pipelines[sms-replies].kafka.group" {
			t.Errorf("DocumentedAt without a line = %q", got)
		}
	})
}
