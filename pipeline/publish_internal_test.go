package pipeline

import (
	"reflect"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
)

func TestPlanPublish(t *testing.T) {
	tp := func(p int32) kafka.TopicPartition { return kafka.TopicPartition{Topic: "sms", Partition: p} }
	empty := func(commits map[kafka.TopicPartition]int64) *kafka.GroupState {
		return &kafka.GroupState{Info: kafka.GroupInfo{Name: "sms-spark", State: "Empty"}, Known: true, Commits: commits}
	}
	tests := []struct {
		name       string
		checkpoint map[kafka.TopicPartition]int64
		group      *kafka.GroupState
		last       PublishState
		offsets    map[kafka.TopicPartition]int64
		rewound    []Rewind
		held       []Held
		refusal    *Refusal
	}{
		{name: "first commit", checkpoint: map[kafka.TopicPartition]int64{tp(0): 10, tp(1): 12}, group: empty(map[kafka.TopicPartition]int64{}),
			offsets: map[kafka.TopicPartition]int64{tp(0): 10, tp(1): 12}},
		{name: "forward only what moved", checkpoint: map[kafka.TopicPartition]int64{tp(0): 10, tp(1): 15},
			group:   empty(map[kafka.TopicPartition]int64{tp(0): 10, tp(1): 12}),
			offsets: map[kafka.TopicPartition]int64{tp(1): 15}},
		{name: "nothing moved", checkpoint: map[kafka.TopicPartition]int64{tp(0): 10}, group: empty(map[kafka.TopicPartition]int64{tp(0): 10})},
		{name: "someone else moved the group ahead", checkpoint: map[kafka.TopicPartition]int64{tp(0): 10},
			group: empty(map[kafka.TopicPartition]int64{tp(0): 30}), last: PublishState{Committed: map[string]int64{"sms/0": 10}},
			held: []Held{{Partition: "sms/0", Group: 30, Checkpoint: 10}}},
		{name: "the checkpoint went back", checkpoint: map[kafka.TopicPartition]int64{tp(0): 10},
			group: empty(map[kafka.TopicPartition]int64{tp(0): 30}), last: PublishState{Committed: map[string]int64{"sms/0": 30}},
			offsets: map[kafka.TopicPartition]int64{tp(0): 10}, rewound: []Rewind{{Partition: "sms/0", From: 30, To: 10}}},
		{name: "live members", checkpoint: map[kafka.TopicPartition]int64{tp(0): 10},
			group: &kafka.GroupState{Known: true, Info: kafka.GroupInfo{Name: "sms-spark", State: "Stable",
				Members: []kafka.Member{{ClientID: "spark-executor-1"}}}, Commits: map[kafka.TopicPartition]int64{}},
			refusal: &Refusal{Code: RefuseLiveMembers, Group: "sms-spark", Members: []string{"spark-executor-1"}}},
		{name: "group unknown", checkpoint: map[kafka.TopicPartition]int64{tp(0): 10}, group: &kafka.GroupState{},
			refusal: &Refusal{Code: RefuseGroupUnknown}},
		{name: "commits unknown", checkpoint: map[kafka.TopicPartition]int64{tp(0): 10}, group: empty(nil),
			refusal: &Refusal{Code: RefuseCommitsUnread}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planPublish(tt.checkpoint, tt.group, tt.last)
			if !reflect.DeepEqual(p.offsets, tt.offsets) || !reflect.DeepEqual(p.rewound, tt.rewound) ||
				!reflect.DeepEqual(p.held, tt.held) || !reflect.DeepEqual(p.refusal, tt.refusal) {
				t.Fatalf("plan = %+v\nwant offsets %v, rewound %v, held %v, refusal %+v", p, tt.offsets, tt.rewound, tt.held, tt.refusal)
			}
		})
	}
}

// TestPublishRefusalClock: "not committed since" counts from the first refusal while they
// last, whatever their reasons; a commit stops it, and the next refusal starts it again.
func TestPublishRefusalClock(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	// An earlier version's refusal in words: the clock goes on from it.
	p := PublishState{Refused: "sms-spark has 1 live member", Since: t0}
	live := &Refusal{Code: RefuseLiveMembers, Group: "sms-spark", Members: []string{"spark-executor-1"}}
	steps := []struct {
		at      time.Duration
		reason  *Refusal // nil: a commit
		changed bool
		since   time.Duration
	}{
		{0, live, true, 0},
		{time.Minute, live, false, 0},
		{2 * time.Minute, &Refusal{Code: RefuseCluster, Err: "GROUP_AUTHORIZATION_FAILED"}, true, 0},
		{3 * time.Minute, nil, false, -1},
		{4 * time.Minute, live, true, 4 * time.Minute},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		if s.reason == nil {
			p.committed()
			if p.Refusing() || !p.Since.IsZero() {
				t.Fatalf("step %d: a commit left %+v", i+1, p)
			}
			continue
		}
		if changed := p.refuse(*s.reason, now); changed != s.changed || !p.Since.Equal(t0.Add(s.since)) {
			t.Fatalf("step %d: changed %v, since %v; want %v, %v", i+1, changed, p.Since, s.changed, t0.Add(s.since))
		}
	}
}
