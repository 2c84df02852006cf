package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/pipeline"
)

// world is a pipeline's real surroundings for a diagnosis: an in-process Kafka (kfake, the
// real wire protocol, read through sarama), a Spark checkpoint written as Spark writes it,
// and the deployed job's options file.
type world struct {
	t        *testing.T
	kc       *kafkatest.Cluster
	clusters *kafka.Clusters
	dir      string // the documented checkpoint location
	deployed string // the deployed options file
}

const documentedTopic = "client.replies.sms"

func newWorld(t *testing.T) *world {
	t.Helper()
	kc, cs, _ := startKafka(t, documentedTopic, 3)
	base := t.TempDir()
	return &world{t: t, kc: kc, clusters: cs, dir: filepath.Join(base, "cp"), deployed: filepath.Join(base, "sms-replies.conf")}
}

// query writes the checkpoint of a query reading topic (3 partitions, 10 records a batch)
// whose newest batch, 3, committed at committed; it read up to offset 40 of every partition.
func (w *world) query(topic string, committed time.Time) {
	w.t.Helper()
	spec := sparktest.Spec{Start: committed.Add(-4 * time.Minute), Interval: time.Minute, CommitDelay: time.Second,
		LatestBatch: 3, LatestCommit: 3, Topics: []sparktest.Topic{{Name: topic, Partitions: 3, RecordsPerBatch: 10}},
		ModTimes: map[string]time.Time{"commits/3": committed}}
	if err := sparktest.WriteCheckpoint(w.dir, spec); err != nil {
		w.t.Fatal(err)
	}
}

// produce writes n records to every partition of topic (creating it first when asked), stamped at.
func (w *world) produce(topic string, n int, at time.Time) {
	w.t.Helper()
	if err := w.kc.Produce(context.Background(), topic, []int{n, n, n}, at); err != nil {
		w.t.Fatal(err)
	}
}

