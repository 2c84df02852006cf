// Package deployconf reads the options file of a deployed Spark Structured Streaming job and
// reports where it drifts from the values streamwatch documents for the pipeline: the consumer
// group, the topics, the bootstrap servers and the checkpoint location. That drift is what hid
// the seed incident: the job consumed as sms-replies-v2 while streamwatch watched
// sms-replies-prod, so the lag streamwatch reported was not the job's lag.
//
// The package only reads and compares; it imports neither Slack, Redis nor streamwatch's config,
// and returns data: what follows from a Difference is its Why code and values, a Warning its
// Code and fields, which commands/render_drift.go words.
//
// # Formats
//
// Parse takes the format from the file name and, where the name does not settle it, from the
// content:
//
//	.properties          Java properties
//	.conf                Java properties, or spark-defaults when no entry uses "=" or ":"
//	.yaml .yml .json     YAML
//	anything else        YAML when the content looks like YAML, otherwise as for .conf
//
// Java properties are read as java.util.Properties.load reads them: "key=value", "key: value"
// and "key value"; whole-line comments starting with # or !; a line ending in an odd number of
// backslashes continues on the next line, whose leading whitespace is dropped; the escapes
// \uXXXX (a malformed one is an error, as it is for Java), \t, \n, \r, \f and \ before any other
// character. spark-defaults.conf is the same syntax written as "key<whitespace>value" (Spark
// loads it with Properties.load). Values are trimmed, as Spark trims spark-defaults values. A
// line that opens or closes a "{" block is an error: HOCON and JSON-in-.conf files are not read.
//
// YAML is either a Spark Operator SparkApplication (a ScheduledSparkApplication's spec.template
// too), read from spec.sparkConf, spec.hadoopConf and spec.arguments ("--key=value",
// "--key value" and "--conf key=value" items), or any other document, walked as a flat or nested
// map of options whose nested keys are joined with dots. In a Kubernetes multi-document file the
// first SparkApplication is read; without one, the first document holding a key listed below.
//
// # Keys
//
// The Kafka source options as Spark takes them, matched case-insensitively (Spark's
// DataStreamReader options are case-insensitive), bare or after any one of the prefixes jobs use
// in config files:
//
//	field               Spark option              value
//	group               kafka.group.id            the consumer group
//	groupIdPrefix       groupIdPrefix             prefix of the groups Spark generates
//	topics              subscribe                 topics, comma-separated
//	topics              assign                    JSON {"topic":[partitions],...}: its topics
//	pattern             subscribePattern          a Java regex over topic names
//	bootstrap           kafka.bootstrap.servers   host:port list, comma-separated
//	checkpointLocation  checkpointLocation        the query's checkpoint location
//	failOnDataLoss      failOnDataLoss            true (Spark's default) or false: whether the
//	                                              query fails or skips when offsets it needs are
//	                                              no longer on the brokers
//
//	prefixes            (none)  spark.  option.  options.  spark.kafka.  spark.streaming.
//	                    spark.sql.streaming.
//
// So kafka.group.id, spark.kafka.group.id, option.kafka.group.id, spark.kafka.kafka.group.id,
// spark.streaming.kafka.group.id, spark.kafka.subscribe, option.subscribePattern,
// spark.kafka.bootstrap.servers and spark.checkpointLocation are all read, as are YAML arguments
// spelled --kafka.group.id or --subscribe.
//
// spark.sql.streaming.checkpointLocation is Spark's own setting and means something else: the
// root under which a query without a checkpointLocation option checkpoints, in
// <root>/<queryName>. The checkpointLocation option wins over it, and Compare accepts a
// documented location equal to the root or directly under it.
//
// A key that ends in one of these spellings after other leading segments (app.source.subscribe,
// or a nested YAML map under a job name) is read as well, but any spelling from the table wins
// over it. When a field is set more than once, a spelling from the table wins; of two such, the
// later entry, as in Java properties and spark-submit (in a SparkApplication sparkConf comes
// before hadoopConf, and arguments last); of two longer keys, the first, since a job's file
// usually names its source before its sink. Deployed.Warnings holds every conflict. Only keys
// ending in the option names above are read, so the passwords of kafka.sasl.jaas.config and the
// like never reach a report.
//
// # Comparison
//
// Compare judges each documented field that is set: topics as sets (a subscribePattern must
// match every documented topic, as Java's Pattern.matches would; Go's RE2 stands in for Java's
// regex); bootstrap lists as seed lists, which agree when they share a broker; checkpoint
// locations after dropping file:// and trailing slashes and reading s3a:// and s3n:// as s3://.
// Groups follow Spark: kafka.group.id is the group; with only groupIdPrefix Spark generates
// <prefix>-<uuid>-<hash> groups per query; with neither it generates
// spark-kafka-source-<uuid>-<hash> groups, and a documented group never sees the job's commits.
package deployconf
