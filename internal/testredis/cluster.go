package testredis

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// Cluster is a Redis Cluster, each node a redis-server this package started on a free loopback
// port.
type Cluster struct {
	// URL names every node the way REDIS_URL does for a cluster:
	// redis://127.0.0.1:<port1>?addr=127.0.0.1:<port2>&addr=127.0.0.1:<port3>….
	URL   string
	Addrs []string
	Nodes []*Server
}

// ClusterOptions shape a cluster: Masters (at least 3) with Replicas each, failing a node
// after NodeTimeout (cluster-node-timeout; 2 s when zero).
type ClusterOptions struct {
	Masters, Replicas int
	NodeTimeout       time.Duration
}

// StartCluster starts n redis-servers with --cluster-enabled yes, joins them with
// `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes` (the slots spread evenly over
// them) and waits until every node says cluster_state:ok and knows the others.
func StartCluster(n int) (*Cluster, error) {
	return StartClusterWith(ClusterOptions{Masters: n})
}

// StartClusterWith starts a cluster of o.Masters masters with o.Replicas replicas each
// (`redis-cli --cluster create … --cluster-replicas R`), and waits until every node says
// cluster_state:ok and knows the others, and every replica is in sync with its master.
func StartClusterWith(o ClusterOptions) (*Cluster, error) {
	if o.Masters < 3 {
		return nil, fmt.Errorf("a Redis Cluster needs at least 3 masters, not %d", o.Masters)
	}
	if o.NodeTimeout <= 0 {
		o.NodeTimeout = 2 * time.Second
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, fmt.Errorf("redis-cli not found: install Debian's redis-tools package")
	}
	c := &Cluster{}
	for range o.Masters * (1 + o.Replicas) {
		s, err := Start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(o.NodeTimeout.Milliseconds(), 10))
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	c.URL = "redis://" + c.Addrs[0] + "?addr=" + strings.Join(c.Addrs[1:], "&addr=")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(o.Replicas), "--cluster-yes")
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("redis-cli --cluster create: %w\n%s", err, tail(string(out), 10))
	}
	if err := c.waitOK(ctx, o.Replicas); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitOK polls CLUSTER INFO on every node until each says cluster_state:ok and knows every
// node, and INFO replication on every master until it counts replicas online replicas (those
// WAIT counts).
func (c *Cluster) waitOK(ctx context.Context, replicas int) error {
	want := fmt.Sprintf("cluster_known_nodes:%d", len(c.Nodes))
	for _, s := range c.Nodes {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
		var info string
		var err error
		werr := wait.Until(ctx, time.Minute, "cluster node "+s.Addr+" ok", func() bool {
			info, err = rdb.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, want) {
				return false
			}
			var repl string
			repl, err = rdb.Info(ctx, "replication").Result()
			return err == nil && (strings.Contains(repl, "role:slave") || strings.Count(repl, ",state=online,") == replicas)
		})
		_ = rdb.Close()
		if werr != nil {
			return fmt.Errorf("%w: %v\n%s", werr, err, info)
		}
	}
	return nil
}

// MasterOf is the node that serves key's slot now, as the cluster's nodes say.
func (c *Cluster) MasterOf(ctx context.Context, key string) (*Server, error) {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.liveAddrs(), MaxRetries: -1})
	defer rdb.Close()
	m, err := rdb.MasterForKey(ctx, key)
	if err != nil {
		return nil, err
	}
	for _, s := range c.Nodes {
		if s.Addr == m.Options().Addr {
			return s, nil
		}
	}
	return nil, fmt.Errorf("the master of %q is %s, not a node of this cluster", key, m.Options().Addr)
}

// liveAddrs are the addresses of the nodes that run.
func (c *Cluster) liveAddrs() []string {
	var out []string
	for _, s := range c.Nodes {
		if s.PID() != 0 {
			out = append(out, s.Addr)
		}
	}
	return out
}

// Close stops every node by its PID and removes their directories.
func (c *Cluster) Close() {
	for _, s := range c.Nodes {
		s.Close()
	}
}

// ReplicasOf are the nodes that replicate master now, as its INFO says.
func (c *Cluster) ReplicasOf(ctx context.Context, master *Server) ([]*Server, error) {
	rdb := redis.NewClient(&redis.Options{Addr: master.Addr, MaxRetries: -1})
	defer rdb.Close()
	info, err := rdb.Info(ctx, "replication").Result()
	if err != nil {
		return nil, err
	}
	var out []*Server
	for _, s := range c.Nodes {
		if strings.Contains(info, fmt.Sprintf(",port=%d,", s.Port)) {
			out = append(out, s)
		}
	}
	return out, nil
}
