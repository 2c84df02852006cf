// Package pipeline is what streamwatch does to a streaming pipeline, one file per feature:
//
//   - diagnose.go, checks.go, verdict.go: every check of a pipeline at once under one deadline
//     (Diagnoser, Checks) and the judgment over their results (Judge: live symptoms first,
//     then the causes that explain them, with confidence, risks and history; docs/diagnosis.md).
//     contract.go: the documented facts against the deployment, the checkpoint and the brokers,
//     and the checkpoint's offsets against what the brokers hold; checked.go:
//     what was checked when a symptom has no cause, and the one next step; fact.go: the
//     verdict's evidence, risks, notes and history as typed Facts. verdicts.go: the
//     automatic diagnosis of every incident opened for a pipeline, from the state's queue, and
//     the verdict stored as data in the incident's thread (Verdicts).
//   - checkpoint.go: the Spark checkpoint read against what the brokers hold (Checkpoints).
//   - lag.go, lagsamples.go: the lag and groups commands' reports (Lags), and the sampler's
//     rounds kept in the state with the digest's lag trend (LagSamples).
//   - clock.go: a clock that counts only while its condition holds (HeldClock), kept across
//     rounds.
//   - probes.go, digest.go: checkpoint-access probes and their transitions into incidents and
//     notices (Probes), and the health digest (Digest).
//   - watch.go: the recovery watch after a fix (Watcher).
//   - repair.go: the repair policy: backups, dry runs stored as plans, confirmations refused
//     unless every rule holds (Repairs).
//   - detect.go, signals.go, publish.go: detection on every sampling round (Round; the signals
//     of docs/detection.md) and standalone commits for publish_group.
//   - progress.go: the progress samples kept each round and the charts' data (Charts, Stalls).
//
// It reads pipelines through the integrations (storage, spark, kafka, probe, driverlog,
// deployconf, remediate) and records through small interfaces that state.Store satisfies. It
// returns data, never Slack text: commands turns results into replies. What detection posts is
// a Message (message.go: a typed kind and its numbers) that the Detector's Words, the app's
// commands.DetectMessage, turns into text; the probes' messages (ProbeMessage) and a watch's
// end (WatchReport) likewise go through Probes.Words and Watcher.Words; a refused remediation
// is a RefusalError with a RepairRefusal code; `status` gets StatusNotes; a diagnosis's
// checked causes carry a CheckReason; a Verdict's symptoms and causes are IDs and its
// evidence, risks, notes and history Facts, worded by commands/render_facts.go. No file here
// makes a sentence (TestNoSentencesInPipeline). It knows neither Slack nor the command
// grammar.
package pipeline
