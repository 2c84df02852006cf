package commands

import (
	"context"
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
		Status:   kafka.StatusStalled,
		Evidence: "1 of 4 partitions STALLED; worst p3: committed 1840 unchanged for 7m, log end 2310 (+470), held by a live member",
		Partitions: []kafka.PartitionLag{
			{Topic: "client.replies.sms", Partition: 0, LogEnd: 1000, Committed: 1000, Lag: 0, Member: "consumer-1", Status: kafka.StatusOK},
			{Topic: "client.replies.sms", Partition: 1, LogEnd: 2000, Committed: 1990, Lag: 10, Age: 30 * time.Second, AgeSource: kafka.AgeEstimated, Member: "consumer-1", Status: kafka.StatusOK},
			{Topic: "client.replies.sms", Partition: 2, LogEnd: kafka.UnknownOffset, Committed: 5, Lag: -1, Member: "consumer-1", Status: kafka.StatusUnknown},
			{Topic: "client.replies.sms", Partition: 3, LogEnd: 2310, Committed: 1840, Lag: 470, Age: 7*time.Minute + 12*time.Second, AgeSource: kafka.AgeRecord, Member: "consumer-1", Status: kafka.StatusStalled},
		},
		Unavailable: []kafka.Unavailable{{What: "log end offsets", Partitions: []kafka.TopicPartition{{Topic: "client.replies.sms", Partition: 2}},
			Err: &kafka.BrokerError{Cluster: "main", Broker: kafka.Broker{ID: 2, Addr: "10.0.0.9:9092"}, Op: "ListOffsets", Waited: 1500 * time.Millisecond, Err: context.DeadlineExceeded}}},
		History: 42, StallAfter: 5 * time.Minute,
	}
	r.Totals = kafka.LagTotals{Partitions: 4, Lag: 480, Unknown: 1, MaxAge: 7*time.Minute + 12*time.Second,
		MaxAgeAt: kafka.TopicPartition{Topic: "client.replies.sms", Partition: 3}, MaxAgeFrom: kafka.AgeRecord}
	want := `sms-replies: group sms-replies-prod on client.replies.sms (cluster main): STALLED
1 of 4 partitions STALLED; worst p3: committed 1840 unchanged for 7m, log end 2310 (+470), held by a live member
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
