package deployconf_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
)

// documented is pipelines[0] of docs/config-sketch.yaml, with the brokers the jobs use.
var documented = deployconf.Documented{
	Group:              "sms-replies-prod",
	Topics:             []string{"client.replies.sms"},
	Brokers:            []string{"kafka-0.kafka.data.svc:9092", "kafka-1.kafka.data.svc:9092"},
	CheckpointLocation: "file:///var/lib/spark/checkpoints/sms-replies",
}

func TestCompareSeedIncident(t *testing.T) {
	diffs := deployconf.Compare(documented, load(t, "sms-replies.conf"))
	want := []deployconf.Difference{{
		Field:      "group",
		Documented: "sms-replies-prod",
		Deployed:   "sms-replies-v2",
		Evidence:   "testdata/sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2",
		Severity:   "mismatch",
		Reason:     "The job consumes as sms-replies-v2; streamwatch watches sms-replies-prod, so the lag it reports is not the job's.",
	}}
	if !reflect.DeepEqual(diffs, want) {
		t.Errorf("got %#v\n\twant %#v", diffs, want)
	}
	// As the bot would name it, by its base name.
	d, err := deployconf.Parse("sms-replies.conf", []byte(readTestdata(t, "sms-replies.conf")))
	if err != nil {
		t.Fatal(err)
	}
	if got := deployconf.Compare(documented, d)[0].Evidence; got != "sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2" {
		t.Errorf("evidence %q", got)
	}
}

