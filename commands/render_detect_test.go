package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestDetectMessage: every message detection posts, worded as the incident's title and root,
// its thread and the channel show it.
func TestDetectMessage(t *testing.T) {
	obs := pipeline.Observation{CheckpointKnown: true, Batch: 41, CommitAge: 6*time.Minute + 12*time.Second, Waiting: 1240,
		WaitingFor: 6*time.Minute + 12*time.Second, Oldest: 16 * time.Minute, OldestKnown: true, OldestAt: "client.replies.sms/2", Group: "sms-replies-prod",
		GroupStatus: "STALLED", GroupEvidence: "all 3 partitions STALLED; worst p2: lag 410 for 5m", MaxLag: 15 * time.Minute}
	numbers := "1,240 records wait beyond the checkpoint (for 6m12s with no commit), the oldest 16m old (client.replies.sms/2); " +
		"last checkpoint commit 6m12s ago (batch 41); group sms-replies-prod STALLED (all 3 partitions STALLED; worst p2: lag 410 for 5m)"
	active := []pipeline.Signal{pipeline.SignalStale, pipeline.SignalStalled, pipeline.SignalLag}
	// This version stores the summary as data (group_summary); the string above is an earlier
	// version's, still read.
	typed := obs
	typed.GroupEvidence, typed.GroupSummary = "", &kafka.Summary{Status: kafka.StatusStalled, Judged: 3, Same: 3,
		Worst: kafka.PartitionVerdict{Partition: 2, Committed: 90, LogEnd: 500, Lag: 410, Evidence: kafka.Evidence{Rule: kafka.RuleStalled, For: 5 * time.Minute, AtLeast: true, Grew: 10}}}
	typedNumbers := strings.Replace(numbers, "(all 3 partitions STALLED; worst p2: lag 410 for 5m)",
		"(all 3 partitions STALLED; worst p2: lag 410 for ≥5m, committed unchanged at 90, log end 500 (+10 in that time), held by a live member)", 1)
	if got := detectNumbers(typed); got != typedNumbers {
		t.Errorf("typed summary:\n got %q\nwant %q", got, typedNumbers)
	}
	retention := pipeline.Observation{CheckpointKnown: true, Batch: -1, Waiting: -1, RetentionShare: 0.92, RetentionTopic: "sms",
		RetentionParts: []int32{0, 2}, Retention: 24 * time.Hour, RetentionLeft: 115 * time.Minute}
	const retentionLine = "the oldest unread record of sms partition 0, 2 has used 92% of retention.ms 24h: 1h55m left before retention deletes it unread"
	slow := pipeline.Observation{CheckpointKnown: true, Batch: 41, CommitAge: time.Second, Waiting: -1, Running: 42,
		RunningSince: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), RunningFor: 31 * time.Second,
		UsualDuration: 1500 * time.Millisecond, SlowAfter: 20 * time.Second}
	m := func(k pipeline.MessageKind, sig []pipeline.Signal, o pipeline.Observation) pipeline.Message {
		return pipeline.Message{Kind: k, Pipeline: "sms-replies", Signals: sig, Observation: o}
	}
	cases := []struct {
		name string
		msg  pipeline.Message
		want string
	}{
		{"title stale", m(pipeline.MsgTitle, active, obs), "sms-replies: 1,240 records have waited 6m12s with no checkpoint commit"},
		{"title lag", m(pipeline.MsgTitle, []pipeline.Signal{pipeline.SignalLag}, obs), "sms-replies: Spark 16m behind (1,240 records wait)"},
		{"title stalled", m(pipeline.MsgTitle, []pipeline.Signal{pipeline.SignalStalled}, obs), "sms-replies: consumer group sms-replies-prod STALLED"},
		{"title silent", m(pipeline.MsgTitle, []pipeline.Signal{pipeline.SignalSilent}, pipeline.Observation{SilentFor: 3 * time.Minute}),
			"sms-replies: the query has said nothing in the driver log for 3m (no progress, no idle line)"},
		{"title retention", m(pipeline.MsgTitle, []pipeline.Signal{pipeline.SignalRetention}, retention), "sms-replies: unread records of sms are 92% through its retention (1h55m left)"},
		{"detected silent, pod", m(pipeline.MsgDetected, []pipeline.Signal{pipeline.SignalSilent}, pipeline.Observation{Batch: -1, Waiting: -1,
			SilentFor: 3 * time.Minute, BeatAt: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), BeatLine: "Streaming query has been idle and waiting for new data more than 10000 ms.",
			BeatLog: "pod spark/sms-driver container spark-kubernetes-driver", BeatNote: "1 pod matches selector spark-role=driver, running"}),
			"query silent: the query's last heartbeat 3m ago: Streaming query has been idle and waiting for new data more than 10000 ms. " +
				"(pod spark/sms-driver container spark-kubernetes-driver: 1 pod matches selector spark-role=driver, running)"},
		{"detected silent, the pod as data", m(pipeline.MsgDetected, []pipeline.Signal{pipeline.SignalSilent}, pipeline.Observation{Batch: -1, Waiting: -1,
			SilentFor: 3 * time.Minute, BeatAt: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), BeatLine: "Streaming query has been idle and waiting for new data more than 10000 ms.",
			BeatLog: "pod spark/sms-driver container spark-kubernetes-driver", BeatPod: &driverlog.PodNote{Choice: driverlog.PodRunning, Selector: "spark-role=driver", Pods: 1}}),
			"query silent: the query's last heartbeat 3m ago: Streaming query has been idle and waiting for new data more than 10000 ms. " +
				"(pod spark/sms-driver container spark-kubernetes-driver: the only pod matching spark-role=driver, running)"},
		{"title slow", m(pipeline.MsgTitle, []pipeline.Signal{pipeline.SignalSlow}, slow), "sms-replies: batch 42 has run 31s, its usual duration is 1.5s"},
		{"detected slow", m(pipeline.MsgDetected, []pipeline.Signal{pipeline.SignalSlow}, slow),
			"batch slow: last checkpoint commit 1s ago (batch 41); batch 42 running for 31s (usual 1.5s; slow after 20s: 5 × the usual batch duration, at least 20s)"},
		{"detected", m(pipeline.MsgDetected, active, obs), "checkpoint stale, group STALLED, lag over 15m: " + numbers},
		{"clearing", m(pipeline.MsgClearing, active[:1], obs), "checkpoint stale, clearing (recovers after 2 clear rounds): " + numbers},
		{"again", m(pipeline.MsgAgain, active[:1], obs), "Again: checkpoint stale: " + numbers},
		{"now also", m(pipeline.MsgNowAlso, active[2:], obs), "Now also lag over 15m: " + numbers},
		{"notice", m(pipeline.MsgNotice, active[:1], obs), "streamwatch detected a problem with sms-replies: checkpoint stale: " + numbers},
		{"recovered", m(pipeline.MsgRecovered, nil, obs), "Recovered: progress resumed: " + numbers},
		{"recovered, no numbers", m(pipeline.MsgRecovered, nil, pipeline.Observation{}), "Recovered: progress resumed"},
		{"recovered notice", m(pipeline.MsgRecoveredNotice, nil, obs), "sms-replies recovered: progress resumed: " + numbers},
		{"restarted", pipeline.Message{Kind: pipeline.MsgRestarted, Pipeline: "sms-replies", Run: "r2", PrevRun: "r1",
			Observation: pipeline.Observation{BeatAt: time.Date(2026, 11, 30, 9, 1, 2, 0, time.UTC)}},
			"The query restarted: runId r2 (was r1), seen at 2026-11-30T09:01:02Z in the driver log."},
		{"retention warning", m(pipeline.MsgRetentionWarning, nil, retention),
			"⚠️ sms-replies: " + retentionLine + ". Spark must catch up, or retention.ms be raised, before then."},
		{"numbers with retention", m(pipeline.MsgDetected, []pipeline.Signal{pipeline.SignalRetention}, retention),
			"unread records near retention: the checkpoint has no commit; " + retentionLine},
		{"publish rewound", pipeline.Message{Kind: pipeline.MsgPublishRewound, Pipeline: "sms-replies", Group: "sms-pub", Batch: 7,
			Rewound: []pipeline.Rewind{{Partition: "sms/0", From: 30, To: 10}, {Partition: "sms/1", From: 5, To: 4}}},
			"The checkpoint of sms-replies went back (batch 7): publish_group sms-pub moved back with it on sms/0 from 30 to 10, sms/1 from 5 to 4."},
	}
	for _, c := range cases {
		if got := DetectMessage(c.msg); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	unread := obs
	unread.CheckpointKnown, unread.CheckpointErr = false, "list commits/: permission denied"
	if l := detectNumbers(unread); !strings.HasPrefix(l, "checkpoint unreadable: list commits/: permission denied; group") {
		t.Errorf("numbers without a checkpoint: %q", l)
	}
}
