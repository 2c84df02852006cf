package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// CommitRefusal says why a group refused a standalone commit.
type CommitRefusal string

// The refusals a standalone commit meets.
const (
	// RefusedLiveMembers: the group has members (Kafka accepts a commit without a generation
	// only from outside a group nobody consumes with).
	RefusedLiveMembers CommitRefusal = "live_members"
	// RefusedNotAuthorized: the cluster's ACLs do not let streamwatch commit to the group.
	RefusedNotAuthorized CommitRefusal = "not_authorized"
)

// CommitRefusedError is a standalone commit the cluster refused.
type CommitRefusedError struct {
	Cluster    string
	Group      string
	Refusal    CommitRefusal
	Partitions []TopicPartition // those the broker named; nil when the whole request was refused
	Err        error            // the broker's error
}

func (e *CommitRefusedError) Error() string {
	return fmt.Sprintf("cluster %s: commit to group %s refused: %s (%v)", e.Cluster, e.Group, e.Refusal, e.Err)
}

func (e *CommitRefusedError) Unwrap() error { return e.Err }

// CommitOffsets commits offsets (topic/partition → the next offset to read) to group as a
// standalone commit: no member id, generation -1, as admin tools and Spark's own offset
// committers do. Kafka accepts it only while the group has no members; a refusal is a
// *CommitRefusedError naming why. metadata is stored with every offset. The coordinator is
// asked once more when it moved.
func (cs *Clusters) CommitOffsets(ctx context.Context, cluster, group string, offsets map[TopicPartition]int64, metadata string) error {
	c, err := cs.Cluster(cluster)
	if err != nil {
		return err
	}
	if group == "" || len(offsets) == 0 {
		return fmt.Errorf("cluster %s: a commit needs a group and offsets", cluster)
	}
	cl, err := c.saramaClient()
	if err != nil {
		return err
	}
	ctx, cancel := withDeadline(ctx, c)
	defer cancel()
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	sortTPs(tps)
	refresh := false
	for attempt := 0; ; attempt++ {
		coord, err := c.coordinator(ctx, cl, group, refresh)
		if err != nil {
			return err
		}
		started := time.Now()
		resp, err := await(ctx, func() (*sarama.OffsetCommitResponse, error) {
			// As sarama's admin (AlterConsumerGroupOffsets) builds it, with this call's context.
			req := sarama.NewOffsetCommitRequest(c.cfg, group)
			var at int64
			if req.Version == 1 {
				at = sarama.ReceiveTime
			}
			for _, tp := range tps {
				req.AddBlock(tp.Topic, tp.Partition, offsets[tp], at, metadata)
			}
			return coord.CommitOffset(req)
		})
		if err != nil {
			return c.brokerError(coord, "OffsetCommit", started, err)
		}
		perr := map[sarama.KError][]TopicPartition{}
		for _, tp := range tps {
			kerr := sarama.ErrNoError
			if parts := resp.Errors[tp.Topic]; parts != nil {
				if e, ok := parts[tp.Partition]; ok {
					kerr = e
				}
			} else {
				kerr = sarama.ErrUnknown
			}
			if kerr != sarama.ErrNoError {
				perr[kerr] = append(perr[kerr], tp)
			}
		}
		if len(perr) == 0 {
			return nil
		}
		moved := false
		var errs []error
		for kerr, parts := range perr {
			switch {
			case retriableCoordinatorError(kerr):
				moved = true
			case errors.Is(kerr, sarama.ErrGroupAuthorizationFailed), errors.Is(kerr, sarama.ErrTopicAuthorizationFailed):
				return &CommitRefusedError{Cluster: c.opts.Name, Group: group, Refusal: RefusedNotAuthorized, Partitions: parts, Err: kerr}
			case errors.Is(kerr, sarama.ErrUnknownMemberId), errors.Is(kerr, sarama.ErrIllegalGeneration),
				errors.Is(kerr, sarama.ErrRebalanceInProgress), errors.Is(kerr, sarama.ErrFencedInstancedId):
				return &CommitRefusedError{Cluster: c.opts.Name, Group: group, Refusal: RefusedLiveMembers, Partitions: parts, Err: kerr}
			default:
				errs = append(errs, fmt.Errorf("%s: %w", tpList(parts), kerr))
			}
		}
		if moved && attempt == 0 && len(errs) == 0 {
			refresh = true
			continue
		}
		if moved {
			errs = append(errs, fmt.Errorf("the coordinator of group %s moved", group))
		}
		return c.brokerError(coord, "OffsetCommit", started, errors.Join(errs...))
	}
}

func tpList(tps []TopicPartition) string {
	sort.Slice(tps, func(a, b int) bool {
		if tps[a].Topic != tps[b].Topic {
			return tps[a].Topic < tps[b].Topic
		}
		return tps[a].Partition < tps[b].Partition
	})
	var parts []string
	for _, tp := range tps {
		parts = append(parts, fmt.Sprintf("%s/%d", tp.Topic, tp.Partition))
	}
	return strings.Join(parts, ", ")
}
