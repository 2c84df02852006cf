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
		Why:        deployconf.WhyOtherGroup,
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

// TestCompareTestdata: what follows from each difference of the testdata files, as codes
// (commands.TestDriftLinesTestdata has their words).
func TestCompareTestdata(t *testing.T) {
	tests := []struct {
		file string
		want []string // field, severity and why of each difference
	}{
		{"job.properties", []string{"topics mismatch topics", "checkpointLocation mismatch other_checkpoint"}},
		{"spark-defaults.conf", []string{"checkpointLocation mismatch root"}},
		{"sparkapplication.yaml", []string{"checkpointLocation mismatch other_checkpoint"}},
		{"k8s-bundle.yaml", []string{"group mismatch other_group", "checkpointLocation mismatch root"}},
		{"options-multi.yaml", nil}, // the root /var/lib/spark/checkpoints holds the documented query
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var got []string
			for _, d := range deployconf.Compare(documented, load(t, tt.file)) {
				got = append(got, d.Field+" "+d.Severity+" "+string(d.Why))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
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
				Why: deployconf.WhyOtherGroup}}},
		{name: "group.id wins over the prefix", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: withGroup("sms-replies-prod", "other")},
		{name: "prefix of the documented group", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: withGroup("", "sms-replies")},
		{name: "prefix that is the documented group", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: withGroup("", "sms-replies-prod")},
		{name: "prefix of another group", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: withGroup("", "sms-replies-v2"),
			want: []deployconf.Difference{{Field: "group", Documented: "sms-replies-prod", Deployed: "sms-replies-v2-<uuid>-…",
				Evidence: "j.conf:4: groupIdPrefix=sms-replies-v2", Severity: "mismatch",
				Why: deployconf.WhyPrefix, Prefix: "sms-replies-v2"}}},
		{name: "no group options", doc: deployconf.Documented{Group: "sms-replies-prod"}, dep: deployconf.Deployed{File: "j.conf"},
			want: []deployconf.Difference{{Field: "group", Documented: "sms-replies-prod", Deployed: "spark-kafka-source-<uuid>-…",
				Evidence: "j.conf: no kafka.group.id or groupIdPrefix", Severity: "missing",
				Why: deployconf.WhyGenerated, Prefix: "spark-kafka-source"}}},

		{name: "topics as sets", doc: deployconf.Documented{Topics: []string{"b", "a", "a"}}, dep: topics("a", "b", "b")},
		{name: "other topics", doc: deployconf.Documented{Topics: []string{"a", "b"}}, dep: topics("b", "c"),
			want: []deployconf.Difference{{Field: "topics", Documented: "a, b", Deployed: "b, c", Evidence: "j.conf:5: subscribe=b,c", Severity: "mismatch",
				Why: deployconf.WhyTopics, NotRead: []string{"a"}, NotDocumented: []string{"c"}}}},
		{name: "fewer topics", doc: deployconf.Documented{Topics: []string{"a", "b"}}, dep: topics("a"),
			want: []deployconf.Difference{{Field: "topics", Documented: "a, b", Deployed: "a", Evidence: "j.conf:5: subscribe=a", Severity: "mismatch",
				Why: deployconf.WhyTopics, NotRead: []string{"b"}}}},
		{name: "pattern matches", doc: deployconf.Documented{Topics: []string{"client.replies.sms", "client.replies.mms"}}, dep: pattern(`client\.replies\..*`)},
		{name: "pattern matches whole names only", doc: deployconf.Documented{Topics: []string{"client.replies.sms"}}, dep: pattern(`client\.replies`),
			want: []deployconf.Difference{{Field: "topics", Documented: "client.replies.sms", Deployed: `subscribePattern client\.replies`,
				Evidence: `j.conf:6: subscribePattern=client\.replies`, Severity: "mismatch",
				Why: deployconf.WhyPatternUnmatched, Unmatched: []string{"client.replies.sms"}}}},
		{name: "pattern Go cannot read", doc: deployconf.Documented{Topics: []string{"a"}}, dep: pattern(`(?!b).*`),
			want: []deployconf.Difference{{Field: "topics", Documented: "a", Deployed: `subscribePattern (?!b).*`,
				Evidence: `j.conf:6: subscribePattern=(?!b).*`, Severity: "mismatch",
				Why: deployconf.WhyPatternUnreadable, PatternErr: "error parsing regexp: invalid or unsupported Perl syntax: `(?!`"}}},
		{name: "no topics", doc: deployconf.Documented{Topics: []string{"a"}}, dep: deployconf.Deployed{File: "j.conf"},
			want: []deployconf.Difference{{Field: "topics", Documented: "a", Evidence: "j.conf: no subscribe, subscribePattern or assign", Severity: "missing",
				Why: deployconf.WhyNoTopics}}},

		{name: "a shared broker", doc: deployconf.Documented{Brokers: []string{"k0:9092", "k1:9092"}}, dep: brokers("K1:9092", "k2:9092")},
		{name: "listener prefix", doc: deployconf.Documented{Brokers: []string{"k0:9093"}}, dep: brokers("SASL_SSL://k0:9093")},
		{name: "another cluster", doc: deployconf.Documented{Brokers: []string{"127.0.0.1:9092"}}, dep: brokers("k0:9092", "k1:9092"),
			want: []deployconf.Difference{{Field: "bootstrap", Documented: "127.0.0.1:9092", Deployed: "k0:9092, k1:9092",
				Evidence: "j.conf:7: kafka.bootstrap.servers=k0:9092,k1:9092", Severity: "mismatch",
				Why: deployconf.WhyOtherCluster}}},
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
				Why: deployconf.WhyRoot}}},
		{name: "the option is not a root", doc: deployconf.Documented{CheckpointLocation: "/c/q"}, dep: checkpoint("/c", false),
			want: []deployconf.Difference{{Field: "checkpointLocation", Documented: "/c/q", Deployed: "/c", Evidence: "j.conf:8: checkpointLocation=/c", Severity: "mismatch",
				Why: deployconf.WhyOtherCheckpoint}}},
		{name: "other bucket", doc: deployconf.Documented{CheckpointLocation: "s3://a/q"}, dep: checkpoint("s3://b/q", false),
			want: []deployconf.Difference{{Field: "checkpointLocation", Documented: "s3://a/q", Deployed: "s3://b/q", Evidence: "j.conf:8: checkpointLocation=s3://b/q", Severity: "mismatch",
				Why: deployconf.WhyOtherCheckpoint}}},
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