// deploy writes the deployed options: the documented ones, with overrides.
func (w *world) deploy(over map[string]string) {
	w.t.Helper()
	opts := []struct{ k, v string }{
		{"spark.kafka.group.id", "sms-replies-prod"},
		{"spark.kafka.subscribe", documentedTopic},
		{"spark.kafka.bootstrap.servers", w.kc.ListenAddrs()[0]},
		{"spark.kafka.failOnDataLoss", "true"},
		{"option.checkpointLocation", w.dir},
	}
	var b strings.Builder
	b.WriteString("# the deployed sms-replies job\n")
	for _, o := range opts {
		v := o.v
		if x, ok := over[o.k]; ok {
			v = x
		}
		fmt.Fprintf(&b, "%s=%s\n", o.k, v)
	}
	if err := os.WriteFile(w.deployed, []byte(b.String()), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// diagnose runs every check of the pipeline against the world and judges them.
func (w *world) diagnose() pipeline.Verdict {
	w.t.Helper()
	cfg := parseConfig(w.t, fmt.Sprintf(`    kafka: {cluster: main, topics: [%s], group: sms-replies-prod}
    checkpoint: {location: %q, stale_after: 10m}
    deployed_config: %q
`, documentedTopic, w.dir, w.deployed), fmt.Sprintf("kafka:\n  clusters:\n    main: {brokers: [%q], version: \"3.6.0\", timeout: 5s}\n", w.kc.ListenAddrs()[0]))
	p, _ := cfg.Pipeline("sms-replies")
	pipes := []kafka.Pipeline{{Name: p.Name, Cluster: "main", Topics: p.Kafka.Topics, Group: p.Kafka.Group, StallAfter: 5 * time.Minute, AllowedLag: 1}}
	mon, err := kafka.NewMonitor(w.clusters, kafka.NewMemoryStore(10), pipes, kafka.MonitorOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	d := &pipeline.Diagnoser{Config: cfg, Lag: mon, Checkpoints: &pipeline.Checkpoints{Config: cfg, Kafka: w.clusters}}
	v, err := d.Diagnose(context.Background(), "sms-replies")
	d.Wait()
	if err != nil {
		w.t.Fatal(err)
	}
	return v
}

func evidenceOf(v pipeline.Verdict) []pipeline.Fact {
	var out []pipeline.Fact
	for _, c := range v.Causes {
		out = append(out, c.Evidence...)
	}
	return append(out, v.Risks...)
}

// deployed is the pattern of a contradiction of field by the deployed config, as a risk of
// cause when it is not "".
func deployed(field, documented, observed, risk string) pipeline.Fact {
	f := contra(pipeline.Contradiction{Kind: pipeline.ContraDeployed, Source: pipeline.SourceConfig, Field: field, Documented: documented, Observed: observed})
	f.Risk = risk
	return f
}

// TestDiagnoseWorlds: for each documented fact of the pipeline, a world where the deployment
// contradicts it while progress stops (the first cause names the field, both values and where
// each was seen) and the same contradiction while the pipeline progresses (a risk under
// "healthy"); and a world per finding of the checkpoint against the brokers, with its counts.
func TestDiagnoseWorlds(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name  string
		build func(w *world)
		first string          // the first cause; "" for healthy
		want  []pipeline.Fact // patterns of the causes' evidence (or the risks, when healthy)
	}{
		{"topics: the job subscribes to another topic; its checkpoint names it; the documented topic fills up unread",
			func(w *world) {
				if err := w.kc.CreateTopic(context.Background(), documentedTopic+".v2", 3); err != nil {
					t.Fatal(err)
				}
				w.produce(documentedTopic+".v2", 40, now.Add(-time.Hour))
				w.query(documentedTopic+".v2", now.Add(-5*time.Second))
				w.produce(documentedTopic, 30, now.Add(-20*time.Minute))
				w.deploy(map[string]string{"spark.kafka.subscribe": documentedTopic + ".v2"})
			}, pipeline.CauseTopicMismatch,
			[]pipeline.Fact{contra(pipeline.Contradiction{Kind: pipeline.ContraCheckpointTopics, Source: pipeline.SourceCheckpoint, Field: pipeline.FieldTopics,
				Documented: "client.replies.sms", DocumentedAt: "pipelines[sms-replies].kafka.topics", Observed: "client.replies.sms.v2", ObservedAt: "offsets/3"}),
				deployed(pipeline.FieldTopics, "client.replies.sms", "client.replies.sms.v2", "")}},
		{"topics: the deployed file names another topic, the query reads and commits the documented one",
			func(w *world) {
				w.produce(documentedTopic, 40, now.Add(-time.Hour))
				w.query(documentedTopic, now.Add(-5*time.Second))
				w.deploy(map[string]string{"spark.kafka.subscribe": documentedTopic + ".v2"})
			}, "", []pipeline.Fact{deployed(pipeline.FieldTopics, "client.replies.sms", "", pipeline.CauseTopicMismatch)}},
		{"bootstrap servers: the job reads another cluster while records wait on the documented one",
			func(w *world) {
				w.produce(documentedTopic, 40, now.Add(-time.Hour))
				w.query(documentedTopic, now.Add(-time.Hour))
				w.produce(documentedTopic, 5, now.Add(-30*time.Minute))
				w.deploy(map[string]string{"spark.kafka.bootstrap.servers": "kafka-dr-0.example:9092"})
			}, pipeline.CauseClusterMismatch,
			[]pipeline.Fact{deployed(pipeline.FieldBrokers, "", "kafka-dr-0.example:9092", "")}},
		{"bootstrap servers: another cluster in the file, the query progresses",
			func(w *world) {
				w.produce(documentedTopic, 40, now.Add(-time.Hour))
				w.query(documentedTopic, now.Add(-5*time.Second))
				w.deploy(map[string]string{"spark.kafka.bootstrap.servers": "kafka-dr-0.example:9092"})
			}, "", []pipeline.Fact{deployed(pipeline.FieldBrokers, "", "", pipeline.CauseClusterMismatch)}},
		{"checkpoint location: the job writes elsewhere; the documented checkpoint is stale while records wait",
			func(w *world) {
				w.produce(documentedTopic, 40, now.Add(-time.Hour))
				w.query(documentedTopic, now.Add(-time.Hour))
				w.produce(documentedTopic, 5, now.Add(-30*time.Minute))
				w.deploy(map[string]string{"option.checkpointLocation": "/var/lib/spark/checkpoints/sms-replies-v2"})
			}, pipeline.CauseCheckpointMismatch,
			[]pipeline.Fact{deployed(pipeline.FieldCheckpoint, "", "/var/lib/spark/checkpoints/sms-replies-v2", "")}},
		{"checkpoint location: another in the file, the documented checkpoint commits",
			func(w *world) {
				w.produce(documentedTopic, 40, now.Add(-time.Hour))
				w.query(documentedTopic, now.Add(-5*time.Second))
				w.deploy(map[string]string{"option.checkpointLocation": "/var/lib/spark/checkpoints/sms-replies-v2"})
			}, "", []pipeline.Fact{deployed(pipeline.FieldCheckpoint, "", "", pipeline.CauseCheckpointMismatch)}},
		{"group: the job consumes as another group, the documented one is idle",
			func(w *world) {
				ctx := context.Background()
				w.produce(documentedTopic, 40, now.Add(-time.Hour))
				w.query(documentedTopic, now.Add(-5*time.Second))
				if err := w.kc.Commit(ctx, "sms-replies-prod", documentedTopic, map[int32]int64{0: 10, 1: 10, 2: 10}); err != nil {
					t.Fatal(err)
				}
				stop, err := w.kc.Consume("sms-replies-v2", documentedTopic)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(stop)
				wait.For(t, 20*time.Second, "the job's group becoming Stable", func() bool {
					st, _ := w.kc.GroupState(ctx, "sms-replies-v2")
					return st == "Stable"
				})
				w.deploy(map[string]string{"spark.kafka.group.id": "sms-replies-v2"})
			}, pipeline.CauseGroupMismatch,
			[]pipeline.Fact{deployed(pipeline.FieldGroup, "sms-replies-prod", "sms-replies-v2", "")}},
		{"offsets no longer on the brokers: retention deleted 60 records the stopped query never read",
			func(w *world) {
				w.produce(documentedTopic, 60, now.Add(-2*time.Hour))
				w.query(documentedTopic, now.Add(-time.Hour))
				if err := w.kc.DeleteBefore(context.Background(), documentedTopic, map[int32]int64{0: 60, 1: 60, 2: 60}); err != nil {
					t.Fatal(err)
				}
				w.produce(documentedTopic, 5, now.Add(-30*time.Minute))
				w.deploy(nil)
			}, pipeline.CauseOffsetsGone,
			[]pipeline.Fact{{Kind: pipeline.FactOffsetsGone, N: 60, M: 3, File: "offsets/3", Restart: pipeline.RestartFail, Value: "true"}}},
		{"a partition the checkpoint does not know holds 7 records",
			func(w *world) {
				w.produce(documentedTopic, 40, now.Add(-time.Hour))
				w.query(documentedTopic, now.Add(-5*time.Second))
				if err := w.kc.AddPartitions(context.Background(), documentedTopic, 1); err != nil {
					t.Fatal(err)
				}
				if err := w.kc.Produce(context.Background(), documentedTopic, []int{0, 0, 0, 7}, now); err != nil {
					t.Fatal(err)
				}
				w.deploy(nil)
			}, pipeline.CausePartitionsUnknown,
			[]pipeline.Fact{{Kind: pipeline.FactNewPartitions, N: 7, M: 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			c.build(w)
			v := w.diagnose()
			ev := evidenceOf(v)
			defer func() {
				if t.Failed() {
					t.Logf("verdict: healthy %v symptoms %+v\ncauses %+v\nrisks %+v\nnotes %+v", v.Healthy, v.Symptoms, v.Causes, v.Risks, v.Notes)
				}
			}()
			switch {
			case c.first == "" && (!v.Healthy || len(v.Causes) != 0):
				t.Fatalf("want healthy with a risk")
			case c.first != "" && (len(v.Causes) == 0 || v.Causes[0].ID != c.first):
				t.Fatalf("want %s first", c.first)
			}
			for _, want := range c.want {
				if !hasFact(ev, want) {
					t.Errorf("lacks %+v in:\n%+v", want, ev)
				}
			}
		})
	}
}
