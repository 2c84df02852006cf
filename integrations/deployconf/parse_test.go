package deployconf_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
)

func load(t *testing.T, name string) deployconf.Deployed {
	t.Helper()
	d, err := deployconf.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// equalDeployed reports each field that differs, so a failure says what was misread.
func equalDeployed(t *testing.T, got, want deployconf.Deployed) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if gf, wf := g.Field(i).Interface(), w.Field(i).Interface(); !reflect.DeepEqual(gf, wf) {
			t.Errorf("%s = %#v\n\twant %#v", g.Type().Field(i).Name, gf, wf)
		}
	}
}

func TestParseTestdata(t *testing.T) {
	tests := []struct {
		file string
		want deployconf.Deployed
	}{
		{
			file: "sms-replies.conf", // the seed incident: the v2 rollout renamed the group
			want: deployconf.Deployed{
				Format:             deployconf.FormatProperties,
				GroupID:            "sms-replies-v2",
				Topics:             []string{"client.replies.sms"},
				Bootstrap:          []string{"kafka-0.kafka.data.svc:9092", "kafka-1.kafka.data.svc:9092", "kafka-2.kafka.data.svc:9092"},
				CheckpointLocation: "file:///var/lib/spark/checkpoints/sms-replies/",
				FailOnDataLoss:     "false",
				Sources: map[string]string{
					"group":              "testdata/sms-replies.conf:12",
					"topics":             "testdata/sms-replies.conf:13",
					"bootstrap":          "testdata/sms-replies.conf:14",
					"failOnDataLoss":     "testdata/sms-replies.conf:16",
					"checkpointLocation": "testdata/sms-replies.conf:21",
				},
				Settings: map[string]string{
					"group":              "spark.kafka.group.id=sms-replies-v2",
					"topics":             "spark.kafka.subscribe=client.replies.sms",
					"bootstrap":          "spark.kafka.bootstrap.servers=kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092,kafka-2.kafka.data.svc:9092",
					"failOnDataLoss":     "spark.kafka.failOnDataLoss=false",
					"checkpointLocation": "option.checkpointLocation=file:///var/lib/spark/checkpoints/sms-replies/",
				},
			},
		},
		{
			file: "job.properties", // ":" and whitespace separators, continuations, "!" comments
			want: deployconf.Deployed{
				Format:             deployconf.FormatProperties,
				GroupID:            "sms-replies-prod",
				Topics:             []string{"client.replies.sms", "client.replies.mms"},
				Bootstrap:          []string{"kafka-0.kafka.data.svc:9092", "kafka-1.kafka.data.svc:9092", "kafka-2.kafka.data.svc:9092"},
				CheckpointLocation: "s3a://acme-spark-checkpoints/sms-replies/",
				Sources: map[string]string{
					"group":              "testdata/job.properties:7",
					"topics":             "testdata/job.properties:8",
					"bootstrap":          "testdata/job.properties:10",
					"checkpointLocation": "testdata/job.properties:17",
				},
				Settings: map[string]string{
					"group":              "option.kafka.group.id=sms-replies-prod",
					"topics":             "option.subscribe=client.replies.sms, client.replies.mms",
					"bootstrap":          "option.kafka.bootstrap.servers=kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092 ,kafka-2.kafka.data.svc:9092",
					"checkpointLocation": "checkpointLocation=s3a://acme-spark-checkpoints/sms-replies/",
				},
			},
		},
		{
			file: "spark-defaults.conf", // groupIdPrefix, a pattern, the checkpoint root
			want: deployconf.Deployed{
				Format:             deployconf.FormatSparkDefaults,
				GroupIDPrefix:      "sms-replies",
				Pattern:            `client\.replies\..*`,
				Bootstrap:          []string{"kafka-0.kafka.data.svc:9092", "kafka-1.kafka.data.svc:9092"},
				CheckpointLocation: "s3a://acme-spark-checkpoints/",
				CheckpointIsRoot:   true,
				Sources: map[string]string{
					"groupIdPrefix":      "testdata/spark-defaults.conf:12",
					"pattern":            "testdata/spark-defaults.conf:13",
					"bootstrap":          "testdata/spark-defaults.conf:14",
					"checkpointLocation": "testdata/spark-defaults.conf:15",
				},
				Settings: map[string]string{
					"groupIdPrefix":      "spark.kafka.groupIdPrefix=sms-replies",
					"pattern":            `spark.kafka.subscribePattern=client\.replies\..*`,
					"bootstrap":          "spark.kafka.bootstrap.servers=kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092",
					"checkpointLocation": "spark.sql.streaming.checkpointLocation=s3a://acme-spark-checkpoints/",
				},
			},
		},
		{
			file: "sparkapplication.yaml", // sparkConf and arguments
			want: deployconf.Deployed{
				Format:             deployconf.FormatYAML,
				GroupID:            "sms-replies-prod",
				Topics:             []string{"client.replies.sms"},
				Bootstrap:          []string{"kafka-0.kafka.data.svc:9092", "kafka-1.kafka.data.svc:9092"},
				CheckpointLocation: "s3a://acme-spark-checkpoints/sms-replies/",
				Sources: map[string]string{
					"group":              "testdata/sparkapplication.yaml:22",
					"topics":             "testdata/sparkapplication.yaml:28",
					"bootstrap":          "testdata/sparkapplication.yaml:21",
					"checkpointLocation": "testdata/sparkapplication.yaml:30",
				},
				Settings: map[string]string{
					"group":              "spark.kafka.group.id=sms-replies-prod",
					"topics":             "--subscribe client.replies.sms",
					"bootstrap":          "spark.kafka.bootstrap.servers=kafka-0.kafka.data.svc:9092,kafka-1.kafka.data.svc:9092",
					"checkpointLocation": "--checkpointLocation=s3a://acme-spark-checkpoints/sms-replies/",
				},
			},
		},
		{
			// The SparkApplication is the third document; the ConfigMap before it names
			// options too, and is not read.
			file: "k8s-bundle.yaml",
			want: deployconf.Deployed{
				Format:             deployconf.FormatYAML,
				GroupID:            "sms-replies-v2",
				Topics:             []string{"client.replies.sms"},
				Bootstrap:          []string{"kafka-0.kafka.data.svc:9092"},
				CheckpointLocation: "s3a://acme-spark-checkpoints",
				CheckpointIsRoot:   true,
				Sources: map[string]string{
					"group":              "testdata/k8s-bundle.yaml:32",
					"topics":             "testdata/k8s-bundle.yaml:35",
					"bootstrap":          "testdata/k8s-bundle.yaml:34",
					"checkpointLocation": "testdata/k8s-bundle.yaml:30",
				},
				Settings: map[string]string{
					"group":              "--conf spark.kafka.group.id=sms-replies-v2",
					"topics":             `--assign {"client.replies.sms":[0,1,2]}`,
					"bootstrap":          "--kafka.bootstrap.servers=kafka-0.kafka.data.svc:9092",
					"checkpointLocation": "spark.sql.streaming.checkpointLocation=s3a://acme-spark-checkpoints",
				},
			},
		},
		{
			// No SparkApplication: the first document names nothing, the second is a nested
			// map with a merge key, whose sink's brokers must not pass for the source's.
			file: "options-multi.yaml",
			want: deployconf.Deployed{
				Format:             deployconf.FormatYAML,
				GroupID:            "sms-replies-prod",
				Topics:             []string{"client.replies.sms"},
				Bootstrap:          []string{"kafka-0.kafka.data.svc:9092", "kafka-1.kafka.data.svc:9092"},
				CheckpointLocation: "/var/lib/spark/checkpoints",
				CheckpointIsRoot:   true,
				Sources: map[string]string{
					"group":              "testdata/options-multi.yaml:13",
					"topics":             "testdata/options-multi.yaml:14",
					"bootstrap":          "testdata/options-multi.yaml:7",
					"checkpointLocation": "testdata/options-multi.yaml:22",
				},
				Settings: map[string]string{
					"group":              "source.kafka.group.id=sms-replies-prod",
					"topics":             "source.subscribe=[client.replies.sms]",
					"bootstrap":          "defaults.kafka.bootstrap.servers=[kafka-0.kafka.data.svc:9092, kafka-1.kafka.data.svc:9092]",
					"checkpointLocation": "spark.sql.streaming.checkpointLocation=/var/lib/spark/checkpoints",
				},
				Warnings: []deployconf.Warning{{Code: deployconf.WarnConflict, Option: "kafka.bootstrap.servers",
					Applied: "testdata/options-multi.yaml:7: defaults.kafka.bootstrap.servers=[kafka-0.kafka.data.svc:9092, kafka-1.kafka.data.svc:9092]",
					Others:  []string{"testdata/options-multi.yaml:17: sink.kafka.bootstrap.servers=kafka-analytics.data.svc:9092"}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			tt.want.File = filepath.Join("testdata", tt.file)
			equalDeployed(t, load(t, tt.file), tt.want)
		})
	}
}

func TestParseNeverReadsSecrets(t *testing.T) {
	d := load(t, "sms-replies.conf")
	all := fmt.Sprintf("%+v %+v", d, deployconf.Compare(deployconf.Documented{Group: "x"}, d))
	if strings.Contains(all, "not-a-real-password") || strings.Contains(all, "jaas") {
		t.Errorf("the JAAS config leaked:\n%s", all)
	}
}

// parsed is the part of Deployed the syntax tests check.
type parsed struct {
	group, prefix, pattern, checkpoint string
	topics, bootstrap                  []string
	root                               bool
}

func parsedOf(d deployconf.Deployed) parsed {
	return parsed{group: d.GroupID, prefix: d.GroupIDPrefix, pattern: d.Pattern, checkpoint: d.CheckpointLocation,
		topics: d.Topics, bootstrap: d.Bootstrap, root: d.CheckpointIsRoot}
}

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name, data string
		want       parsed
		source     string // Sources["group"], when the test is about lines
	}{
		{name: "equals", data: "kafka.group.id=g\n", want: parsed{group: "g"}},
		{name: "colon", data: "kafka.group.id: g\n", want: parsed{group: "g"}},
		{name: "whitespace", data: "kafka.group.id \t g\n", want: parsed{group: "g"}},
		{name: "spaced equals", data: "  kafka.group.id  =  g  \n", want: parsed{group: "g"}},
		{name: "one separator only", data: "kafka.group.id==g\n", want: parsed{group: "=g"}},
		{name: "whitespace then colon", data: "kafka.group.id : :g\n", want: parsed{group: ":g"}},
		{name: "hash comment", data: "# kafka.group.id=old\nkafka.group.id=g\n", want: parsed{group: "g"}, source: "t.properties:2"},
		{name: "bang comment", data: "  ! kafka.group.id=old\nkafka.group.id=g\n", want: parsed{group: "g"}},
		{name: "comment ending in backslash does not continue", data: "# note \\\nkafka.group.id=g\n", want: parsed{group: "g"}, source: "t.properties:2"},
		{name: "continuation", data: "subscribe=a,\\\n    b,\\\n\tc\nkafka.group.id=g\n", want: parsed{group: "g", topics: []string{"a", "b", "c"}}, source: "t.properties:4"},
		{name: "continued line starting with hash", data: "kafka.group.id=sms-\\\n  #replies\n", want: parsed{group: "sms-#replies"}},
		{name: "even backslashes do not continue", data: "kafka.group.id=g\\\\\nsubscribe=t\n", want: parsed{group: `g\`, topics: []string{"t"}}},
		{name: "backslash at end of file", data: "kafka.group.id=g\\", want: parsed{group: "g"}},
		{name: "unicode escape", data: "kafka.group.id=sms\\u002dreplies\\u002Dprod\n", want: parsed{group: "sms-replies-prod"}},
		{name: "non-ASCII escape", data: "kafka.group.id=r\\u00e9ponses\n", want: parsed{group: "réponses"}},
		{name: "surrogate pair", data: "kafka.group.id=g\\uD83D\\uDE00\n", want: parsed{group: "g😀"}},
		{name: "escaped separators in key", data: "kafka.group.id\\=x=g\nkafka.group.id=h\n", want: parsed{group: "h"}},
		{name: "escaped key spelling", data: "kafka\\.group\\.id=g\n", want: parsed{group: "g"}},
		{name: "other escapes", data: "kafka.group.id=\\g\\ \\:\n", want: parsed{group: "g :"}},
		{name: "CRLF", data: "# x\r\nkafka.group.id=g\r\nsubscribe=t\r\n", want: parsed{group: "g", topics: []string{"t"}}, source: "t.properties:2"},
		{name: "CR", data: "# x\rkafka.group.id=g\r", want: parsed{group: "g"}, source: "t.properties:2"},
		{name: "later wins", data: "kafka.group.id=a\nkafka.group.id=b\n", want: parsed{group: "b"}, source: "t.properties:2"},
		{name: "key without value", data: "kafka.group.id\n", want: parsed{}},
		{name: "case-insensitive", data: "SPARK.KAFKA.GROUPIDPREFIX=p\nOption.SubscribePattern=a.*\n", want: parsed{prefix: "p", pattern: "a.*"}},
		{name: "subscribe list trimmed", data: "subscribe= a , ,b,\n", want: parsed{topics: []string{"a", "b"}}},
		{name: "assign", data: `assign={"t2":[0,1],"t1":[2]}` + "\n", want: parsed{topics: []string{"t1", "t2"}}},
		{name: "subscribe wins over assign", data: "assign={\"t1\":[0]}\nsubscribe=t2\n", want: parsed{topics: []string{"t2"}}},
		{name: "checkpoint option wins over root", data: "checkpointLocation=/a/q\nspark.sql.streaming.checkpointLocation=/a\n", want: parsed{checkpoint: "/a/q"}},
		{name: "root alone", data: "spark.sql.streaming.checkpointLocation=/a\n", want: parsed{checkpoint: "/a", root: true}},
		{name: "direct spelling wins over suffix", data: "kafka.group.id=g\napp.kafka.group.id=x\n", want: parsed{group: "g"}},
		{name: "suffix alone", data: "app.source.subscribe=t\n", want: parsed{topics: []string{"t"}}},
		{name: "unrelated keys", data: "kafka.group.idx=a\ngroup.id=b\nsubscriber=c\nspark.kafka.consumer.cache.enabled=d\n", want: parsed{}},
		{name: "invalid UTF-8 replaced", data: "kafka.group.id=g\xff\n", want: parsed{group: "g\uFFFD"}},
		{name: "empty", data: "", want: parsed{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := deployconf.Parse("t.properties", []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if got := parsedOf(d); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\n\twant %+v", got, tt.want)
			}
			if tt.source != "" && d.Sources["group"] != tt.source {
				t.Errorf("Sources[group] = %q, want %q", d.Sources["group"], tt.source)
			}
		})
	}
}

func TestParseAcceptsEverySpelling(t *testing.T) {
	options := []struct {
		option string
		check  func(deployconf.Deployed) bool
	}{
		{"kafka.group.id", func(d deployconf.Deployed) bool { return d.GroupID == "v" }},
		{"groupIdPrefix", func(d deployconf.Deployed) bool { return d.GroupIDPrefix == "v" }},
		{"subscribe", func(d deployconf.Deployed) bool { return reflect.DeepEqual(d.Topics, []string{"v"}) }},
		{"subscribePattern", func(d deployconf.Deployed) bool { return d.Pattern == "v" }},
		{"kafka.bootstrap.servers", func(d deployconf.Deployed) bool { return reflect.DeepEqual(d.Bootstrap, []string{"v"}) }},
		{"checkpointLocation", func(d deployconf.Deployed) bool { return d.CheckpointLocation == "v" }},
	}
	for _, prefix := range []string{"", "spark.", "option.", "options.", "spark.kafka.", "spark.streaming.", "spark.sql.streaming."} {
		for _, o := range options {
			key := prefix + o.option
			for _, form := range []struct{ name, data string }{
				{"t.properties", key + "=v\n"},
				{"spark-defaults.conf", key + "   v\n"},
				{"t.yaml", "'" + key + "': v\n"},
				{"app.yaml", "kind: SparkApplication\nspec:\n  arguments: [--" + key + ", v]\n"},
			} {
				d, err := deployconf.Parse(form.name, []byte(form.data))
				if err != nil {
					t.Errorf("%s %s: %v", form.name, key, err)
					continue
				}
				if !o.check(d) {
					t.Errorf("%s: %q not read: %+v", form.name, key, parsedOf(d))
				}
				if root := key == "spark.sql.streaming.checkpointLocation"; d.CheckpointIsRoot != root {
					t.Errorf("%s: %q: CheckpointIsRoot = %v", form.name, key, d.CheckpointIsRoot)
				}
			}
		}
	}
}

func TestParseYAML(t *testing.T) {
	tests := []struct {
		name, data string
		want       parsed
		warnings   int
	}{
		{name: "flat", data: "kafka.group.id: g\nsubscribe: a, b\ncheckpointLocation: /c\n",
			want: parsed{group: "g", topics: []string{"a", "b"}, checkpoint: "/c"}},
		{name: "nested", data: "kafka:\n  group.id: g\n  bootstrap:\n    servers: [b1, b2]\noption:\n  subscribePattern: 'a\\..*'\n",
			want: parsed{group: "g", bootstrap: []string{"b1", "b2"}, pattern: `a\..*`}},
		{name: "under a job name", data: "sms-replies:\n  options:\n    kafka.group.id: g\n",
			want: parsed{group: "g"}},
		{name: "null group", data: "kafka.group.id: ~\n", want: parsed{}},
		{name: "numbers stay as written", data: "kafka.group.id: 0x1F\n", want: parsed{group: "0x1F"}},
		{name: "assign as a map", data: "assign: {t2: [0], t1: [1, 2]}\n", want: parsed{topics: []string{"t1", "t2"}}},
		{name: "assign as JSON", data: "assign: '{\"t1\": [0]}'\n", want: parsed{topics: []string{"t1"}}},
		{name: "JSON document", data: `{"kafka.group.id": "g", "subscribe": ["t"]}`, want: parsed{group: "g", topics: []string{"t"}}},
		{name: "arguments", data: `kind: SparkApplication
spec:
  arguments:
    - --kafka.group.id=g
    - "--subscribe t1,t2"
    - --verbose
    - --checkpointLocation
    - /c
    - positional
    - --conf=spark.kafka.groupIdPrefix=p
    - --conf
    - spark.kafka.bootstrap.servers=b:9092
`, want: parsed{group: "g", prefix: "p", topics: []string{"t1", "t2"}, checkpoint: "/c", bootstrap: []string{"b:9092"}}, warnings: 1},
		{name: "arguments override sparkConf", data: `kind: SparkApplication
spec:
  sparkConf: {spark.kafka.group.id: a}
  hadoopConf: {spark.kafka.group.id: b}
  arguments: [--kafka.group.id, c]
`, want: parsed{group: "c"}, warnings: 1},
		{name: "scheduled", data: "kind: ScheduledSparkApplication\nspec:\n  schedule: '@every 1h'\n  template:\n    sparkConf:\n      spark.kafka.group.id: g\n",
			want: parsed{group: "g"}},
		{name: "SparkApplication wins over an earlier document", data: "kafka.group.id: decoy\n---\nkind: SparkApplication\nspec:\n  sparkConf:\n    spark.kafka.group.id: g\n",
			want: parsed{group: "g"}},
		{name: "first SparkApplication", data: "kind: SparkApplication\nmetadata: {name: one}\nspec: {sparkConf: {spark.kafka.group.id: g}}\n---\nkind: SparkApplication\nmetadata: {name: two}\nspec: {sparkConf: {spark.kafka.group.id: h}}\n",
			want: parsed{group: "g"}, warnings: 1},
		{name: "SparkApplication's other fields are not read", data: "kind: SparkApplication\nspec:\n  driver:\n    labels: {subscribe: x}\n",
			want: parsed{}},
		{name: "first document with keys", data: "name: sms-replies\n---\n---\nsubscribe: t\n---\nsubscribe: u\n",
			want: parsed{topics: []string{"t"}}},
		{name: "merge key and anchors", data: "base: &b {kafka.group.id: g}\njob:\n  <<: *b\n  subscribe: *t\n", want: parsed{}},
		{name: "no documents", data: "# nothing yet\n", want: parsed{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := deployconf.Parse("t.yaml", []byte(tt.data))
			if tt.name == "merge key and anchors" {
				// *t is not defined: the parser refuses it, with its line.
				if err == nil || err.Error() != "t.yaml:4: invalid YAML: unknown anchor 't' referenced" {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := parsedOf(d); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\n\twant %+v", got, tt.want)
			}
			if len(d.Warnings) != tt.warnings {
				t.Errorf("warnings %+v, want %d", d.Warnings, tt.warnings)
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	tests := []struct {
		name, data string
		want       deployconf.Warning
	}{
		{"t.properties", "kafka.group.id=a\nspark.kafka.group.id=b\n",
			deployconf.Warning{Code: deployconf.WarnConflict, Option: "kafka.group.id", Applied: "t.properties:2: spark.kafka.group.id=b", Others: []string{"t.properties:1: kafka.group.id=a"}}},
		{"t.properties", "kafka.group.id=a\nkafka.group.id=b\nkafka.group.id=c\nkafka.group.id=d\nkafka.group.id=e\nkafka.group.id=f\n",
			deployconf.Warning{Code: deployconf.WarnConflict, Option: "kafka.group.id", Applied: "t.properties:6: kafka.group.id=f",
				Others: []string{"t.properties:1: kafka.group.id=a", "t.properties:2: kafka.group.id=b", "t.properties:3: kafka.group.id=c"}, More: 2}},
		{"t.properties", "kafka.group.id=a\ngroupIdPrefix=p\n", deployconf.Warning{Code: deployconf.WarnPrefixIgnored}},
		{"t.properties", "subscribe=a\nsubscribePattern=a.*\n", deployconf.Warning{Code: deployconf.WarnStrategies, Others: []string{"subscribe", "subscribePattern"}}},
		{"t.yaml", "kind: SparkApplication\nmetadata: {name: one}\nspec: {}\n---\nkind: SparkApplication\n",
			deployconf.Warning{Code: deployconf.WarnApps, N: 2, Name: "one", Line: 1}},
	}
	for _, tt := range tests {
		d, err := deployconf.Parse(tt.name, []byte(tt.data))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Warnings) != 1 || !reflect.DeepEqual(d.Warnings[0], tt.want) {
			t.Errorf("%q: warnings %+v\n\twant %+v", tt.data, d.Warnings, tt.want)
		}
	}
	// Respellings of one value are not conflicts.
	d, err := deployconf.Parse("t.properties", []byte("subscribe=a,b\noption.subscribe= a , b\nkafka.group.id=g\nspark.kafka.group.id=g\n"))
	if err != nil || len(d.Warnings) != 0 {
		t.Errorf("warnings %+v, err %v", d.Warnings, err)
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"job.properties", "spark.kafka.group.id g\n", deployconf.FormatProperties},
		{"sms-replies.conf", "# c\nspark.master  local\nspark.kafka.group.id g\n", deployconf.FormatSparkDefaults},
		{"sms-replies.conf", "spark.master  local\nspark.kafka.group.id=g\n", deployconf.FormatProperties},
		{"sms-replies.conf", "spark.kafka.bootstrap.servers  b:9092\n", deployconf.FormatSparkDefaults},
		{"sms-replies.conf", "", deployconf.FormatProperties},
		{"job.YAML", "a=b\n", deployconf.FormatYAML},
		{"job.yml", "a: b\n", deployconf.FormatYAML},
		{"job.json", "{}", deployconf.FormatYAML},
		{"sms-replies", "apiVersion: v1\nkind: SparkApplication\nspec:\n  sparkConf: {}\n", deployconf.FormatYAML},
		{"sms-replies", "---\na: b\n", deployconf.FormatYAML},
		{"sms-replies", "- a\n", deployconf.FormatYAML},
		{"sms-replies", `{"a": 1}`, deployconf.FormatYAML},
		{"sms-replies", "kafka:\n  group.id: g\n", deployconf.FormatYAML},
		{"sms-replies", "kafka.group.id: g\nsubscribe: t\n", deployconf.FormatProperties},
		{"sms-replies", "subscribe=a,\\\n  b\n", deployconf.FormatProperties},
		{"sms-replies", "spark.master local\n", deployconf.FormatSparkDefaults},
	}
	for _, tt := range tests {
		d, err := deployconf.Parse(tt.name, []byte(tt.data))
		if err != nil {
			t.Errorf("%s %q: %v", tt.name, tt.data, err)
			continue
		}
		if d.Format != tt.want {
			t.Errorf("%s %q: format %q, want %q", tt.name, tt.data, d.Format, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, data string // data "" reads testdata/name
		want       string
		line       int
	}{
		{name: "broken-escape.properties",
			want: `testdata/broken-escape.properties:4: value of option.checkpointLocation: malformed \uxxxx escape \users: want four hex digits`, line: 4},
		{name: "broken-indent.yaml", want: "testdata/broken-indent.yaml:8: invalid YAML: did not find expected key", line: 8},
		{name: "broken-assign.conf",
			want: `testdata/broken-assign.conf:2: assign is not a JSON object of topics to partitions ({"topic":[0,1]}): unexpected EOF`, line: 2},
		{name: "broken-hocon.conf",
			want: "testdata/broken-hocon.conf:2: a { } block: this reads like HOCON or JSON, not Java properties, spark-defaults or YAML", line: 2},
		{name: "short.properties", data: "# a\n\nkafka.group.id=\\u12", want: `short.properties:3: value of kafka.group.id: malformed \uxxxx escape \u12: want four hex digits`, line: 3},
		{name: "key.properties", data: "kafka.group\\uZZZZ.id=g", want: `key.properties:1: key: malformed \uxxxx escape \uZZZZ: want four hex digits`, line: 1},
		{name: "continued.properties", data: "a=1\nsubscribe=a,\\\n  b\\u00\n", want: `continued.properties:2: value of subscribe: malformed \uxxxx escape \u00: want four hex digits`, line: 2},
		{name: "assign.properties", data: "assign=[\"t\"]\n", want: `assign.properties:1: assign is not a JSON object of topics to partitions ({"topic":[0,1]}): json: cannot unmarshal array into Go value of type map[string]json.RawMessage`, line: 1},
		{name: "tab.yaml", data: "spec:\n  sparkConf:\n\tspark.kafka.group.id: g\n", want: "tab.yaml:3: invalid YAML: found character that cannot start any token", line: 3},
		{name: "quote.yaml", data: "a: 1\nb: 'open\n", want: "quote.yaml:2: invalid YAML: found unexpected end of stream (an unclosed quote or bracket?)", line: 2},
		{name: "second-doc.yaml", data: "a: 1\n---\nb: c: d\n", want: "second-doc.yaml:3: invalid YAML: mapping values are not allowed in this context", line: 3},
		{name: "first-line.yaml", data: "a: b: c\n", want: "first-line.yaml:1: invalid YAML: mapping values are not allowed in this context", line: 1},
		{name: "control.yaml", data: "a: 1\nb: \x07\n", want: "control.yaml:2: control character U+0007, which YAML does not allow", line: 2},
		{name: "latin1.yaml", data: "a: 1\n\nb: caf\xe9\n", want: "latin1.yaml:3: not UTF-8 text", line: 3},
		{name: "list.yaml", data: "a: 1\nkafka.group.id: [a, b]\n", want: "list.yaml:2: kafka.group.id is a list; want a single value", line: 2},
		{name: "map.yaml", data: "subscribe:\n  a: 1\n", want: "map.yaml:1: subscribe is a map; want a comma-separated string or a list of strings", line: 1},
		{name: "cycle.yaml", data: "x: &a [*a]\n", want: "cycle.yaml:1: nested more than 64 levels deep (or an alias inside its own anchor); not a job options file", line: 1},
		{name: "laughs.yaml", data: laughs(), want: "laughs.yaml:5: more than 100000 YAML nodes, aliases expanded; not a job options file", line: 5},
		{name: "args.yaml", data: "kind: SparkApplication\nspec:\n  arguments:\n    - --assign={t\n", want: `args.yaml:4: assign is not a JSON object of topics to partitions ({"topic":[0,1]}): invalid character 't' looking for beginning of object key string`, line: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			var d deployconf.Deployed
			if tt.data == "" {
				d, err = deployconf.Load(filepath.Join("testdata", tt.name))
			} else {
				d, err = deployconf.Parse(tt.name, []byte(tt.data))
			}
			if err == nil {
				t.Fatalf("no error; read %+v", d)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n\t%s\nwant\n\t%s", err, tt.want)
			}
			var pe *deployconf.ParseError
			if !errors.As(err, &pe) || pe.Line != tt.line || !strings.HasSuffix(pe.File, tt.name) {
				t.Errorf("error %#v: want a *ParseError at line %d", err, tt.line)
			}
			if !reflect.DeepEqual(d, deployconf.Deployed{}) {
				t.Errorf("Deployed %+v returned with the error", d)
			}
		})
	}
}

// laughs is the billion-laughs document: nine small lines that alias into 10^8 nodes. The
// fifth line's aliases are the first to expand past the bound.
func laughs() string {
	var b strings.Builder
	b.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	for c := 'b'; c <= 'h'; c++ {
		b.WriteString(string(c) + ": &" + string(c) + " [")
		for i := range 10 {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*" + string(c-1))
		}
		b.WriteString("]\n")
	}
	b.WriteString("subscribe: *h\n")
	return b.String()
}

func TestLoad(t *testing.T) {
	_, err := deployconf.Load(filepath.Join(t.TempDir(), "absent.conf"))
	if err == nil || !strings.HasPrefix(err.Error(), "read deployed options: open ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v", err)
	}

	big := filepath.Join(t.TempDir(), "big.conf")
	if err := os.WriteFile(big, make([]byte, deployconf.MaxFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := deployconf.Load(big); err == nil || !strings.Contains(err.Error(), "larger than 4194304 bytes") {
		t.Errorf("err = %v", err)
	}
}
