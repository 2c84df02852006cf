package deployconf_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
			if got := load(t, tt.file).Lines(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

func TestLinesEdgeCases(t *testing.T) {
	if got := (deployconf.Deployed{}).Lines(); !reflect.DeepEqual(got, []string{
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
	if got := d.Lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	diffs := deployconf.Lines(deployconf.Compare(deployconf.Documented{Group: "g "}, d))
	if want := []string{`group mismatch: documented "g ", deployed "a\nb" (j.properties:1: kafka.group.id=a�b). The job consumes as a` + "\ufffd" + `b; streamwatch watches g , so the lag it reports is not the job's.`}; !reflect.DeepEqual(diffs, want) {
		t.Errorf("got %q\nwant %q", diffs, want)
	}
	if got := deployconf.Lines(nil); got != nil {
		t.Errorf("Lines(nil) = %q", got)
	}
}
