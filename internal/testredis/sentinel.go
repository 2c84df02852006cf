package testredis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// StartReplica starts a redis-server that replicates s (--replicaof) and waits until s counts
// it as an online replica, one that WAIT counts. extra are more redis-server arguments.
func (s *Server) StartReplica(extra ...string) (*Server, error) {
	r, err := Start(append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(s.Port)}, extra...)...)
	if err != nil {
		return nil, err
	}
	if err := s.WaitReplicaOnline(r, 30*time.Second); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// StartReplicated starts a primary and one replica of it, both closed when tb ends.
func StartReplicated(tb testing.TB) (primary, replica *Server) {
	tb.Helper()
	primary, err := Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(primary.Close)
	replica, err = primary.StartReplica()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(replica.Close)
	return primary, replica
}

// WaitReplicaOnline waits until the primary s lists r as an online replica: after the first
// copy, a primary counts a replica only once it has acknowledged it (within a second).
func (s *Server) WaitReplicaOnline(r *Server, within time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	var info string
	online := fmt.Sprintf("port=%d,state=online", r.Port)
	err := wait.Until(context.Background(), within, "replica "+r.Addr+" online", func() bool {
		info, _ = c.Info(context.Background(), "replication").Result()
		return strings.Contains(info, online)
	})
	if err != nil {
		return fmt.Errorf("%w\n%s", err, info)
	}
	return nil
}

// MasterName is the name the Sentinels of StartSentinels monitor their primary by.
const MasterName = "mymaster"

// Sentinels is a primary with replicas behind Redis Sentinels, each a process this package
// started on a loopback port: what a Sentinel deployment (the usual Helm chart) looks like.
type Sentinels struct {
	// URL names the Sentinels and the master the way REDIS_URL does:
	// redis+sentinel://127.0.0.1:<s1>,127.0.0.1:<s2>,127.0.0.1:<s3>/mymaster.
	URL       string
	Primary   *Server   // the first primary; after a failover, see PrimaryAddr
	Replicas  []*Server // its replicas
	Sentinels []*Server // the redis-sentinel processes
}

// SentinelDownAfter is how long the Sentinels of StartSentinels wait before they call an
// unanswering primary down (down-after-milliseconds).
const SentinelDownAfter = time.Second

// StartSentinels starts a primary, replicas replicating it and sentinels Sentinels monitoring
// it (quorum: a majority), with down-after-milliseconds 1000 and failover-timeout 3000, and
// waits until every Sentinel knows the replicas and the other Sentinels, so that a failover can
// start as soon as the primary stops answering.
func StartSentinels(replicas, sentinels int) (*Sentinels, error) {
	if sentinels < 1 {
		return nil, fmt.Errorf("%d sentinels", sentinels)
	}
	set := &Sentinels{}
	fail := func(err error) (*Sentinels, error) {
		set.Close()
		return nil, err
	}
	p, err := Start()
	if err != nil {
		return fail(err)
	}
	set.Primary = p
	for range replicas {
		r, err := p.StartReplica()
		if err != nil {
			return fail(err)
		}
		set.Replicas = append(set.Replicas, r)
	}
	var addrs []string
	for range sentinels {
		s, err := startSentinel(p.Port, sentinels/2+1)
		if err != nil {
			return fail(err)
		}
		set.Sentinels = append(set.Sentinels, s)
		addrs = append(addrs, s.Addr)
	}
	set.URL = "redis+sentinel://" + strings.Join(addrs, ",") + "/" + MasterName
	for _, s := range set.Sentinels {
		if err := s.waitSentinelKnows(replicas, sentinels-1); err != nil {
			return fail(err)
		}
	}
	return set, nil
}

// startSentinel runs redis-sentinel with a configuration file of its own (Sentinels rewrite
// theirs) monitoring the primary on port.
func startSentinel(port, quorum int) (*Server, error) {
	return startProcess("redis-sentinel", "+monitor master "+MasterName, func(s *Server) ([]string, error) {
		conf := filepath.Join(s.dir, "sentinel.conf")
		text := fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
logfile %s
sentinel monitor %s 127.0.0.1 %d %d
sentinel down-after-milliseconds %s %d
sentinel failover-timeout %s 3000
`, s.Port, s.dir, filepath.Join(s.dir, "redis.log"), MasterName, port, quorum, MasterName, SentinelDownAfter.Milliseconds(), MasterName)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, err
		}
		return []string{conf}, nil
	})
}

// waitSentinelKnows waits until the Sentinel s knows replicas replicas and others other
// Sentinels of the master (they find each other through the primary every 2 s).
func (s *Server) waitSentinelKnows(replicas, others int) error {
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	var m map[string]string
	err := wait.Until(context.Background(), 30*time.Second, "sentinel "+s.Addr+" knowing the replicas and the other sentinels", func() bool {
		var err error
		m, err = c.Master(context.Background(), MasterName).Result()
		return err == nil && m["num-slaves"] == strconv.Itoa(replicas) && m["num-other-sentinels"] == strconv.Itoa(others)
	})
	if err != nil {
		return fmt.Errorf("%w: %v\n%s", err, m, tail(s.Log(), 10))
	}
	return nil
}

// PrimaryAddr is the primary's address as a Sentinel that answers says it.
func (set *Sentinels) PrimaryAddr(ctx context.Context) (string, error) {
	var errs []error
	for _, s := range set.Sentinels {
		if s.PID() == 0 {
			continue
		}
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
		addr, err := c.GetMasterAddrByName(ctx, MasterName).Result()
		_ = c.Close()
		if err == nil && len(addr) == 2 {
			return addr[0] + ":" + addr[1], nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("no sentinel names the primary: %w", errors.Join(errs...))
}

// Node is the data node (primary or replica) listening on addr, nil when none is.
func (set *Sentinels) Node(addr string) *Server {
	for _, s := range append([]*Server{set.Primary}, set.Replicas...) {
		if s != nil && s.Addr == addr {
			return s
		}
	}
	return nil
}

// Close stops every process by its PID and removes their directories.
func (set *Sentinels) Close() {
	for _, s := range set.Sentinels {
		s.Close()
	}
	for _, s := range set.Replicas {
		s.Close()
	}
	if set.Primary != nil {
		set.Primary.Close()
	}
}

// Role is what the server says it is now: "master" or "slave".
func (s *Server) Role(ctx context.Context) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(info, "\n") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(l), "role:"); ok {
			return r, nil
		}
	}
	return "", fmt.Errorf("%s: INFO replication has no role", s.Addr)
}

// Promoted is the replica that has become the primary, nil while none has.
func (set *Sentinels) Promoted(ctx context.Context) *Server {
	for _, r := range set.Replicas {
		if role, err := r.Role(ctx); err == nil && role == "master" {
			return r
		}
	}
	return nil
}
