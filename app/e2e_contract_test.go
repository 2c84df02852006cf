package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// Diagnosis worlds of issue 22: the pipeline's documented contract contradicted by the
// deployment, the checkpoint or the brokers, and the checkpoint's offsets against what the
// brokers hold. Each world is real parts: kfake holds the topics, a generated checkpoint the
// query's position, a deployed options file the job's, and streamwatch loads its configuration
// from a file, so that the reply can name the lines.

const unreadTopic = seedTopic + ".v2"

// contractWorld is one diagnosis world.
type contractWorld struct {
	// topics to create, partition counts, and records each partition holds (written 30
	// minutes ago, after the stopped query's last commit).
	topics map[string][2]int
	// deleted moves log starts up (topic → partition → first offset kept).
	deleted map[string]map[int32]int64
	// checkpoint: the topics the query reads (with the partitions it knows) and the offset it
	// read up to in each; stopped backdates its last commit by 43 minutes.
	checkpoint []sparktest.Topic
	upTo       int64
	stopped    bool
	// deployed are the lines of the job's options file after those that agree with the
	// documentation (a later line of a key wins); "-" sets no deployed_config.
	deployed string
	// otherGroup, when set, consumes the topic while the documented group's commits stay at
	// 10, as in the seed incident.
	otherGroup string
}

// diagnose builds the world and asks streamwatch for its verdict: the summary and the body.
func (w contractWorld) diagnose(t *testing.T) (summary, body, configFile string) {
	t.Helper()
	ctx := context.Background()
	kc, err := kafkatest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	written := time.Now().Add(-30 * time.Minute)
	for topic, n := range w.topics {
		if err := kc.CreateTopic(ctx, topic, int32(n[0])); err != nil {
			t.Fatal(err)
		}
		counts := make([]int, n[0])
		for p := range counts {
			counts[p] = n[1]
		}
		if err := kc.Produce(ctx, topic, counts, written); err != nil {
			t.Fatal(err)
		}
	}
	for topic, before := range w.deleted {
		if err := kc.DeleteBefore(ctx, topic, before); err != nil {
			t.Fatal(err)
		}
	}
	if w.otherGroup != "" {
		if err := kc.Commit(ctx, "sms-replies-prod", seedTopic, map[int32]int64{0: 10, 1: 10, 2: 10}); err != nil {
			t.Fatal(err)
		}
		stop, err := kc.Consume(w.otherGroup, seedTopic)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		wait.For(t, 20*time.Second, "the other group becoming Stable", func() bool {
			st, _ := kc.GroupState(ctx, w.otherGroup)
			return st == "Stable"
		})
	}
	base := t.TempDir()
	dir := filepath.Join(base, "cp")
	began := time.Now().Add(-3 * time.Minute)
	if w.stopped {
		began = time.Now().Add(-45 * time.Minute)
	}
	topics := make([]sparktest.Topic, len(w.checkpoint))
	for i, tp := range w.checkpoint {
		tp.RecordsPerBatch = w.upTo / 2 // batches 0 and 1
		topics[i] = tp
	}
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: began, LatestBatch: 1, LatestCommit: 1, Topics: topics}); err != nil {
		t.Fatal(err)
	}
	deployed := ""
	if w.deployed != "-" {
		path := filepath.Join(base, "sms-replies.conf")
		job := fmt.Sprintf("spark.app.name=sms-replies\nspark.kafka.subscribe=%s\nspark.kafka.group.id=sms-replies-prod\n"+
			"spark.kafka.bootstrap.servers=%s\noption.checkpointLocation=%s\n%s", seedTopic, kc.ListenAddrs()[0], dir, w.deployed)
		if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
			t.Fatal(err)
		}
		deployed = "    deployed_config: " + path + "\n"
	}
	configFile = filepath.Join(base, "streamwatch.yaml")
	in := start(t, setup{configFile: configFile, extra: fmt.Sprintf(`    kafka:
      cluster: main
      topics: [%s]
      group: sms-replies-prod
    checkpoint:
      location: %s
%skafka:
  clusters:
    main:
      brokers: [%q]
      version: "3.6.0"
      timeout: 3s
diagnose:
  timeout: 10s
`, seedTopic, dir, deployed, kc.ListenAddrs()[0])})
	r := ask(t, in.slack, "diagnose sms-replies")
	body = string(r.Blocks)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s\n%s", r.Text, unescape(body))
		}
	})
	return r.Text, unescape(body), configFile
}

