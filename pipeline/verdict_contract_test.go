package pipeline_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/pipeline"
)

const smsTopic = "client.replies.sms"

// contract is the seed pipeline's documentation, as streamwatch.yaml writes it.
var contract = pipeline.Contract{TopicList: []string{smsTopic}, Brokers: []string{"127.0.0.1:9092"},
	Cluster:    pipeline.Fact{Value: "main (127.0.0.1:9092)", Seen: pipeline.SeenConfig, Where: "streamwatch.yaml:40 (kafka.clusters.main.brokers)"},
	Topics:     pipeline.Fact{Value: smsTopic, Seen: pipeline.SeenConfig, Where: "streamwatch.yaml:14 (pipelines[0].kafka.topics)"},
	Group:      pipeline.Fact{Value: "sms-replies-prod", Seen: pipeline.SeenConfig, Where: "streamwatch.yaml:15 (pipelines[0].kafka.group)"},
	Checkpoint: pipeline.Fact{Value: "/cp", Seen: pipeline.SeenConfig, Where: "streamwatch.yaml:17 (pipelines[0].checkpoint.location)"}}

// reading makes r a checkpoint whose newest committed batch read offsets of topic; extra
// are rows of partitions only the brokers have.
func reading(r *spark.Report, topic string, offsets map[int32]int64, extra ...int32) *spark.Report {
	seq := &spark.OffsetSeq{Version: 1, Sources: []spark.SourceOffset{{Index: 0, Kind: spark.SourceKafka, Kafka: spark.KafkaOffsets{topic: offsets}}}}
	pb := &spark.PlannedBatch{ID: r.Committed.ID, File: fmt.Sprintf("offsets/%d", r.Committed.ID), Offsets: seq}
	r.Planned, r.CommittedOffsets, r.Location, r.QueryID = pb, pb, "/cp", "5f3c-…"
	for p, off := range offsets {
		r.Kafka = append(r.Kafka, spark.KafkaPartition{Topic: topic, Partition: p, Committed: off, Planned: off, LogEnd: -1, LogStart: -1})
	}
	for _, p := range extra {
		r.Kafka = append(r.Kafka, spark.KafkaPartition{Topic: topic, Partition: p, Committed: -1, Planned: -1, LogEnd: -1, LogStart: -1})
	}
	slices.SortFunc(r.Kafka, func(a, b spark.KafkaPartition) int { return int(a.Partition - b.Partition) })
	return r
}

// holding is what cluster main holds: topic → partition → {log start, log end}; a topic
// mapped to nil does not exist.
func holding(topics map[string]map[int32][2]int64) *kafka.LogRanges {
	r := &kafka.LogRanges{Cluster: "main", Bootstrap: []string{"127.0.0.1:9092"}, At: at}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	slices.Sort(names)
	for _, t := range names {
		tr := kafka.TopicRange{Topic: t, Exists: topics[t] != nil}
		for p, se := range topics[t] {
			tr.Partitions = append(tr.Partitions, kafka.PartitionRange{Partition: p, LogStart: se[0], LogEnd: se[1]})
		}
		slices.SortFunc(tr.Partitions, func(a, b kafka.PartitionRange) int { return int(a.Partition - b.Partition) })
		r.Topics = append(r.Topics, tr)
	}
	return r
}

func deployed(field, value, where string) (*deployconf.Deployed, []deployconf.Difference) {
	dep := &deployconf.Deployed{File: "sms-replies.conf", Sources: map[string]string{}}
	if field == "" {
		return dep, nil
	}
	return dep, []deployconf.Difference{{Field: field, Deployed: value, Evidence: where, Severity: deployconf.SeverityMismatch}}
}

