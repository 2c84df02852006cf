package pipeline

import (
	"context"

	"github.com/streamwatch/streamwatch/integrations/kafka"
)

// KafkaLag is what Lags asks the Kafka monitor (kafka.Monitor).
type KafkaLag interface {
	PipelineLag(ctx context.Context, name string) (*kafka.LagReport, error)
	GroupLag(ctx context.Context, cluster, group string, topics ...string) (*kafka.LagReport, error)
	TopicGroups(ctx context.Context, cluster, topic string) (*kafka.GroupsReport, error)
}

// Lags answers the lag and groups commands as the diagnosis does, through the pipeline: a
// pipeline's group and topics (or a group's) with their offsets, lag and status, and every
// group on a topic, as data for commands/render_kafka.go.
type Lags struct {
	Kafka KafkaLag
}

// PipelineLag is the lag report of a pipeline's documented group on its topics.
func (l *Lags) PipelineLag(ctx context.Context, name string) (*kafka.LagReport, error) {
	return l.Kafka.PipelineLag(ctx, name)
}

// GroupLag is the lag report of any group on the topics given.
func (l *Lags) GroupLag(ctx context.Context, cluster, group string, topics ...string) (*kafka.LagReport, error) {
	return l.Kafka.GroupLag(ctx, cluster, group, topics...)
}

// TopicGroups is every group consuming a topic.
func (l *Lags) TopicGroups(ctx context.Context, cluster, topic string) (*kafka.GroupsReport, error) {
	return l.Kafka.TopicGroups(ctx, cluster, topic)
}