// unescape undoes the JSON escaping of Block Kit text, for substrings with quotes.
func unescape(s string) string {
	return strings.NewReplacer(`\"`, `"`, `\n`, "\n", `\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(s)
}

// TestE2EDiagnoseContract: for each documented field, a world where the deployment or the
// checkpoint contradicts it while progress stops: the first cause names the field, the
// documented value with its file and line, and the observed value with where it was seen; the
// same contradiction while the pipeline progresses is a risk under "healthy".
func TestE2EDiagnoseContract(t *testing.T) {
	caughtUp := map[string][2]int{seedTopic: {3, 40}}
	// documented matches a documented value named with its key and the file and line of
	// streamwatch's configuration.
	documented := func(field, key string) *regexp.Regexp {
		return regexp.MustCompile(regexp.QuoteMeta(field) + ` documented "[^"]*" \(` + regexp.QuoteMeta(key) + `, /[^ ]+/streamwatch\.yaml:\d+\)`)
	}
	cases := []struct {
		name    string
		world   contractWorld
		first   string // the first cause; "" for healthy with a risk
		field   string
		want    []string // in the body
		pattern *regexp.Regexp
	}{
		{"topics: the job subscribes to another topic; its checkpoint reads it; the documented topic fills up unread",
			contractWorld{topics: map[string][2]int{seedTopic: {3, 40}, unreadTopic: {3, 10}},
				checkpoint: []sparktest.Topic{{Name: unreadTopic, Partitions: 3}}, upTo: 10, deployed: "spark.kafka.subscribe=" + unreadTopic + "\n"},
			"TOPIC_MISMATCH (confirmed)", "topics",
			[]string{"[RECORDS_UNREAD]", seedTopic + ": 120 records on the brokers; the checkpoint (offsets/1) has no offsets for it",
				`, deployed "` + unreadTopic + `" (`, `sms-replies.conf:6: spark.kafka.subscribe=` + unreadTopic + `)`,
				`, read "` + unreadTopic + `" (checkpoint offsets/1)`},
			documented("topics", "pipelines[sms-replies].kafka.topics")},
		{"topics while the pipeline progresses: the job also reads an undocumented topic",
			contractWorld{topics: map[string][2]int{seedTopic: {3, 40}, "client.replies.mms": {3, 40}},
				checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}, {Name: "client.replies.mms", Partitions: 3}}, upTo: 40,
				deployed: "spark.kafka.subscribe=client.replies.mms," + seedTopic + "\n"},
			"", "topics", []string{"- topics (no live symptom of it): deployed config: topics documented", `, read "client.replies.mms, client.replies.sms" (checkpoint offsets/1)`,
				`, deployed "client.replies.mms, client.replies.sms" (`}, documented("topics", "pipelines[sms-replies].kafka.topics")},
		{"group: the job consumes as another group; the documented one idles",
			contractWorld{topics: caughtUp, checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}}, upTo: 40,
				deployed: "spark.kafka.group.id=sms-replies-v2\n", otherGroup: "sms-replies-v2"},
			"CONSUMER_GROUP_MISMATCH (confirmed)", "group",
			[]string{"[DOCUMENTED_GROUP_IDLE]", `, deployed "sms-replies-v2" (`, `sms-replies.conf:6: spark.kafka.group.id=sms-replies-v2)`},
			documented("group", "pipelines[sms-replies].kafka.group")},
		{"group while the pipeline progresses",
			contractWorld{topics: caughtUp, checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}}, upTo: 40, deployed: "spark.kafka.group.id=sms-replies-v2\n"},
			"", "group", []string{"- consumer group (no live symptom of it): deployed config: group documented", `, deployed "sms-replies-v2" (`},
			documented("group", "pipelines[sms-replies].kafka.group")},
		{"cluster: the job reads another cluster while the documented checkpoint stops",
			contractWorld{topics: caughtUp, checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}}, upTo: 10, stopped: true,
				deployed: "spark.kafka.bootstrap.servers=kafka-b.data.svc:9092\n"},
			"CLUSTER_MISMATCH (likely)", "bootstrap servers",
			[]string{"[PROGRESS_STOPPED]", "90 records have waited 30m", `, deployed "kafka-b.data.svc:9092" (`, `sms-replies.conf:6: spark.kafka.bootstrap.servers=kafka-b.data.svc:9092)`},
			documented("bootstrap servers", "kafka.clusters (pipelines[sms-replies].kafka.cluster)")},
		{"cluster while the pipeline progresses",
			contractWorld{topics: caughtUp, checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}}, upTo: 40, deployed: "spark.kafka.bootstrap.servers=kafka-b.data.svc:9092\n"},
			"", "bootstrap servers", []string{"- Kafka cluster (no live symptom of it): deployed config: bootstrap servers documented"}, nil},
		{"checkpoint location: the job checkpoints elsewhere while the documented one stops",
			contractWorld{topics: caughtUp, checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}}, upTo: 10, stopped: true,
				deployed: "option.checkpointLocation=/var/lib/spark/checkpoints/sms-replies-v2\n"},
			"CHECKPOINT_LOCATION_MISMATCH (likely)", "checkpoint location",
			[]string{"[PROGRESS_STOPPED]", `, deployed "/var/lib/spark/checkpoints/sms-replies-v2" (`, `sms-replies.conf:6: option.checkpointLocation=/var/lib/spark/checkpoints/sms-replies-v2)`},
			documented("checkpoint location", "pipelines[sms-replies].checkpoint.location")},
		{"checkpoint location while the pipeline progresses",
			contractWorld{topics: caughtUp, checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}}, upTo: 40, deployed: "option.checkpointLocation=/var/lib/spark/checkpoints/sms-replies-v2\n"},
			"", "checkpoint location", []string{"- checkpoint location (no live symptom of it): deployed config: checkpoint location documented"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			summary, body, _ := c.world.diagnose(t)
			switch {
			case c.first == "":
				if !regexp.MustCompile(`^sms-replies: healthy, \d risks?$`).MatchString(summary) || !strings.Contains(body, "Risks (no present symptom comes from them):") {
					t.Fatalf("summary %q: want healthy with the risk", summary)
				}
			case summary != "sms-replies: probable cause "+c.first:
				t.Fatalf("summary %q: want %s first and alone", summary, c.first)
			default:
				causes := body[strings.Index(body, "Probable causes:"):]
				if !strings.Contains(causes, " "+c.field+" documented ") {
					t.Errorf("the cause does not name %s with both values:\n%s", c.field, causes)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("the verdict lacks %q", w)
				}
			}
			if c.pattern != nil && !c.pattern.MatchString(body) {
				t.Errorf("the verdict does not name the documented value with its file and line (%s)", c.pattern)
			}
		})
	}
}

