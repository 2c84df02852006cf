package commands

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
)

// TestLagSection: a lag report laid out for people: headline, evidence, group, the worst
// partitions in a table, the rest summed up, totals, what could not be fetched, history.
func TestLagSection(t *testing.T) {
	r := &kafka.LagReport{
		Cluster: "main", Pipeline: "sms-replies", Topics: []string{"client.replies.sms"}, GroupExists: true,
		Group: kafka.GroupInfo{Name: "sms-replies-prod", State: "Stable", Members: []kafka.Member{
			{ClientID: "consumer-1", Host: "10.0.0.5", Assigned: map[string][]int32{"client.replies.sms": {0, 1, 2, 3}}}}},
		Status:  kafka.StatusStalled,
		Summary: kafka.Summary{Status: kafka.StatusStalled, Judged: 4, Same: 1, Worst: kafka.PartitionVerdict{Partition: 3, Committed: 1840, LogEnd: 2310, Lag: 470, Evidence: kafka.Evidence{Rule: kafka.RuleStalled, For: 7 * time.Minute, Grew: 470}}},
		Partitions: []kafka.PartitionLag{
			{Topic: "client.replies.sms", Partition: 0, LogEnd: 1000, Committed: 1000, Lag: 0, Member: "consumer-1", Status: kafka.StatusOK},
			{Topic: "client.replies.sms", Partition: 1, LogEnd: 2000, Committed: 1990, Lag: 10, Age: 30 * time.Second, AgeSource: kafka.AgeEstimated, Member: "consumer-1", Status: kafka.StatusOK},
			{Topic: "client.replies.sms", Partition: 2, LogEnd: kafka.UnknownOffset, Committed: 5, Lag: -1, Member: "consumer-1", Status: kafka.StatusUnknown},
			{Topic: "client.replies.sms", Partition: 3, LogEnd: 2310, Committed: 1840, Lag: 470, Age: 7*time.Minute + 12*time.Second, AgeSource: kafka.AgeRecord, Member: "consumer-1", Status: kafka.StatusStalled},
		},
		Unavailable: []kafka.Unavailable{{What: kafka.PartLogEnds, Partitions: []kafka.TopicPartition{{Topic: "client.replies.sms", Partition: 2}},
			Err: &kafka.BrokerError{Cluster: "main", Broker: kafka.Broker{ID: 2, Addr: "10.0.0.9:9092"}, Op: "ListOffsets", Waited: 1500 * time.Millisecond, Err: context.DeadlineExceeded}}},
		History: 42, StallAfter: 5 * time.Minute,
	}
	r.Totals = kafka.LagTotals{Partitions: 4, Lag: 480, Unknown: 1, MaxAge: 7*time.Minute + 12*time.Second,
		MaxAgeAt: kafka.TopicPartition{Topic: "client.replies.sms", Partition: 3}, MaxAgeFrom: kafka.AgeRecord}
	want := `sms-replies: group sms-replies-prod on client.replies.sms (cluster main): STALLED
1 of 4 partitions STALLED; worst p3: lag 470 for 7m, committed unchanged at 1840, log end 2310 (+470 in that time), held by a live member
state Stable, 1 member: consumer-1 (10.0.0.5) p0-3

PART  LOG END  COMMITTED  LAG    AGE  STATUS   MEMBER
   3    2,310      1,840  470  7m12s  STALLED  consumer-1
   2        ?          5    -      -  UNKNOWN  consumer-1
… 2 more partitions: lag 10, 2 OK
total: 4 partitions, lag 480, 1 unknown; oldest unconsumed 7m12s (client.replies.sms p3)
unknown log end offsets of client.replies.sms p2: cluster main: broker 2 (10.0.0.9:9092): ListOffsets: no answer within 1.5s
history: 42 stored samples; stall_after 5m`
	s := lagSection(r, 2)
	if got := strings.Join(s.Text(), "\n"); got != want || !s.Pre {
		t.Errorf("lag section =\n%s\nwant\n%s", got, want)
	}
	if s.Table == nil || len(s.Table.Rows) != 2 {
		t.Errorf("the partitions are not a table of 2 rows: %+v", s.Table)
	}
	if got := strings.Join(groupsSection(&kafka.GroupsReport{Cluster: "main", Topic: "t"}, 20).Text(), "\n"); !strings.Contains(got, "no group has commits on the topic") {
		t.Errorf("empty groups report: %q", got)
	}
	if got := partitionRanges([]int32{0, 1, 2, 5, 7, 8}); got != "0-2,5,7-8" {
		t.Errorf("partitionRanges = %q", got)
	}
}

