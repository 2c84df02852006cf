package pipeline

import (
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
)

// PublishState is what publish_group keeps between rounds.
type PublishState struct {
	Group string `json:"group"`
	// Committed are the offsets streamwatch last committed, by "topic/partition".
	Committed map[string]int64 `json:"committed,omitempty"`
	Batch     int64            `json:"batch"`
	At        time.Time        `json:"at,omitempty"`
	// Refusal is why the last round did not commit (live members, ACLs, a group ahead of the
	// checkpoint), nil when it did or had nothing to do; Since is when the refusals began,
	// whatever their reasons since (the group has not been committed to since then).
	Refusal *Refusal  `json:"refusal,omitempty"`
	Since   time.Time `json:"since,omitempty"`
	// Refused is the refusal as an earlier version stored it, in words; read, never written.
	Refused string `json:"refused,omitempty"`
}

// Refusing says whether the last round refused to commit.
func (p PublishState) Refusing() bool { return p.Refusal != nil || p.Refused != "" }

// RefusalCode says why publish_group did not commit.
type RefusalCode string

// The refusals, with the Refusal fields each uses.
const (
	RefuseGroupUnknown  RefusalCode = "group_unknown"  // the group could not be described this round
	RefuseLiveMembers   RefusalCode = "live_members"   // Group has Members (their client IDs)
	RefuseCommitsUnread RefusalCode = "commits_unread" // the group's commits could not be read
	RefuseCluster       RefusalCode = "cluster"        // the cluster refused the commit: Commit (why), Err (Kafka's error code and message)
	RefuseGroupAhead    RefusalCode = "group_ahead"    // Held: partitions where the group is ahead and streamwatch did not put it there
)

// Refusal is one round's reason not to commit to the publish group.
type Refusal struct {
	Code    RefusalCode `json:"code"`
	Group   string      `json:"group,omitempty"`
	Members []string    `json:"members,omitempty"`
	Err     string      `json:"err,omitempty"`
	Held    []Held      `json:"held,omitempty"`
	// Commit is why the cluster refused (RefuseCluster); "" when an earlier version stored
	// it in words at the start of Err.
	Commit kafka.CommitRefusal `json:"commit,omitempty"`
}

// Held is a partition left alone: the group is at Group, the checkpoint at Checkpoint.
type Held struct {
	Partition  string `json:"partition"`
	Group      int64  `json:"group"`
	Checkpoint int64  `json:"checkpoint"`
}

// refuse records a round's refusal at now and says whether its reason changed. The clock of
// the refusals starts at the first one and runs while they last, whatever their reasons: a
// changed reason is no commit.
func (p *PublishState) refuse(r Refusal, now time.Time) bool {
	if !p.Refusing() {
		p.Since = now
	}
	changed := p.Refusal == nil || !reflect.DeepEqual(*p.Refusal, r)
	p.Refusal, p.Refused = &r, ""
	return changed
}

// committed records a round that committed (or had nothing to commit): the refusals end.
func (p *PublishState) committed() { p.Refusal, p.Refused, p.Since = nil, "", time.Time{} }

// publishPlan is what one round commits to the publish group.
type publishPlan struct {
	offsets map[kafka.TopicPartition]int64
	// rewound are the partitions the checkpoint itself moved back on.
	rewound []Rewind
	// held are the partitions left alone: the group is ahead of the checkpoint, and not
	// because streamwatch put it there.
	held []Held
	// refusal is why nothing may be committed at all (nil when something may).
	refusal *Refusal
}

func tpKey(tp kafka.TopicPartition) string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// planPublish decides what to commit to the publish group: the checkpoint's processed offsets,
// only while the group has no member, never backwards unless the checkpoint itself went back
// below what streamwatch committed (and the group is still where streamwatch left it).
func planPublish(checkpoint map[kafka.TopicPartition]int64, group *kafka.GroupState, last PublishState) publishPlan {
	var p publishPlan
	switch {
	case group == nil || !group.Known:
		p.refusal = &Refusal{Code: RefuseGroupUnknown}
		return p
	case len(group.Info.Members) > 0:
		r := &Refusal{Code: RefuseLiveMembers, Group: group.Info.Name}
		for _, m := range group.Info.Members {
			r.Members = append(r.Members, m.ClientID)
		}
		p.refusal = r
		return p
	case group.Commits == nil:
		p.refusal = &Refusal{Code: RefuseCommitsUnread}
		return p
	}
	tps := make([]kafka.TopicPartition, 0, len(checkpoint))
	for tp := range checkpoint {
		tps = append(tps, tp)
	}
	sort.Slice(tps, func(a, b int) bool { return tpKey(tps[a]) < tpKey(tps[b]) })
	for _, tp := range tps {
		c := checkpoint[tp]
		g, has := group.Commits[tp]
		switch {
		case has && g == c:
		case !has || g < c:
			p.add(tp, c)
		default: // the group is ahead of the checkpoint
			l, mine := last.Committed[tpKey(tp)]
			if mine && g == l && c < l {
				p.add(tp, c)
				p.rewound = append(p.rewound, Rewind{Partition: tpKey(tp), From: l, To: c})
				continue
			}
			p.held = append(p.held, Held{Partition: tpKey(tp), Group: g, Checkpoint: c})
		}
	}
	return p
}

func (p *publishPlan) add(tp kafka.TopicPartition, off int64) {
	if p.offsets == nil {
		p.offsets = map[kafka.TopicPartition]int64{}
	}
	p.offsets[tp] = off
}
