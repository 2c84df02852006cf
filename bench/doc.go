// Package bench holds streamwatch's performance figures and what measures them.
//
//   - bench_test.go files here are Go benchmarks (they run only with -bench): consumer lag on
//     kfake at 1,000 and 10,000 partitions, streamwatch against franz-go's kadm and a naive
//     per-partition sarama loop, and Spark checkpoint diagnosis at 1,000 and 10,000 batches.
//   - load/ and cmd/swload are the load generator: Alertmanager alerts POSTed to a loopback
//     URL over one keep-alive connection per sender (as wrk does), bounded by a request count
//     and a time limit.
//   - cmd/swbench is what `make bench` (scripts/bench) runs: it builds the release binary,
//     starts redis-server (appendonly yes, appendfsync everysec), Slack's fake and Prometheus
//     Alertmanager on loopback, drives the ingest, storm, distinct-alert storm and memory
//     measurements, runs the Go benchmarks above, and writes RESULTS.md with min/median/max
//     over repeated runs.
package bench