// TestJudgeContract: each documented fact the deployment, the checkpoint or the brokers
// contradict is a finding naming the field and both values with where each was seen; it is
// the probable cause while a symptom it explains is present, and a risk under "healthy"
// otherwise.
func TestJudgeContract(t *testing.T) {
	fresh := func() *spark.Report { return reading(committing(), smsTopic, map[int32]int64{0: 40, 1: 40, 2: 40}) }
	caughtUp := holding(map[string]map[int32][2]int64{smsTopic: {0: {0, 40}, 1: {0, 40}, 2: {0, 40}}})
	cases := []struct {
		name       string
		in         pipeline.Inputs
		cause      string // the cause of the field; "" when healthy (then a risk)
		first      string // the first cause, when not cause
		confidence pipeline.Confidence
		field      string
		observed   []pipeline.Fact // what the cause's (or the risk's) findings observed, in order
		symptoms   []string
	}{
		{name: "the job reads another topic: its checkpoint and its deployed config say so, the documented topic fills up unread",
			in: func() pipeline.Inputs {
				dep, diffs := deployed(deployconf.FieldTopics, smsTopic+".v2", "sms-replies.conf:4: subscribe="+smsTopic+".v2")
				return pipeline.Inputs{Lag: healthyLag(), Deployed: dep, Drift: diffs,
					Checkpoint: reading(committing(), smsTopic+".v2", map[int32]int64{0: 12}),
					Brokers:    holding(map[string]map[int32][2]int64{smsTopic: {0: {0, 40}, 1: {0, 40}, 2: {0, 40}}, smsTopic + ".v2": {0: {0, 12}}})}
			}(),
			cause: pipeline.CauseTopicMismatch, confidence: pipeline.Confirmed, field: pipeline.FieldTopics, symptoms: []string{pipeline.SymptomTopicUnread},
			observed: []pipeline.Fact{
				{Value: smsTopic + ".v2", Seen: pipeline.SeenDeployed, Where: "sms-replies.conf:4: subscribe=" + smsTopic + ".v2"},
				{Value: smsTopic + ".v2", Seen: pipeline.SeenCheckpoint, Where: "offsets/812 line 3"}}},
		{name: "the job reads the documented topic and another: a risk while it progresses",
			in: func() pipeline.Inputs {
				dep, diffs := deployed(deployconf.FieldTopics, smsTopic+", client.replies.mms", "sms-replies.conf:4: subscribe="+smsTopic+",client.replies.mms")
				return pipeline.Inputs{Lag: healthyLag(), Checkpoint: fresh(), Brokers: caughtUp, Deployed: dep, Drift: diffs}
			}(),
			field: pipeline.FieldTopics,
			observed: []pipeline.Fact{{Value: smsTopic + ", client.replies.mms", Seen: pipeline.SeenDeployed,
				Where: "sms-replies.conf:4: subscribe=" + smsTopic + ",client.replies.mms"}}},
		{name: "the documented topic does not exist on the documented cluster while progress stops",
			in: pipeline.Inputs{Lag: healthyLag(), Checkpoint: reading(stopped(), smsTopic, map[int32]int64{0: 10}),
				Brokers: holding(map[string]map[int32][2]int64{smsTopic: nil})},
			cause: pipeline.CauseTopicMismatch, confidence: pipeline.Confirmed, field: pipeline.FieldTopics, symptoms: []string{pipeline.SymptomProgressStopped},
			first:    pipeline.CauseOffsetsGone, // the checkpoint's partitions are gone with it
			observed: []pipeline.Fact{{Value: "", Seen: pipeline.SeenBrokers, Where: "cluster main (127.0.0.1:9092)"}}},
		{name: "the job reads another cluster while progress stops",
			in: func() pipeline.Inputs {
				dep, diffs := deployed(deployconf.FieldBootstrap, "kafka-b:9092", "sms-replies.conf:6: kafka.bootstrap.servers=kafka-b:9092")
				return pipeline.Inputs{Lag: healthyLag(), Checkpoint: reading(stopped(), smsTopic, map[int32]int64{0: 10, 1: 10, 2: 10}), Brokers: caughtUp, Deployed: dep, Drift: diffs}
			}(),
			cause: pipeline.CauseClusterMismatch, confidence: pipeline.Likely, field: pipeline.FieldCluster, symptoms: []string{pipeline.SymptomProgressStopped},
			observed: []pipeline.Fact{{Value: "kafka-b:9092", Seen: pipeline.SeenDeployed, Where: "sms-replies.conf:6: kafka.bootstrap.servers=kafka-b:9092"}}},
		{name: "another cluster while the pipeline progresses: a risk",
			in: func() pipeline.Inputs {
				dep, diffs := deployed(deployconf.FieldBootstrap, "kafka-b:9092", "sms-replies.conf:6: kafka.bootstrap.servers=kafka-b:9092")
				return pipeline.Inputs{Lag: healthyLag(), Checkpoint: fresh(), Brokers: caughtUp, Deployed: dep, Drift: diffs}
			}(),
			field:    pipeline.FieldCluster,
			observed: []pipeline.Fact{{Value: "kafka-b:9092", Seen: pipeline.SeenDeployed, Where: "sms-replies.conf:6: kafka.bootstrap.servers=kafka-b:9092"}}},
		{name: "the job checkpoints elsewhere while the documented checkpoint stops",
			in: func() pipeline.Inputs {
				dep, diffs := deployed(deployconf.FieldCheckpointLocation, "/cp-v2", "sms-replies.conf:9: checkpointLocation=/cp-v2")
				return pipeline.Inputs{Lag: healthyLag(), Checkpoint: reading(stopped(), smsTopic, map[int32]int64{0: 10, 1: 10, 2: 10}), Brokers: caughtUp, Deployed: dep, Drift: diffs}
			}(),
			cause: pipeline.CauseLocationMismatch, confidence: pipeline.Likely, field: pipeline.FieldCheckpoint, symptoms: []string{pipeline.SymptomProgressStopped},
			observed: []pipeline.Fact{{Value: "/cp-v2", Seen: pipeline.SeenDeployed, Where: "sms-replies.conf:9: checkpointLocation=/cp-v2"}}},
		{name: "the job consumes with another group: the documented one idles",
			in: func() pipeline.Inputs {
				dep, diffs := deployed(deployconf.FieldGroup, "sms-replies-v2", "sms-replies.conf:3: kafka.group.id=sms-replies-v2")
				return pipeline.Inputs{Lag: &kafka.LagReport{Status: kafka.StatusOK, Mismatch: otherGroupConsumes}, Checkpoint: fresh(), Brokers: caughtUp, Deployed: dep, Drift: diffs}
			}(),
			cause: pipeline.CauseGroupMismatch, confidence: pipeline.Confirmed, field: pipeline.FieldGroup, symptoms: []string{pipeline.SymptomDocumentedGroupIdle},
			observed: []pipeline.Fact{{Value: "sms-replies-v2", Seen: pipeline.SeenDeployed, Where: "sms-replies.conf:3: kafka.group.id=sms-replies-v2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Pipeline, c.in.Now, c.in.Contract = "sms-replies", at, contract
			v := pipeline.Judge(c.in)
			defer func() {
				if t.Failed() {
					t.Logf("%+v", v)
				}
			}()
			var symptoms []string
			for _, s := range v.Symptoms {
				symptoms = append(symptoms, s.ID)
			}
			if !slices.Equal(symptoms, c.symptoms) {
				t.Fatalf("symptoms %v, want %v", symptoms, c.symptoms)
			}
			var findings []pipeline.Finding
			first := c.first
			if first == "" {
				first = c.cause
			}
			i := slices.IndexFunc(v.Causes, func(x pipeline.Cause) bool { return x.ID == c.cause })
			switch {
			case c.cause == "":
				if !v.Healthy || len(v.Causes) > 0 {
					t.Fatalf("healthy %v, causes %+v: want healthy with a risk", v.Healthy, v.Causes)
				}
				findings = v.RiskFindings
			case len(v.Causes) == 0 || v.Causes[0].ID != first || i < 0 || v.Causes[i].Confidence != c.confidence:
				t.Fatalf("causes %+v, want %s first, %s (%s)", v.Causes, first, c.cause, c.confidence)
			default:
				findings = v.Causes[i].Findings
			}
			var observed []pipeline.Fact
			for _, f := range findings {
				if f.Contradiction == nil || f.Contradiction.Field != c.field {
					t.Fatalf("finding %+v, want a contradiction of %s", f, c.field)
				}
				if want := map[string]pipeline.Fact{pipeline.FieldTopics: contract.Topics, pipeline.FieldCluster: contract.Cluster,
					pipeline.FieldGroup: contract.Group, pipeline.FieldCheckpoint: contract.Checkpoint}[c.field]; f.Contradiction.Documented != want {
					t.Errorf("documented %+v, want %+v", f.Contradiction.Documented, want)
				}
				observed = append(observed, f.Contradiction.Observed)
			}
			if !slices.Equal(observed, c.observed) {
				t.Errorf("observed %+v\nwant %+v", observed, c.observed)
			}
		})
	}
}

// TestJudgeOffsets: the checkpoint's offsets against what the brokers hold, with counts;
// waiting counts leave out what the brokers deleted; Spark fails over them by default
// (a cause of the stop) and skips them with failOnDataLoss=false (a risk, the stop then has
// no cause).
func TestJudgeOffsets(t *testing.T) {
	stop := func() *spark.Report { return reading(stopped(), smsTopic, map[int32]int64{0: 10, 1: 10, 2: 10}) }
	cases := []struct {
		name    string
		report  *spark.Report
		brokers *kafka.LogRanges
		fail    string // the deployed failOnDataLoss; "" unset
		cause   string // first cause; "" none
		finding pipeline.OffsetsFinding
	}{
		{"offsets deleted before the query read them", stop(),
			holding(map[string]map[int32][2]int64{smsTopic: {0: {30, 40}, 1: {0, 40}, 2: {0, 40}}}), "",
			pipeline.CauseOffsetsGone, pipeline.OffsetsFinding{Code: pipeline.OffsetsDeleted, Partitions: []string{smsTopic + "/0"}, PartitionCount: 1, Records: 20}},
		{"the same with failOnDataLoss=false: Spark skips them; a risk", stop(),
			holding(map[string]map[int32][2]int64{smsTopic: {0: {30, 40}, 1: {0, 40}, 2: {0, 40}}}), "false",
			"", pipeline.OffsetsFinding{Code: pipeline.OffsetsDeleted, Partitions: []string{smsTopic + "/0"}, PartitionCount: 1, Records: 20}},
		{"offsets beyond the log end (the topic recreated)", stop(),
			holding(map[string]map[int32][2]int64{smsTopic: {0: {0, 4}, 1: {0, 4}, 2: {0, 40}}}), "",
			pipeline.CauseOffsetsGone, pipeline.OffsetsFinding{Code: pipeline.OffsetsAhead, Partitions: []string{smsTopic + "/0", smsTopic + "/1"}, PartitionCount: 2, Records: 12}},
		{"a partition that no longer exists", stop(),
			holding(map[string]map[int32][2]int64{smsTopic: {0: {0, 40}, 1: {0, 40}}}), "",
			pipeline.CauseOffsetsGone, pipeline.OffsetsFinding{Code: pipeline.PartitionsGone, Partitions: []string{smsTopic + "/2"}, PartitionCount: 1, Records: -1}},
		{"a partition the checkpoint does not know, whose log starts above 0", reading(stopped(), smsTopic, map[int32]int64{0: 10, 1: 10}, 2),
			holding(map[string]map[int32][2]int64{smsTopic: {0: {0, 10}, 1: {0, 10}, 2: {5, 40}}}), "",
			pipeline.CausePartitionsUnknown, pipeline.OffsetsFinding{Code: pipeline.PartitionsUnknown, Partitions: []string{smsTopic + "/2"}, PartitionCount: 1, Records: 35, StartAbove0: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := pipeline.Inputs{Pipeline: "sms-replies", Now: at, Contract: contract, Lag: healthyLag(), Checkpoint: c.report, Brokers: c.brokers, Probe: probeWith(true)}
			if c.fail != "" {
				in.Deployed = &deployconf.Deployed{File: "sms-replies.conf", FailOnDataLoss: c.fail,
					Sources: map[string]string{deployconf.FieldFailOnDataLoss: "sms-replies.conf:7"}}
			}
			v := pipeline.Judge(in)
			defer func() {
				if t.Failed() {
					t.Logf("%+v", v)
				}
			}()
			var findings []pipeline.Finding
			if c.cause == "" {
				if len(v.Causes) > 0 || v.Healthy || !slices.Equal(v.Unexplained, []string{pipeline.SymptomProgressStopped}) {
					t.Fatalf("causes %+v, unexplained %v: want the stop unexplained", v.Causes, v.Unexplained)
				}
				findings = v.RiskFindings
			} else {
				if len(v.Causes) != 1 || v.Causes[0].ID != c.cause || v.Causes[0].Confidence != pipeline.Confirmed {
					t.Fatalf("causes %+v, want %s confirmed and nothing else", v.Causes, c.cause)
				}
				findings = v.Causes[0].Findings
			}
			if len(findings) != 1 || findings[0].Offsets == nil {
				t.Fatalf("findings %+v", findings)
			}
			got := *findings[0].Offsets
			wantFail := pipeline.Fact{Value: "true", Seen: pipeline.SeenDefault}
			if c.fail != "" {
				wantFail = pipeline.Fact{Value: c.fail, Seen: pipeline.SeenDeployed, Where: "sms-replies.conf:7"}
			}
			want := c.finding
			want.File, want.Brokers, want.FailOnDataLoss = "offsets/3", "cluster main (127.0.0.1:9092)", wantFail
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("finding\n%+v\nwant\n%+v", got, want)
			}
			if got.Fails() != (c.cause != "") {
				t.Errorf("fails %v", got.Fails())
			}
		})
	}
}