// TestE2EDiagnoseOffsets: the checkpoint's offsets against what the brokers hold, a world per
// finding. Each reply counts the records and partitions, says what Spark does on restart, and
// counts as waiting only the records that still exist; no other cause is named first.
func TestE2EDiagnoseOffsets(t *testing.T) {
	sms := map[string][2]int{seedTopic: {3, 40}}
	cases := []struct {
		name    string
		world   contractWorld
		summary string // the summary, or its start when it ends in "("
		want    []string
	}{
		{"offsets deleted before the query read them: Spark fails on restart (failOnDataLoss by default)",
			contractWorld{topics: sms, deleted: map[string]map[int32]int64{seedTopic: {0: 30}},
				checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}}, upTo: 10, stopped: true, deployed: "-"},
			"sms-replies: probable cause OFFSETS_GONE (confirmed)",
			[]string{"70 records have waited 30m on the brokers with no checkpoint commit",
				"— confirmed (brokers, the symptom)",
				"20 records on 1 partition of offsets/1 are no longer on the brokers: retention deleted them before the query read them; on restart Spark fails on them (failOnDataLoss is true, Spark's default)",
				"client.replies.sms/0: checkpoint offset 10, log start 30: 20 records deleted unread"}},
		{"the same with failOnDataLoss=false: Spark skips them, so they explain no stop",
			contractWorld{topics: sms, deleted: map[string]map[int32]int64{seedTopic: {0: 30}},
				checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 3}}, upTo: 10, stopped: true, deployed: "spark.kafka.failOnDataLoss=false\n"},
			"sms-replies: progress stopped; no probable cause found (",
			[]string{"70 records have waited 30m", "No probable cause found for progress stopped.",
				"- records deleted unread (the query skips them: failOnDataLoss=false): 20 records on 1 partition of offsets/1 are no longer on the brokers",
				"on restart Spark skips them (failOnDataLoss=false, ", "sms-replies.conf:6)",
				"- OFFSETS_GONE ruled out: only a risk: no present symptom needs it (see risks)"}},
		{"a partition the checkpoint does not know, whose log starts above 0",
			contractWorld{topics: sms, deleted: map[string]map[int32]int64{seedTopic: {2: 5}},
				checkpoint: []sparktest.Topic{{Name: seedTopic, Partitions: 2}}, upTo: 10, stopped: true, deployed: "-"},
			"sms-replies: probable cause PARTITIONS_UNKNOWN (confirmed)",
			[]string{"60 records have waited 30m on the brokers with no checkpoint commit",
				"35 records on 1 partition(s) of the topics it reads that offsets/1 does not know",
				"explains: records wait on documented topics the query does not read; progress stopped",
				"1 partition of them starts above offset 0: their first records are gone; on restart Spark fails on them ('Added partition … starts from … instead of 0'; failOnDataLoss is true, Spark's default)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			summary, body, _ := c.world.diagnose(t)
			if strings.HasSuffix(c.summary, "(") && !strings.HasPrefix(summary, c.summary) || !strings.HasSuffix(c.summary, "(") && summary != c.summary {
				t.Fatalf("summary %q, want %q", summary, c.summary)
			}
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("the verdict lacks %q", w)
				}
			}
		})
	}
}