func TestCompareTestdata(t *testing.T) {
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
			got := deployconf.Lines(deployconf.Compare(documented, load(t, tt.file)))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

func TestCompare(t *testing.T) {
	withGroup := func(id, prefix string) deployconf.Deployed {
		d := deployconf.Deployed{File: "j.conf", GroupID: id, GroupIDPrefix: prefix, Sources: map[string]string{}, Settings: map[string]string{}}
		if id != "" {
			d.Sources["group"], d.Settings["group"] = "j.conf:3", "kafka.group.id="+id
		}
		if prefix != "" {
			d.Sources["groupIdPrefix"], d.Settings["groupIdPrefix"] = "j.conf:4", "groupIdPrefix="+prefix
		}
		return d
	}
	topics := func(topics ...string) deployconf.Deployed {
		return deployconf.Deployed{File: "j.conf", Topics: topics,
			Sources: map[string]string{"topics": "j.conf:5"}, Settings: map[string]string{"topics": "subscribe=" + strings.Join(topics, ",")}}
	}
	pattern := func(p string) deployconf.Deployed {
		return deployconf.Deployed{File: "j.conf", Pattern: p,
			Sources: map[string]string{"pattern": "j.conf:6"}, Settings: map[string]string{"pattern": "subscribePattern=" + p}}
	}
	brokers := func(b ...string) deployconf.Deployed {
		return deployconf.Deployed{File: "j.conf", Bootstrap: b,
			Sources: map[string]string{"bootstrap": "j.conf:7"}, Settings: map[string]string{"bootstrap": "kafka.bootstrap.servers=" + strings.Join(b, ",")}}
	}
	checkpoint := func(loc string, root bool) deployconf.Deployed {
		key := "checkpointLocation="
		if root {
			key = "spark.sql.streaming.checkpointLocation="
		}
		return deployconf.Deployed{File: "j.conf", CheckpointLocation: loc, CheckpointIsRoot: root,
			Sources: map[string]string{"checkpointLocation": "j.conf:8"}, Settings: map[string]string{"checkpointLocation": key + loc}}
	}

	tests := []struct {
		name string
		doc  deployconf.Documented
		dep  deployconf.Deployed
		want []deployconf.Difference
	}{
		{name: "nothing documented", doc: deployconf.Documented{}, dep: deployconf.Deployed{}},
		{name: "same group", doc: deployconf.Documented{Group: "g"}, dep: withGroup("g", "")},
		{name: "other group", doc: deployconf.Documented{Group: "g"}, dep: withGroup("G", ""),
			want: []deployconf.Difference{{Field: "group", Documented: "g", Deployed: "G", Evidence: "j.conf:3: kafka.group.id=G", Severity: "mismatch",
				Reason: "The job consumes as G; streamwatch watches g, so the lag it reports is not the job's."}}},
		{name: "group.id wins over the prefix", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: withGroup("sms-replies-prod", "other")},
		{name: "prefix of the documented group", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: withGroup("", "sms-replies")},
		{name: "prefix that is the documented group", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: withGroup("", "sms-replies-prod")},
		{name: "prefix of another group", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: withGroup("", "sms-replies-v2"),
			want: []deployconf.Difference{{Field: "group", Documented: "sms-replies-prod", Deployed: "sms-replies-v2-<uuid>-…",
				Evidence: "j.conf:4: groupIdPrefix=sms-replies-v2", Severity: "mismatch",
				Reason: "kafka.group.id is not set, so Spark generates the group, sms-replies-v2-<uuid>-<hash> for each query; sms-replies-prod does not start with the prefix and will never see the job's commits."}}},
		{name: "no group options", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: deployconf.Deployed{File: "j.conf"},
			want: []deployconf.Difference{{Field: "group", Documented: "sms-replies-prod", Deployed: "spark-kafka-source-<uuid>-…",
				Evidence: "j.conf: no kafka.group.id or groupIdPrefix", Severity: "missing",
				Reason: "Neither kafka.group.id nor groupIdPrefix is set, so Spark generates spark-kafka-source-<uuid>-<hash> groups; the documented group sms-replies-prod will never see commits."}}},

		{name: "topics as sets", doc: deployconf.Documented{Topics: []string{"b", "a", "a"}}, dep: topics("a", "b", "b")},
		{name: "other topics", doc: deployconf.Documented{Topics: []string{"a", "b"}}, dep: topics("b", "c"),
			want: []deployconf.Difference{{Field: "topics", Documented: "a, b", Deployed: "b, c", Evidence: "j.conf:5: subscribe=b,c", Severity: "mismatch",
				Reason: "Documented but not read by the job: a; read by the job but not documented: c."}}},
		{name: "fewer topics", doc: deployconf.Documented{Topics: []string{"a", "b"}}, dep: topics("a"),
			want: []deployconf.Difference{{Field: "topics", Documented: "a, b", Deployed: "a", Evidence: "j.conf:5: subscribe=a", Severity: "mismatch",
				Reason: "Documented but not read by the job: b."}}},
		{name: "pattern matches", doc: deployconf.Documented{Topics: []string{"client.replies.sms", "client.replies.mms"}}, dep: pattern(`client\.replies\..*`)},
		{name: "pattern matches whole names only", doc: deployconf.Documented{Topics: []string{"client.replies.sms"}}, dep: pattern(`client\.replies`),
			want: []deployconf.Difference{{Field: "topics", Documented: "client.replies.sms", Deployed: `subscribePattern client\.replies`,
				Evidence: `j.conf:6: subscribePattern=client\.replies`, Severity: "mismatch",
				Reason: "The pattern does not match the documented client.replies.sms, so the job does not read it."}}},
		{name: "pattern Go cannot read", doc: deployconf.Documented{Topics: []string{"a"}}, dep: pattern(`(?!b).*`),
			want: []deployconf.Difference{{Field: "topics", Documented: "a", Deployed: `subscribePattern (?!b).*`,
				Evidence: `j.conf:6: subscribePattern=(?!b).*`, Severity: "mismatch",
				Reason: "streamwatch cannot evaluate this pattern (error parsing regexp: invalid or unsupported Perl syntax: `(?!`); check by hand that it matches a."}}},
		{name: "no topics", doc: deployconf.Documented{Topics: []string{"a"}}, dep: deployconf.Deployed{File: "j.conf"},
			want: []deployconf.Difference{{Field: "topics", Documented: "a", Evidence: "j.conf: no subscribe, subscribePattern or assign", Severity: "missing",
				Reason: "The file names no topics; Spark refuses to start a Kafka query without one of them, unless the job sets it in code."}}},

		{name: "a shared broker", doc: deployconf.Documented{Brokers: []string{"k0:9092", "k1:9092"}}, dep: brokers("K1:9092", "k2:9092")},
		{name: "listener prefix", doc: deployconf.Documented{Brokers: []string{"k0:9093"}}, dep: brokers("SASL_SSL://k0:9093")},
		{name: "another cluster", doc: deployconf.Documented{Brokers: []string{"127.0.0.1:9092"}}, dep: brokers("k0:9092", "k1:9092"),
			want: []deployconf.Difference{{Field: "bootstrap", Documented: "127.0.0.1:9092", Deployed: "k0:9092, k1:9092",
				Evidence: "j.conf:7: kafka.bootstrap.servers=k0:9092,k1:9092", Severity: "mismatch",
				Reason: "No broker in common: the job may read another cluster than the one streamwatch watches."}}},
		{name: "no brokers", doc: deployconf.Documented{Brokers: []string{"k0:9092"}}, dep: deployconf.Deployed{File: "j.conf"},
			want: []deployconf.Difference{{Field: "bootstrap", Documented: "k0:9092", Evidence: "j.conf: no kafka.bootstrap.servers", Severity: "missing"}}},

		{name: "file URL and path", doc: deployconf.Documented{CheckpointLocation: "file:///var/lib/spark/checkpoints/sms-replies"}, dep: checkpoint("/var/lib/spark/checkpoints/sms-replies/", false)},
		{name: "Hadoop file URL", doc: deployconf.Documented{CheckpointLocation: "/var/lib/spark/checkpoints/sms-replies"}, dep: checkpoint("file:/var/lib/spark/checkpoints/sms-replies", false)},
		{name: "localhost file URL", doc: deployconf.Documented{CheckpointLocation: "/c/q"}, dep: checkpoint("file://localhost/c/q//", false)},
		{name: "s3a and s3", doc: deployconf.Documented{CheckpointLocation: "s3://acme-spark-checkpoints/sms-replies"}, dep: checkpoint("s3a://acme-spark-checkpoints/sms-replies/", false)},
		{name: "s3n and S3A", doc: deployconf.Documented{CheckpointLocation: "S3A://b/q/"}, dep: checkpoint("s3n://b/q", false)},
		{name: "root holds the documented location", doc: deployconf.Documented{CheckpointLocation: "s3://b/checkpoints/sms-replies"}, dep: checkpoint("s3a://b/checkpoints/", true)},
		{name: "root set to the location itself", doc: deployconf.Documented{CheckpointLocation: "/c/q"}, dep: checkpoint("/c/q", true)},
		{name: "root two levels up", doc: deployconf.Documented{CheckpointLocation: "/c/x/q"}, dep: checkpoint("/c", true),
			want: []deployconf.Difference{{Field: "checkpointLocation", Documented: "/c/x/q", Deployed: "/c", Evidence: "j.conf:8: spark.sql.streaming.checkpointLocation=/c", Severity: "mismatch",
				Reason: "spark.sql.streaming.checkpointLocation is a root: Spark checkpoints the query in /c/<queryName>, and the documented location is not directly under it."}}},
		{name: "the option is not a root", doc: deployconf.Documented{CheckpointLocation: "/c/q"}, dep: checkpoint("/c", false),
			want: []deployconf.Difference{{Field: "checkpointLocation", Documented: "/c/q", Deployed: "/c", Evidence: "j.conf:8: checkpointLocation=/c", Severity: "mismatch",
				Reason: "streamwatch reads and probes a checkpoint the job does not write."}}},
		{name: "other bucket", doc: deployconf.Documented{CheckpointLocation: "s3://a/q"}, dep: checkpoint("s3://b/q", false),
			want: []deployconf.Difference{{Field: "checkpointLocation", Documented: "s3://a/q", Deployed: "s3://b/q", Evidence: "j.conf:8: checkpointLocation=s3://b/q", Severity: "mismatch",
				Reason: "streamwatch reads and probes a checkpoint the job does not write."}}},
		{name: "no checkpoint", doc: deployconf.Documented{CheckpointLocation: "/c/q"}, dep: deployconf.Deployed{File: "j.conf"},
			want: []deployconf.Difference{{Field: "checkpointLocation", Documented: "/c/q", Evidence: "j.conf: no checkpointLocation or spark.sql.streaming.checkpointLocation", Severity: "missing"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deployconf.Compare(tt.doc, tt.dep)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestCompareEveryField(t *testing.T) {
	// Each field differs: each has its own entry, in a fixed order.
	dep := deployconf.Deployed{File: "j.conf", GroupID: "x", Topics: []string{"x"}, Bootstrap: []string{"x:1"}, CheckpointLocation: "/x"}
	var fields []string
	for _, d := range deployconf.Compare(documented, dep) {
		fields = append(fields, d.Field+" "+d.Severity)
	}
	if want := []string{"group mismatch", "topics mismatch", "bootstrap mismatch", "checkpointLocation mismatch"}; !reflect.DeepEqual(fields, want) {
		t.Errorf("got %q, want %q", fields, want)
	}
	var missing []string
	for _, d := range deployconf.Compare(documented, deployconf.Deployed{File: "j.conf"}) {
		missing = append(missing, d.Field+" "+d.Severity)
	}
	if want := []string{"group missing", "topics missing", "bootstrap missing", "checkpointLocation missing"}; !reflect.DeepEqual(missing, want) {
		t.Errorf("got %q, want %q", missing, want)
	}
}
