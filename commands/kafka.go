package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/kafka"
)

// Lag is what the lag and groups commands need (pipeline.Lags).
type Lag interface {
	PipelineLag(ctx context.Context, name string) (*kafka.LagReport, error)
	GroupLag(ctx context.Context, cluster, group string, topics ...string) (*kafka.LagReport, error)
	TopicGroups(ctx context.Context, cluster, topic string) (*kafka.GroupsReport, error)
}

// RegisterKafka adds `lag` and `groups`.
func (h *Handler) RegisterKafka(l Lag) {
	h.Register(&Command{Path: "lag", Args: "PIPELINE | GROUP TOPIC [--cluster NAME]",
		Summary: "offsets, lag in records and time, group state and status", Min: 1, Max: 4,
		Example: "lag sms-replies", Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			cluster, rest, err := clusterFlag(args)
			if err != nil || len(rest) == 0 || len(rest) > 2 || (len(rest) == 1 && cluster != "") {
				return Reply{}, lagUsage([]string{h.find("lag").Usage(h.Name)})
			}
			var r *kafka.LagReport
			if len(rest) == 1 {
				r, err = l.PipelineLag(ctx, rest[0])
			} else {
				r, err = l.GroupLag(ctx, cluster, rest[0], rest[1])
			}
			if r == nil {
				return Reply{}, err
			}
			return lagReply(r, err), nil
		}})
	h.Register(&Command{Path: "groups", Args: "TOPIC [--cluster NAME]",
		Summary: "every group consuming a topic: state, members, lag, commit movement", Min: 1, Max: 3,
		Example: "groups client.replies.sms", Run: func(ctx context.Context, _ Request, args []string) (Reply, error) {
			cluster, rest, err := clusterFlag(args)
			if err != nil || len(rest) != 1 {
				return Reply{}, groupsUsage([]string{h.find("groups").Usage(h.Name)})
			}
			r, err := l.TopicGroups(ctx, cluster, rest[0])
			if r == nil {
				return Reply{}, err
			}
			return groupsReply(rest[0], r), nil
		}})
}

// clusterFlag takes "--cluster NAME" (or --cluster=NAME) out of args.
func clusterFlag(args []string) (string, []string, error) {
	var cluster string
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--cluster":
			if i+1 >= len(args) {
				return "", nil, errors.New("--cluster needs a name")
			}
			cluster = args[i+1]
			i++
		case strings.HasPrefix(a, "--cluster="):
			cluster = strings.TrimPrefix(a, "--cluster=")
		case strings.HasPrefix(a, "--"):
			return "", nil, fmt.Errorf("unknown flag %s", a)
		default:
			rest = append(rest, a)
		}
	}
	return cluster, rest, nil
}
