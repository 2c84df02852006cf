package testredis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// gone reports whether the process pid has exited (and been reaped).
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestStartWithPassword(t *testing.T) {
	s, err := Start("--requirepass", "pw-1", "--user", "alice", "on", ">alice-pw", "~*", "&*", "+@all")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, o := range []*redis.Options{{Addr: s.Addr, Password: "pw-1"}, {Addr: s.Addr, Username: "alice", Password: "alice-pw"}} {
		c := redis.NewClient(o)
		if err := c.Ping(ctx).Err(); err != nil {
			t.Errorf("user %q: %v", o.Username, err)
		}
		_ = c.Close()
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: "wrong", MaxRetries: -1})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v, want WRONGPASS", err)
	}
}

func TestStartTLS(t *testing.T) {
	s, err := StartTLS()
	if errors.Is(err, ErrNoTLS) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	pem, err := os.ReadFile(s.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) || !strings.HasPrefix(s.URL, "rediss://127.0.0.1:") {
		t.Fatalf("CAFile %s, URL %s", s.CAFile, s.URL)
	}
	opt, err := redis.ParseURL(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.TLSConfig.RootCAs = roots
	ctx := context.Background()
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING over TLS trusting the CA: %v", err)
	}
	_ = c.Close()
	untrusted := redis.NewClient(&redis.Options{Addr: s.Addr, TLSConfig: &tls.Config{ServerName: "127.0.0.1"}, MaxRetries: -1})
	defer untrusted.Close()
	var unknown x509.UnknownAuthorityError
	if err := untrusted.Ping(ctx).Err(); !errors.As(err, &unknown) {
		t.Fatalf("PING without the CA: %v, want an unknown authority error", err)
	}
	plain := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: time.Second})
	defer plain.Close()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Fatal("PING without TLS answered: the server is not TLS-only")
	}
	s.Close()
	if !gone(pid) {
		t.Fatalf("redis-server %d still runs after Close", pid)
	}
}

func TestStartCluster(t *testing.T) {
	c, err := StartCluster(3)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, n := range c.Nodes {
		pids = append(pids, n.PID())
	}
	want := "redis://" + c.Addrs[0] + "?addr=" + c.Addrs[1] + "&addr=" + c.Addrs[2]
	if c.URL != want {
		t.Fatalf("URL %q, want %q", c.URL, want)
	}
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	ctx := context.Background()
	for i := range 30 {
		if err := rdb.Set(ctx, "k"+string(rune('a'+i)), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var masters atomic.Int32 // ForEachMaster calls its function concurrently
	if err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		if n, err := m.DBSize(ctx).Result(); err != nil || n == 0 {
			t.Errorf("master %s holds %d keys (%v)", m.Options().Addr, n, err)
		}
		masters.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = rdb.Close()
	if n := masters.Load(); n != 3 {
		t.Fatalf("%d masters, want 3", n)
	}
	c.Close()
	for _, pid := range pids {
		if !gone(pid) {
			t.Fatalf("redis-server %d still runs after Close", pid)
		}
	}
}

func TestUniversalClientFollowsClusterURL(t *testing.T) {
	c, err := StartCluster(3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Setenv("REDIS_URL", c.URL)
	rdb, prefix := UniversalClient(t)
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		t.Fatalf("UniversalClient for a cluster URL is a %T, want *redis.ClusterClient", rdb)
	}
	if err := rdb.Set(context.Background(), "{"+prefix+"}:x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestStartOnATakenPort: when the port start picked is taken before redis-server binds it,
// start starts it again on another port, and never takes the other process for its server.
func TestStartOnATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	picks := 0
	pick := unusedPort
	unusedPort = func() (int, error) {
		picks++
		if picks == 1 {
			return taken.Addr().(*net.TCPAddr).Port, nil
		}
		return pick()
	}
	defer func() { unusedPort = pick }()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if picks != 2 || s.Addr == taken.Addr().String() {
		t.Fatalf("%d picks, server on %s (the taken port is %s)", picks, s.Addr, taken.Addr())
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestStartSentinels: a primary with two replicas behind three Sentinels; the URL names the
// Sentinels and the master; when the primary is killed, the Sentinels promote a replica, and
// Close stops every process.
func TestStartSentinels(t *testing.T) {
	began := time.Now()
	set, err := StartSentinels(2, 3)
	t.Logf("started in %v", time.Since(began))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, s := range append(append([]*Server{set.Primary}, set.Replicas...), set.Sentinels...) {
		pids = append(pids, s.PID())
	}
	want := "redis+sentinel://" + set.Sentinels[0].Addr + "," + set.Sentinels[1].Addr + "," + set.Sentinels[2].Addr + "/mymaster"
	if set.URL != want {
		t.Fatalf("URL %q, want %q", set.URL, want)
	}
	ctx := context.Background()
	if addr, err := set.PrimaryAddr(ctx); err != nil || addr != set.Primary.Addr {
		t.Fatalf("primary %q (%v), want %s", addr, err, set.Primary.Addr)
	}
	set.Primary.Stop()
	killed := time.Now()
	var promoted string
	wait.For(t, 30*time.Second, "a replica promoted", func() bool {
		promoted, _ = set.PrimaryAddr(ctx)
		return promoted != "" && promoted != set.Primary.Addr
	})
	t.Logf("promoted %v after the kill", time.Since(killed))
	if set.Node(promoted) == nil {
		t.Fatalf("promoted %s, not one of the replicas", promoted)
	}
	set.Close()
	for _, pid := range pids {
		if !gone(pid) {
			t.Fatalf("process %d still runs after Close", pid)
		}
	}
}

// TestStartClusterWithReplicas: three masters with a replica each; the master of a key is
// found, and once it is killed its replica takes its slots over.
func TestStartClusterWithReplicas(t *testing.T) {
	c, err := StartClusterWith(ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes", len(c.Nodes))
	}
	ctx := context.Background()
	m, err := c.MasterOf(ctx, "{x}")
	if err != nil {
		t.Fatal(err)
	}
	m.Stop()
	wait.For(t, 30*time.Second, "the replica serving the slot", func() bool {
		n, err := c.MasterOf(ctx, "{x}")
		if err != nil || n == m {
			return false
		}
		rdb := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
		defer rdb.Close()
		return rdb.Set(ctx, "{x}", "1", 0).Err() == nil
	})
}
