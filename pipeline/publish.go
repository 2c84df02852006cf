package pipeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/internal/human"
)

// PublishState is what publish_group keeps between rounds.
type PublishState struct {
	Group string `json:"group"`
	// Committed are the offsets streamwatch last committed, by "topic/partition".
	Committed map[string]int64 `json:"committed,omitempty"`
	Batch     int64            `json:"batch"`
	At        time.Time        `json:"at,omitempty"`
	// Refused is why the last round did not commit (live members, ACLs, a group ahead of the
	// checkpoint), "" when it did or had nothing to do; Since is when the refusals began,
	// whatever their reasons since (the group has not been committed to since then).
	Refused string    `json:"refused,omitempty"`
	Since   time.Time `json:"since,omitempty"`
}

// refuse records a round's refusal at now and says whether its reason changed. The clock of
// the refusals starts at the first one and runs while they last, whatever their reasons: a
// changed reason is no commit.
func (p *PublishState) refuse(reason string, now time.Time) bool {
	if p.Refused == "" {
		p.Since = now
	}
	changed := p.Refused != reason
	p.Refused = reason
	return changed
}

// publishPlan is what one round commits to the publish group.
type publishPlan struct {
	offsets map[kafka.TopicPartition]int64
	// rewound are the partitions the checkpoint itself moved back on.
	rewound []Rewind
	// held are the partitions left alone: the group is ahead of the checkpoint, and not
	// because streamwatch put it there.
	held []string
	// refusal is why nothing may be committed at all ("" when something may).
	refusal string
}

func tpKey(tp kafka.TopicPartition) string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// planPublish decides what to commit to the publish group: the checkpoint's processed offsets,
// only while the group has no member, never backwards unless the checkpoint itself went back
// below what streamwatch committed (and the group is still where streamwatch left it).
func planPublish(checkpoint map[kafka.TopicPartition]int64, group *kafka.GroupState, last PublishState) publishPlan {
	var p publishPlan
	switch {
	case group == nil || !group.Known:
		p.refusal = "the group could not be described this round (its members are unknown)"
		return p
	case len(group.Info.Members) > 0:
		var clients []string
		for _, m := range group.Info.Members {
			clients = append(clients, m.ClientID)
		}
		p.refusal = fmt.Sprintf("%s has %s (%s): streamwatch commits only to a group nobody consumes with",
			group.Info.Name, human.Count(len(group.Info.Members), "live member"), strings.Join(clients, ", "))
		return p
	case group.Commits == nil:
		p.refusal = "the group's commits could not be read this round"
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
			p.held = append(p.held, fmt.Sprintf("%s (group at %d, checkpoint at %d)", tpKey(tp), g, c))
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