// TestMismatchEvidence: the wrong-group finding, data from integrations/kafka, worded here in
// the sentences the lag reply's WRONG GROUP? line and diagnose's evidence have always shown;
// and the groups reply's ACTIVE column.
func TestMismatchEvidence(t *testing.T) {
	const topic = "client.replies.sms"
	spark := kafka.TopicGroup{Group: kafka.GroupInfo{Name: "spark-kafka-source-3f2a9c-1164-driver-0", State: "Stable"}, Topic: topic,
		Members: 1, Lag: 40, LagKnown: true, Active: true, ActiveBy: kafka.ActiveMembers}
	etl := kafka.TopicGroup{Group: kafka.GroupInfo{Name: "payments-etl", State: "Empty"}, Topic: "payments", Lag: 160, LagKnown: true,
		Movement: &kafka.CommitMovement{Samples: 4, Span: 90 * time.Second, Advanced: 40}, Active: true, ActiveBy: kafka.ActiveCommits}
	fresh := kafka.TopicGroup{Group: kafka.GroupInfo{Name: "fresh", State: "Stable"}, Topic: topic, Members: 2, Active: true,
		ActiveBy: kafka.ActiveMembers}
	report := func(state string, status kafka.Status, sum kafka.Summary, mm kafka.Mismatch) *kafka.LagReport {
		return &kafka.LagReport{Cluster: "main", Topics: []string{topic}, Group: kafka.GroupInfo{Name: "sms-replies-prod", State: state},
			Status: status, Summary: sum, Mismatch: &mm}
	}
	for _, c := range []struct {
		name string
		r    *kafka.LagReport
		want string
	}{
		{"empty, nothing stored", report("Empty", kafka.StatusOK, kafka.Summary{}, kafka.Mismatch{Documented: "sms-replies-prod", Reason: kafka.IdleEmpty,
			Active: []kafka.TopicGroup{spark}}),
			"documented group sms-replies-prod is empty (Empty, no member on client.replies.sms, no stored samples to show commits moving) " +
				"while spark-kafka-source-3f2a9c-1164-driver-0 consumes client.replies.sms: 1 member, lag 40"},
		{"empty, commits unchanged", &kafka.LagReport{Cluster: "main", Topics: []string{"payments"}, Group: kafka.GroupInfo{Name: "payments-prod"},
			Mismatch: &kafka.Mismatch{Documented: "payments-prod", Reason: kafka.IdleEmpty, Watched: true, Unchanged: 90 * time.Second,
				Active: []kafka.TopicGroup{etl}}},
			"documented group payments-prod is empty (unknown state, no member on payments, commits unchanged over 1m30s) " +
				"while payments-etl consumes payments: commits +40 in 1m30s, lag 160"},
		{"missing, two more groups", report("Dead", kafka.StatusUnknown, kafka.Summary{}, kafka.Mismatch{Documented: "sms-replies-prod", Reason: kafka.IdleMissing,
			Active: []kafka.TopicGroup{spark, fresh, fresh}}),
			"documented group sms-replies-prod is missing (no group sms-replies-prod on cluster main: no members, no commits on client.replies.sms) " +
				"while spark-kafka-source-3f2a9c-1164-driver-0 consumes client.replies.sms: 1 member, lag 40; 2 active groups more"},
		{"stopped: the verdict's evidence", report("Empty", kafka.StatusStopped, kafka.Summary{Status: kafka.StatusStopped, Judged: 4, Same: 4,
			Worst: kafka.PartitionVerdict{Partition: 3, Committed: 1840, LogEnd: 2310, Lag: 470, Evidence: kafka.Evidence{Rule: kafka.RuleStopped, For: 6 * time.Minute, AtLeast: true}}},
			kafka.Mismatch{Documented: "sms-replies-prod", Reason: kafka.IdleStopped, Active: []kafka.TopicGroup{fresh}}),
			"documented group sms-replies-prod is stopped (all 4 partitions STOPPED; worst p3: lag 470 for ≥6m, committed unchanged at 1840, " +
				"log end 2310 (no new records in that time), no member holds it) while fresh consumes client.replies.sms: " +
				"2 members, lag unknown (no commits)"},
		{"no commits", report("", kafka.StatusNoCommits, kafka.Summary{}, kafka.Mismatch{Documented: "sms-replies-prod", Reason: kafka.IdleNoCommits,
			Active: []kafka.TopicGroup{spark}}),
			"documented group sms-replies-prod is no commits (no member on client.replies.sms and no commits) " +
				"while spark-kafka-source-3f2a9c-1164-driver-0 consumes client.replies.sms: 1 member, lag 40"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := MismatchEvidence(c.r); got != c.want {
				t.Errorf("evidence = %q\nwant       %q", got, c.want)
			}
			if got := lagSection(c.r, 20).Lines[3]; got != "WRONG GROUP? "+c.want {
				t.Errorf("lag reply's fourth line = %q", got)
			}
			if got := lagReply(c.r, nil).Text; !strings.HasSuffix(got, "; wrong group? "+string(c.r.Mismatch.Reason)) {
				t.Errorf("lag reply's text = %q", got)
			}
		})
	}
	if got := MismatchEvidence(&kafka.LagReport{}); got != "" {
		t.Errorf("no finding worded as %q", got)
	}

	groups := groupsSection(&kafka.GroupsReport{Cluster: "main", Topic: topic, Partitions: 4,
		Groups: []kafka.TopicGroup{spark, etl, {Group: kafka.GroupInfo{Name: "old-batch-job"}, Topic: topic}}}, 20)
	var active []string
	for _, row := range groups.Table.Rows {
		active = append(active, row[len(row)-1])
	}
	if want := []string{"yes: 1 member on the topic (Stable)", "yes: commits advanced 40 in 1m30s", "no"}; !slices.Equal(active, want) {
		t.Errorf("ACTIVE column = %q, want %q", active, want)
	}
}

