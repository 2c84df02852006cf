package kafka

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// Retention is how long (and how much) a topic keeps records before deleting them.
type Retention struct {
	// Time is retention.ms (0: forever, -1 in Kafka); Bytes retention.bytes per partition (0:
	// no limit).
	Time  time.Duration
	Bytes int64
	// Compacted topics (cleanup.policy without delete) keep each key's latest record whatever
	// its age: retention does not delete unread records by age.
	Compacted bool
}

// TopicRetention reads the retention of topics on the named cluster with one
// DescribeConfigs request to any broker (topic configs are the same on every broker).
func (cs *Clusters) TopicRetention(ctx context.Context, cluster string, topics ...string) (map[string]Retention, error) {
	c, err := cs.Cluster(cluster)
	if err != nil {
		return nil, err
	}
	cl, err := c.saramaClient()
	if err != nil {
		return nil, err
	}
	req := &sarama.DescribeConfigsRequest{Version: 1}
	for _, t := range topics {
		req.Resources = append(req.Resources, &sarama.ConfigResource{Type: sarama.TopicResource, Name: t,
			ConfigNames: []string{"retention.ms", "retention.bytes", "cleanup.policy"}})
	}
	res, err := await(ctx, func() (*sarama.DescribeConfigsResponse, error) {
		b := cl.LeastLoadedBroker()
		if b == nil {
			return nil, fmt.Errorf("no broker of cluster %s is reachable", cluster)
		}
		c.openBroker(b)
		return b.DescribeConfigs(req)
	})
	if err != nil {
		return nil, c.clusterError(err, 0)
	}
	out := map[string]Retention{}
	for _, r := range res.Resources {
		if r.ErrorCode != 0 {
			continue // an unknown topic: its retention is not known
		}
		var ret Retention
		for _, e := range r.Configs {
			switch e.Name {
			case "retention.ms":
				if ms, err := strconv.ParseInt(e.Value, 10, 64); err == nil && ms > 0 {
					ret.Time = time.Duration(ms) * time.Millisecond
				}
			case "retention.bytes":
				if n, err := strconv.ParseInt(e.Value, 10, 64); err == nil && n > 0 {
					ret.Bytes = n
				}
			case "cleanup.policy":
				ret.Compacted = !strings.Contains(e.Value, "delete")
			}
		}
		out[r.Name] = ret
	}
	return out, nil
}