// TestJudgeStopCountsOnlyWaitingTime: a checkpoint whose last commit is 40 minutes old is
// stopped only when its waiting records have waited stale_after; records that arrived a
// minute ago on a quiet topic are no stop yet.
func TestJudgeStopCountsOnlyWaitingTime(t *testing.T) {
	for _, c := range []struct {
		name    string
		oldest  time.Time
		stopped bool
		waited  time.Duration
	}{
		{"records arrived a minute ago", at.Add(-time.Minute), false, 0},
		{"records have waited 20 minutes", at.Add(-20 * time.Minute), true, 20 * time.Minute},
		{"their times unknown: counted from the commit", time.Time{}, true, 40 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Lag: healthyLag(), Checkpoint: stopped(), OldestWaiting: c.oldest, Probe: probeWith(true)})
			if got := len(v.Symptoms) > 0; got != c.stopped {
				t.Fatalf("symptoms %+v, want stopped %v", v.Symptoms, c.stopped)
			}
			if !c.stopped {
				if !v.Healthy || !strings.Contains(strings.Join(v.Notes, "\n"), "began to wait only 1m ago") {
					t.Errorf("healthy %v, notes %q", v.Healthy, v.Notes)
				}
				return
			}
			st := v.Symptoms[0].Stopped
			if st == nil || st.Waited != c.waited || st.FromRecords != !c.oldest.IsZero() || st.Waiting != 96 || st.Commit != "commits/3" {
				t.Errorf("stopped %+v", st)
			}
		})
	}
}

