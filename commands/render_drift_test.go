package commands_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/deployconf"
)

// loadDeployed parses a file of integrations/deployconf/testdata, named testdata/<name> as
// that package's tests name it.
func loadDeployed(t *testing.T, name string) deployconf.Deployed {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "integrations", "deployconf", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := deployconf.Parse(filepath.Join("testdata", name), b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// documented is pipelines[0] of docs/config-sketch.yaml, with the brokers the jobs use.
var documented = deployconf.Documented{
	Group:              "sms-replies-prod",
	Topics:             []string{"client.replies.sms"},
	Brokers:            []string{"kafka-0.kafka.data.svc:9092", "kafka-1.kafka.data.svc:9092"},
	CheckpointLocation: "file:///var/lib/spark/checkpoints/sms-replies",
}

func TestDeployedLines(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"sms-replies.conf", []string{
			"testdata/sms-replies.conf (properties)",
			"group: sms-replies-v2 (testdata/sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2)",
			"topics: client.replies.sms (testdata/sms-replies.conf:13: spark.kafka.subscribe=client.replies.sms)",
			"bootstrap: kafka-0.kafka.data.svc:9092, kafka-1.kafka.data.svc:9092, kafka-2.kafka.data.svc:9092 (testdata/sms-replies.conf:14: spark.kafka.bootstrap.servers=kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092,kafka-2.kafka.data.svc:9092)",
			"checkpointLocation: file:///var/lib/spark/checkpoints/sms-replies/ (testdata/sms-replies.conf:21: option.checkpointLocation=file:///var/lib/spark/checkpoints/sms-replies/)",
			"failOnDataLoss: false (testdata/sms-replies.conf:16: spark.kafka.failOnDataLoss=false)",
		}},
		{"spark-defaults.conf", []string{
			"testdata/spark-defaults.conf (spark-defaults)",
			"group: not set (Spark generates sms-replies-<uuid>-… groups)",
			"groupIdPrefix: sms-replies (testdata/spark-defaults.conf:12: spark.kafka.groupIdPrefix=sms-replies)",
			`subscribePattern: client\.replies\..* (testdata/spark-defaults.conf:13: spark.kafka.subscribePattern=client\.replies\..*)`,
			"bootstrap: kafka-0.kafka.data.svc:9092, kafka-1.kafka.data.svc:9092 (testdata/spark-defaults.conf:14: spark.kafka.bootstrap.servers=kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092)",
			"checkpoint root: s3a://acme-spark-checkpoints/ (testdata/spark-defaults.conf:15: spark.sql.streaming.checkpointLocation=s3a://acme-spark-checkpoints/)",
		}},
		{"options-multi.yaml", []string{
			"testdata/options-multi.yaml (yaml)",
			"group: sms-replies-prod (testdata/options-multi.yaml:13: source.kafka.group.id=sms-replies-prod)",
			"topics: client.replies.sms (testdata/options-multi.yaml:14: source.subscribe=[client.replies.sms])",
			"bootstrap: kafka-0.kafka.data.svc:9092, kafka-1.kafka.data.svc:9092 (testdata/options-multi.yaml:7: defaults.kafka.bootstrap.servers=[kafka-0.kafka.data.svc:9092, kafka-1.kafka.data.svc:9092])",
			"checkpoint root: /var/lib/spark/checkpoints (testdata/options-multi.yaml:22: spark.sql.streaming.checkpointLocation=/var/lib/spark/checkpoints)",
			"warning: kafka.bootstrap.servers is set more than once with different values; testdata/options-multi.yaml:7: defaults.kafka.bootstrap.servers=[kafka-0.kafka.data.svc:9092, kafka-1.kafka.data.svc:9092] applies, not testdata/options-multi.yaml:17: sink.kafka.bootstrap.servers=kafka-analytics.data.svc:9092.",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			if got := commands.DeployedLines(loadDeployed(t, tt.file)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

func TestLinesEdgeCases(t *testing.T) {
	if got := commands.DeployedLines(deployconf.Deployed{}); !reflect.DeepEqual(got, []string{
		"deployed options",
		"group: not set (Spark generates spark-kafka-source-<uuid>-… groups)",
		"topics: not set",
		"bootstrap: not set",
		"checkpointLocation: not set",
	}) {
		t.Errorf("zero Deployed: %q", got)
	}

	// A value that would break the line or hide in whitespace is quoted.
	d, err := deployconf.Parse("j.properties", []byte("kafka.group.id=a\\nb\nsubscribe=\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"j.properties (properties)",
		`group: "a\nb" (j.properties:1: kafka.group.id=a�b)`,
		`topics: "" (j.properties:2: subscribe=)`,
		"bootstrap: not set",
		"checkpointLocation: not set",
	}
	if got := commands.DeployedLines(d); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	diffs := commands.DriftLines(deployconf.Compare(deployconf.Documented{Group: "g "}, d))
	if want := []string{`group mismatch: documented "g ", deployed "a\nb" (j.properties:1: kafka.group.id=a�b). The job consumes as a` + "\ufffd" + `b; streamwatch watches g , so the lag it reports is not the job's.`}; !reflect.DeepEqual(diffs, want) {
		t.Errorf("got %q\nwant %q", diffs, want)
	}
	if got := commands.DriftLines(nil); got != nil {
		t.Errorf("Lines(nil) = %q", got)
	}
}

// TestDriftLinesTestdata: the differences of the testdata files, each with its reason.
func TestDriftLinesTestdata(t *testing.T) {
	tests := []struct {
		file string
		want []string // Lines of the differences
	}{
		{"job.properties", []string{
			"topics mismatch: documented client.replies.sms, deployed client.replies.mms, client.replies.sms (testdata/job.properties:8: option.subscribe=client.replies.sms, client.replies.mms). Read by the job but not documented: client.replies.mms.",
			"checkpointLocation mismatch: documented file:///var/lib/spark/checkpoints/sms-replies, deployed s3a://acme-spark-checkpoints/sms-replies/ (testdata/job.properties:17: checkpointLocation=s3a://acme-spark-checkpoints/sms-replies/). streamwatch reads and probes a checkpoint the job does not write.",
		}},
		{"spark-defaults.conf", []string{
			"checkpointLocation mismatch: documented file:///var/lib/spark/checkpoints/sms-replies, deployed s3a://acme-spark-checkpoints/ (testdata/spark-defaults.conf:15: spark.sql.streaming.checkpointLocation=s3a://acme-spark-checkpoints/). spark.sql.streaming.checkpointLocation is a root: Spark checkpoints the query in s3a://acme-spark-checkpoints/<queryName>, and the documented location is not directly under it.",
		}},
		{"sparkapplication.yaml", []string{
			"checkpointLocation mismatch: documented file:///var/lib/spark/checkpoints/sms-replies, deployed s3a://acme-spark-checkpoints/sms-replies/ (testdata/sparkapplication.yaml:30: --checkpointLocation=s3a://acme-spark-checkpoints/sms-replies/). streamwatch reads and probes a checkpoint the job does not write.",
		}},
		{"k8s-bundle.yaml", []string{
			"group mismatch: documented sms-replies-prod, deployed sms-replies-v2 (testdata/k8s-bundle.yaml:32: --conf spark.kafka.group.id=sms-replies-v2). The job consumes as sms-replies-v2; streamwatch watches sms-replies-prod, so the lag it reports is not the job's.",
			"checkpointLocation mismatch: documented file:///var/lib/spark/checkpoints/sms-replies, deployed s3a://acme-spark-checkpoints (testdata/k8s-bundle.yaml:30: spark.sql.streaming.checkpointLocation=s3a://acme-spark-checkpoints). spark.sql.streaming.checkpointLocation is a root: Spark checkpoints the query in s3a://acme-spark-checkpoints/<queryName>, and the documented location is not directly under it.",
		}},
		{"options-multi.yaml", nil}, // the root /var/lib/spark/checkpoints holds the documented query
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := commands.DriftLines(deployconf.Compare(documented, loadDeployed(t, tt.file)))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

// TestDriftReason: every reason a difference can have, worded in full.
func TestDriftReason(t *testing.T) {
	cases := []struct {
		d    deployconf.Difference
		want string
	}{
		{deployconf.Difference{Why: deployconf.WhyOtherGroup, Documented: "g", Deployed: "G"},
			"The job consumes as G; streamwatch watches g, so the lag it reports is not the job's."},
		{deployconf.Difference{Why: deployconf.WhyPrefix, Documented: "sms-replies-prod", Prefix: "sms-replies-v2"},
			"kafka.group.id is not set, so Spark generates the group, sms-replies-v2-<uuid>-<hash> for each query; sms-replies-prod does not start with the prefix and will never see the job's commits."},
		{deployconf.Difference{Why: deployconf.WhyGenerated, Documented: "sms-replies-prod", Prefix: deployconf.SparkDefaultGroupPrefix},
			"Neither kafka.group.id nor groupIdPrefix is set, so Spark generates spark-kafka-source-<uuid>-<hash> groups; the documented group sms-replies-prod will never see commits."},
		{deployconf.Difference{Why: deployconf.WhyTopics, NotRead: []string{"a"}, NotDocumented: []string{"c"}},
			"Documented but not read by the job: a; read by the job but not documented: c."},
		{deployconf.Difference{Why: deployconf.WhyTopics, NotRead: []string{"a", "b"}}, "Documented but not read by the job: a, b."},
		{deployconf.Difference{Why: deployconf.WhyTopics, NotDocumented: []string{"c"}}, "Read by the job but not documented: c."},
		{deployconf.Difference{Why: deployconf.WhyPatternUnreadable, Documented: "a", PatternErr: "error parsing regexp: invalid or unsupported Perl syntax: `(?!`"},
			"streamwatch cannot evaluate this pattern (error parsing regexp: invalid or unsupported Perl syntax: `(?!`); check by hand that it matches a."},
		{deployconf.Difference{Why: deployconf.WhyPatternUnmatched, Unmatched: []string{"client.replies.sms"}},
			"The pattern does not match the documented client.replies.sms, so the job does not read it."},
		{deployconf.Difference{Why: deployconf.WhyNoTopics},
			"The file names no topics; Spark refuses to start a Kafka query without one of them, unless the job sets it in code."},
		{deployconf.Difference{Why: deployconf.WhyOtherCluster},
			"No broker in common: the job may read another cluster than the one streamwatch watches."},
		{deployconf.Difference{Why: deployconf.WhyRoot, Deployed: "/c/"},
			"spark.sql.streaming.checkpointLocation is a root: Spark checkpoints the query in /c/<queryName>, and the documented location is not directly under it."},
		{deployconf.Difference{Why: deployconf.WhyOtherCheckpoint}, "streamwatch reads and probes a checkpoint the job does not write."},
		{deployconf.Difference{Severity: deployconf.SeverityMissing}, ""},
	}
	for _, c := range cases {
		if got := commands.DriftReason(c.d); got != c.want {
			t.Errorf("%s: got %q\n\twant %q", c.d.Why, got, c.want)
		}
	}
}

// TestDeployWarning: every warning a deployed file can draw, worded in full, from the files
// that draw them.
func TestDeployWarning(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"t.properties", "kafka.group.id=a\nspark.kafka.group.id=b\n",
			"kafka.group.id is set more than once with different values; t.properties:2: spark.kafka.group.id=b applies, not t.properties:1: kafka.group.id=a."},
		{"t.properties", "kafka.group.id=a\nkafka.group.id=b\nkafka.group.id=c\nkafka.group.id=d\nkafka.group.id=e\n",
			"kafka.group.id is set more than once with different values; t.properties:5: kafka.group.id=e applies, not t.properties:1: kafka.group.id=a, t.properties:2: kafka.group.id=b, t.properties:3: kafka.group.id=c, 1 more."},
		{"t.properties", "kafka.group.id=a\ngroupIdPrefix=p\n",
			"groupIdPrefix is ignored: Spark uses kafka.group.id when both are set."},
		{"t.properties", "subscribe=a\nsubscribePattern=a.*\n",
			"subscribe, subscribePattern are set together: Spark refuses to start a query with more than one of assign, subscribe and subscribePattern."},
		{"t.yaml", "kind: SparkApplication\nmetadata: {name: one}\nspec: {}\n---\nkind: SparkApplication\n",
			`2 SparkApplications in one file: read the first, "one" at line 1.`},
	}
	for _, c := range cases {
		d, err := deployconf.Parse(c.name, []byte(c.data))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Warnings) != 1 {
			t.Fatalf("%q: warnings %+v", c.data, d.Warnings)
		}
		if got := commands.DeployWarning(d.Warnings[0]); got != c.want {
			t.Errorf("%q: got %q\n\twant %q", c.data, got, c.want)
		}
	}
}

// FuzzDriftLines: whatever a deployed file holds, its rendering keeps to one line per entry.
func FuzzDriftLines(f *testing.F) {
	f.Add("j.properties", []byte("kafka.group.id=a\\nb\nsubscribe=\n"))
	f.Add("j.yaml", []byte("kind: SparkApplication\nspec:\n  arguments: [--conf, \"a=b\\r\", --subscribe]\n"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		d, err := deployconf.Parse(name, data)
		if err != nil {
			return
		}
		doc := deployconf.Documented{Group: "g", Topics: []string{"t"}, Brokers: []string{"b:9092"}, CheckpointLocation: "s3://b/c"}
		for _, line := range append(commands.DeployedLines(d), commands.DriftLines(deployconf.Compare(doc, d))...) {
			if strings.ContainsAny(line, "\n\r") {
				t.Fatalf("rendering breaks lines: %q", line)
			}
		}
	})
}
