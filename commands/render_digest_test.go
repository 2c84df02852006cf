package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// TestDigestReply: the health digest: a row per pipeline in the order the digest gives, the
// commit's age, the newest lag and its trend, the ticks nobody ran.
func TestDigestReply(t *testing.T) {
	d := pipeline.Digest{At: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC), Missed: 2, Rows: []pipeline.DigestRow{
		{Pipeline: "orders", Status: "FAILED", CommitAge: -1},
		{Pipeline: "never", CommitAge: -1},
		{Pipeline: "replies", Description: "inbound SMS replies", Status: "OK", CommitAge: 4*time.Minute + 10*time.Second, Lag: []int64{0, 10, 40, 80, 160}},
	}}
	r := DigestReply(d)
	want := []string{
		"PIPELINE             PROBE         LAST COMMIT  LAG          LAG TREND",
		"orders               FAILED        -            -            ",
		"never                never probed  -            -            ",
		"replies              OK            4m10s ago    160          ▁▁▂▄█",
		"replies: inbound SMS replies",
		"2 scheduled tick(s) were missed since the last digest: no replica was running.",
	}
	if r.Text != "Pipeline health at 2026-11-30 09:00Z" || strings.Join(r.Sections[0].Lines, "\n") != strings.Join(want, "\n") || !r.Sections[0].Pre {
		t.Fatalf("digest %q\n%s\nwant\n%s", r.Text, strings.Join(r.Sections[0].Lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestSparkline(t *testing.T) {
	cases := []struct {
		in   []int64
		want string
	}{
		{nil, ""},
		{[]int64{5, 5, 5}, "▁▁▁"},
		{[]int64{0, 7}, "▁█"},
		{[]int64{0, 1, 2, 3, 4, 5, 6, 7}, "▁▂▃▄▅▆▇█"},
	}
	for _, c := range cases {
		if got := sparkline(c.in); got != c.want {
			t.Errorf("sparkline(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestStatusNoteLine: detection's notes below the digest's table, one line each, as `status`
// shows them.
func TestStatusNoteLine(t *testing.T) {
	since := time.Date(2026, 11, 30, 8, 15, 0, 0, time.UTC)
	refused := func(r pipeline.Refusal) pipeline.StatusNote {
		return pipeline.StatusNote{Kind: pipeline.NotePublishRefused, Pipeline: "replies", Publish: pipeline.PublishState{Group: "replies-pub", Refusal: &r, Since: since}}
	}
	obs := pipeline.Observation{CheckpointKnown: true, Waiting: 1240, WaitingFor: 6 * time.Minute, Batch: 41, CommitAge: 7 * time.Minute}
	cases := []struct {
		note pipeline.StatusNote
		want string
	}{
		{pipeline.StatusNote{Kind: pipeline.NoteDetected, Pipeline: "orders", Active: []pipeline.Signal{pipeline.SignalStale}, Observation: obs, Incident: "INC-7"},
			"orders: detected checkpoint stale: 1,240 records wait beyond the checkpoint (for 6m with no commit); last checkpoint commit 7m ago (batch 41) (INC-7)"},
		{pipeline.StatusNote{Kind: pipeline.NoteDetected, Pipeline: "orders", Active: []pipeline.Signal{pipeline.SignalStale}, Observation: obs},
			"orders: detected checkpoint stale: 1,240 records wait beyond the checkpoint (for 6m with no commit); last checkpoint commit 7m ago (batch 41)"},
		{pipeline.StatusNote{Kind: pipeline.NoteLivenessUnwatched, Pipeline: "replies", Observation: pipeline.Observation{Liveness: pipeline.LivenessNoLog}},
			"replies: liveness is not watched: no driver log is configured (logs.paths, logs.kubernetes)"},
		{pipeline.StatusNote{Kind: pipeline.NoteLivenessUnwatched, Pipeline: "replies", Observation: pipeline.Observation{Liveness: pipeline.LivenessUnreadable, LivenessErr: "open /logs/x: permission denied"}},
			"replies: liveness is not watched: the driver log could not be read: open /logs/x: permission denied"},
		{pipeline.StatusNote{Kind: pipeline.NoteLivenessUnwatched, Pipeline: "replies", Observation: pipeline.Observation{Liveness: "no driver log is configured (logs.paths)"}},
			"replies: liveness is not watched: no driver log is configured (logs.paths)"}, // stored by an earlier version
		{pipeline.StatusNote{Kind: pipeline.NotePublishRefused, Pipeline: "replies", Publish: pipeline.PublishState{Group: "replies-pub", Refused: "not authorized", Since: since}},
			"replies: publish_group replies-pub not committed since " + human.Time(since) + ": not authorized"}, // stored by an earlier version
		{refused(pipeline.Refusal{Code: pipeline.RefuseLiveMembers, Group: "replies-pub", Members: []string{"spark-1", "spark-2"}}),
			"replies: publish_group replies-pub not committed since " + human.Time(since) + ": replies-pub has 2 live members (spark-1, spark-2): streamwatch commits only to a group nobody consumes with"},
		{refused(pipeline.Refusal{Code: pipeline.RefuseGroupUnknown}),
			"replies: publish_group replies-pub not committed since " + human.Time(since) + ": the group could not be described this round (its members are unknown)"},
		{refused(pipeline.Refusal{Code: pipeline.RefuseCommitsUnread}),
			"replies: publish_group replies-pub not committed since " + human.Time(since) + ": the group's commits could not be read this round"},
		{refused(pipeline.Refusal{Code: pipeline.RefuseCluster, Err: "GROUP_AUTHORIZATION_FAILED (kafka server: not authorized)"}),
			"replies: publish_group replies-pub not committed since " + human.Time(since) + ": the cluster refused the commit: GROUP_AUTHORIZATION_FAILED (kafka server: not authorized)"}, // stored by an earlier version
		{refused(pipeline.Refusal{Code: pipeline.RefuseCluster, Commit: kafka.RefusedNotAuthorized, Err: "kafka server: The client is not authorized to access this group"}),
			"replies: publish_group replies-pub not committed since " + human.Time(since) + ": the cluster refused the commit: not authorized (kafka server: The client is not authorized to access this group)"},
		{refused(pipeline.Refusal{Code: pipeline.RefuseCluster, Commit: kafka.RefusedLiveMembers, Err: "kafka server: The provided member is not known in the current generation"}),
			"replies: publish_group replies-pub not committed since " + human.Time(since) + ": the cluster refused the commit: the group has live members (kafka server: The provided member is not known in the current generation)"},
		{refused(pipeline.Refusal{Code: pipeline.RefuseGroupAhead, Held: []pipeline.Held{{Partition: "sms/0", Group: 30, Checkpoint: 10}, {Partition: "sms/2", Group: 9, Checkpoint: 7}}}),
			"replies: publish_group replies-pub not committed since " + human.Time(since) + ": the group is ahead of the checkpoint and streamwatch did not put it there; left alone on sms/0 (group at 30, checkpoint at 10), sms/2 (group at 9, checkpoint at 7)"},
	}
	for _, c := range cases {
		if got := statusNoteLine(c.note); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.note.Kind, got, c.want)
		}
	}
}