// TestJudgeRuledOut: a stop nothing explains lists every cause that could explain it with
// what was seen of it, or why it could not be looked at, and the one next step; it never
// reads like healthy.
func TestJudgeRuledOut(t *testing.T) {
	v := pipeline.Judge(pipeline.Inputs{Pipeline: "sms-replies", Now: at, Contract: contract, Lag: healthyLag(),
		Checkpoint: reading(stopped(), smsTopic, map[int32]int64{0: 10, 1: 10, 2: 10}),
		Brokers:    holding(map[string]map[int32][2]int64{smsTopic: {0: {0, 40}, 1: {0, 40}, 2: {0, 40}}}), Probe: probeWith(true)})
	if v.Healthy || len(v.Causes) > 0 || !slices.Equal(v.Unexplained, []string{pipeline.SymptomProgressStopped}) {
		t.Fatalf("verdict %+v", v)
	}
	var got []string
	for _, r := range v.RuledOut {
		got = append(got, fmt.Sprintf("%s %s %v", r.Cause, r.Seen, r.Checked))
	}
	want := []string{
		"CHECKPOINT_NOT_WRITABLE ACCESS_WRITABLE true", "CHECKPOINT_NOT_WRITABLE PROBE_OK true",
		"CONSUMER_GROUP_MISMATCH NO_OTHER_GROUP true", "CONSUMER_GROUP_MISMATCH NO_DEPLOYED_CONFIG false",
		"TOPIC_MISMATCH CHECKPOINT_READS true", "TOPIC_MISMATCH TOPICS_EXIST true", "TOPIC_MISMATCH NO_DEPLOYED_CONFIG false",
		"CLUSTER_MISMATCH NO_DEPLOYED_CONFIG false",
		"CHECKPOINT_LOCATION_MISMATCH LOCATION_HOLDS true", "CHECKPOINT_LOCATION_MISMATCH NO_DEPLOYED_CONFIG false",
		"CHECKPOINT_CORRUPT FILES_PARSE true",
		"CHECKPOINT_OFFSETS_GONE OFFSETS_ON_BROKERS true", "PARTITIONS_NOT_IN_CHECKPOINT PARTITIONS_KNOWN true",
		"BROKER_UNREACHABLE BROKERS_ANSWER true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ruled out\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if v.Next != pipeline.NextReadDriverLog {
		t.Errorf("next %q", v.Next)
	}
	// With logs configured (they say nothing), the next step reads them through streamwatch.
	in := pipeline.Inputs{Pipeline: "sms-replies", Now: at, Lag: healthyLag(), Checkpoint: stopped(), Probe: probeWith(true), Logs: permissionLine(at.Add(-time.Hour))}
	in.Logs.Matches = nil
	if v := pipeline.Judge(in); v.Next != pipeline.NextReadLogs {
		t.Errorf("next with logs %q", v.Next)
	}
}
