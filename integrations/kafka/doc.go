// Package kafka diagnoses consumer lag: offsets, groups, lag samples and
// the pure status evaluator behind the `lag` and `groups` commands.
//
// The pieces, in the order data flows:
//
//   - Clusters: one lazily connected sarama client per configured cluster
//     (TLS, SASL PLAIN and SCRAM). A cluster that is down costs nothing
//     until it is used and is retried on the next use.
//   - Cluster.Offsets and the Monitor's reports fetch offsets batched: one
//     ListOffsets per partition leader, one OffsetFetch and one
//     DescribeGroups per group coordinator, whatever the partition count.
//     A broker that does not answer leaves a hole in the answer (see
//     Unavailable), never a hang past the context's deadline.
//   - Sampler stores (committed offset, log end, time) samples through a
//     SampleStore; Evaluate judges a window of them without I/O, Burrow's
//     way but without ZooKeeper: OK, WARNING, STALLED, STOPPED, REWOUND,
//     NO_COMMITS, each with its evidence as data (a Rule code and its
//     numbers, evidence.go) that commands words.
//   - Monitor.PipelineLag, Monitor.GroupLag and Monitor.TopicGroups build
//     the structured reports, including the wrong-group check (commands
//     lays them out for people).
//   - round.go: the batched sampling round of every pipeline; publish.go:
//     standalone commits; ranges.go: each partition's earliest and latest
//     offset.
//   - versions.go: the one table of the request versions sent to a cluster
//     of each Kafka version.
//
// The package imports neither Slack, Redis nor the config package.
package kafka
