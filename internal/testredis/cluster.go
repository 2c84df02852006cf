package testredis

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// Cluster is a Redis Cluster of masters without replicas, each a redis-server this package
// started on a free loopback port.
type Cluster struct {
	// URL names every node the way REDIS_URL does for a cluster:
	// redis://127.0.0.1:<port1>?addr=127.0.0.1:<port2>&addr=127.0.0.1:<port3>.
	URL   string
	Addrs []string
	Nodes []*Server
}

// StartCluster starts n redis-servers with --cluster-enabled yes, joins them with
// `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes` (the slots spread evenly over
// them) and waits until every node says cluster_state:ok and knows the others.
func StartCluster(n int) (*Cluster, error) {
	if n < 3 {
		return nil, fmt.Errorf("a Redis Cluster needs at least 3 masters, not %d", n)
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli not found: install Debian's redis-tools package")
	}
	c := &Cluster{}
	for range n {
		s, err := Start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000")
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	c.URL = "redis://" + c.Addrs[0] + "?addr=" + strings.Join(c.Addrs[1:], "&addr=")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	out, err := exec.CommandContext(ctx, cli, append(args, "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, tail(string(out), 10))
	}
	if err := c.waitOK(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitOK polls CLUSTER INFO on every node until each says cluster_state:ok and knows every node.
func (c *Cluster) waitOK(ctx context.Context) error {
	want := fmt.Sprintf("cluster_known_nodes:%d", len(c.Nodes))
	for _, s := range c.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
		var info string
		var err error
		werr := wait.Until(ctx, time.Minute, "cluster node "+s.Addr+" ok", func() bool {
			info, err = rdb.ClusterInfo(ctx).Result()
			return err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, want)
		})
		_ = rdb.Close()
		if werr != nil {
			return fmt.Errorf("%w: %v\n%s", werr, err, info)
		}
	}
	return nil
}

// Close stops every node by its PID and removes their directories.
func (c *Cluster) Close() {
	for _, s := range c.Nodes {
		s.Close()
	}
}
