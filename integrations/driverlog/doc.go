// Package driverlog scans Spark driver and executor log files for checkpoint
// trouble: failed checkpoint writes, permission errors, state rebuilt from a
// stale checkpoint, two runs on one checkpoint and the other failures listed
// in §9 of docs/spark-checkpoint-format.md.
//
// Scan reads only the tail of each file (Options.MaxBytes), line by line with
// a bounded line length, and folds the lines into log records: a record is a
// line that starts with a timestamp plus the lines under it (exception text,
// "at ..." frames, "Caused by:"), so a stack trace counts once. Each entry of
// Signatures that matches is reported once with how many records it matched,
// the first and last timestamp, the file and one example line with secrets
// masked by Redact. The report is data: commands words the signatures (by ID)
// and the paths skipped (Skip).
//
// Logs that are not files, such as a Kubernetes driver pod's, come in through
// Options.Sources (a Source, which integrations/kubelogs meets) and go through
// the same scanner.
//
// The package imports neither Slack, Redis nor the config package; the
// caller passes pipelines[].logs.paths and max_bytes in Options.
package driverlog