// TestKafkaPartWords: every part of a Kafka answer that can be unavailable, with its broker or
// topic; a part this version does not know (an earlier version's stored words) as it is.
func TestKafkaPartWords(t *testing.T) {
	for _, tt := range []struct {
		what kafka.Part
		of   string
		want string
	}{
		{kafka.PartLogStarts, "", "log start offsets"},
		{kafka.PartLogEnds, "", "log end offsets"},
		{kafka.PartCommitted, "", "committed offsets"},
		{kafka.PartGroupState, "", "group state"},
		{kafka.PartGroupStates, "", "group states"},
		{kafka.PartGroupCommits, "", "group commits"},
		{kafka.PartCoordinated, "broker 2 (10.0.0.9:9092)", "groups coordinated by broker 2 (10.0.0.9:9092)"},
		{kafka.PartTopicGroups, "client.replies.sms", "groups on client.replies.sms"},
		{kafka.PartRecordTimes, "", "record timestamps"},
		{kafka.PartStoredSamples, "", "stored samples"},
		{"groups coordinated by broker 1 (k:9092)", "", "groups coordinated by broker 1 (k:9092)"},
	} {
		if got := partWords(tt.what, tt.of); got != tt.want {
			t.Errorf("partWords(%q, %q) = %q, want %q", tt.what, tt.of, got, tt.want)
		}
	}
}

// TestKafkaNoAgeNote: why a partition's exact age is missing, as the lag reply's note says it.
func TestKafkaNoAgeNote(t *testing.T) {
	p := kafka.PartitionLag{Topic: "sms", Partition: 3, LogEnd: 90, Committed: 5, Lag: 85}
	for _, tt := range []struct {
		noAge kafka.NoTime
		note  string
		want  string
	}{
		{kafka.NoTimeNoPartition, "", "note: sms p3: partition missing from the fetch answer"},
		{kafka.NoTimeOutOfRange, "", "note: sms p3: committed offset is outside the log (deleted by retention?)"},
		{kafka.NoTimeNoRecord, "", "note: sms p3: no record at the committed offset in the fetch answer"},
		{kafka.NoTimeBrokerError, "kafka server: Not Leader For Partition", "note: sms p3: kafka server: Not Leader For Partition"},
		{"", "committed offset is outside the log (deleted by retention?)", "note: sms p3: committed offset is outside the log (deleted by retention?)"}, // an earlier version's words
		{"", "", ""},
	} {
		p.NoAge, p.AgeNote = tt.noAge, tt.note
		r := &kafka.LagReport{Cluster: "main", Topics: []string{"sms"}, Group: kafka.GroupInfo{Name: "g"}, GroupExists: true, Partitions: []kafka.PartitionLag{p}}
		var notes []string
		for _, l := range lagSection(r, 2).Text() {
			if strings.HasPrefix(l, "note: ") {
				notes = append(notes, l)
			}
		}
		if want := []string{tt.want}; tt.want == "" && len(notes) > 0 || tt.want != "" && !slices.Equal(notes, want) {
			t.Errorf("NoAge %q, AgeNote %q: notes %q, want %q", tt.noAge, tt.note, notes, tt.want)
		}
	}
}

func TestCommitRefusalWords(t *testing.T) {
	for r, want := range map[kafka.CommitRefusal]string{
		kafka.RefusedLiveMembers: "the group has live members", kafka.RefusedNotAuthorized: "not authorized", "new_reason": "new_reason"} {
		if got := commitRefusalWords(r); got != want {
			t.Errorf("commitRefusalWords(%q) = %q, want %q", r, got, want)
		}
	}
}
