// Package testredis gives tests a real redis-server: the one REDIS_URL names, or a throwaway
// server started on a free loopback port for the test binary's lifetime. It also starts servers
// that need a password, serve TLS only (StartTLS), replicate another (StartReplica), form a
// Redis Cluster with or without replicas (StartCluster, StartClusterWith), or stand behind
// Sentinels (StartSentinels).
package testredis

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/internal/logbuf"
	"github.com/streamwatch/streamwatch/internal/wait"
)

var (
	once    sync.Once
	shared  string
	initErr error
)

// URL returns the address of a Redis server for tests: REDIS_URL when set, else a server this
// process starts once (stopped by its PID when the test binary exits via Cleanup of the caller's
// TestMain, or by the OS when the process dies since it runs in our process group).
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	once.Do(func() {
		var s *Server
		s, initErr = Start()
		if initErr == nil {
			shared = s.URL
		}
	})
	if initErr != nil {
		t.Fatalf("redis for tests: %v", initErr)
	}
	return shared
}

// Client returns a client of the test server and a key prefix unique to the test, so that tests
// sharing one server never see each other's keys. REDIS_URL must name one server; see
// UniversalClient for tests that also run against a cluster.
func Client(t testing.TB) (*redis.Client, string) {
	t.Helper()
	opt, err := redis.ParseURL(URL(t))
	if err != nil {
		t.Fatalf("parse redis url (a cluster's REDIS_URL needs testredis.UniversalClient): %v", err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c, Prefix()
}

// UniversalClient is Client built the way the bot builds its own (config.LoadSecrets): REDIS_URL
// may name a cluster (the client is then a *redis.ClusterClient), and a rediss:// server is
// verified with REDIS_TLS_CA_FILE when that is set.
func UniversalClient(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	env := map[string]string{config.EnvRedisURL: URL(t), config.EnvRedisTLSCAFile: os.Getenv(config.EnvRedisTLSCAFile)}
	sec, err := config.LoadSecrets(func(k string) string { return env[k] }, config.SecretNeeds{Redis: true})
	if err != nil {
		t.Fatalf("redis for tests: %v", err)
	}
	c := redis.NewUniversalClient(sec.Redis)
	t.Cleanup(func() { _ = c.Close() })
	return c, Prefix()
}

// Prefix returns a fresh random key prefix.
func Prefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "t" + hex.EncodeToString(b)
}

// Server is a redis-server process this package started.
type Server struct {
	URL  string // redis://127.0.0.1:<port>/0, or rediss://… for StartTLS
	Addr string
	Port int
	// CAFile is, for StartTLS, the PEM certificate of the throwaway CA that signed the server's
	// certificate: what REDIS_TLS_CA_FILE must name.
	CAFile string
	cmd    *exec.Cmd
	exited chan struct{}  // closed when cmd has exited
	out    *logbuf.Buffer // cmd's stdout and stderr (configuration errors come before the log file)
	dir    string
	bin    string // redis-server, or redis-sentinel
	args   []string
	tls    *tls.Config // how waitReady reaches a TLS server
	// ready is the log line that says the process is ready; readyLines counts those lines
	// before the newest launch (Restart appends to the same log).
	ready      string
	readyLines int
}

const readyLine = "Ready to accept connections"

// Start runs redis-server on a loopback port and waits until it is ready. extra are more
// redis-server arguments, such as "--requirepass", "pw".
func Start(extra ...string) (*Server, error) {
	return start(func(s *Server) ([]string, error) {
		return append([]string{"--port", strconv.Itoa(s.Port)}, extra...), nil
	})
}

// start runs redis-server on a loopback port with the arguments listen returns; listen may
// also set the server's URL and TLS settings.
//
// redis-server cannot be given port 0 (it means "no TCP"), so the kernel cannot pick its port
// the way it picks a Go listener's: start takes a port nothing listens on, and when another
// process binds it first (redis-server then says "Address already in use" and exits), it
// starts again on another. A server counts as ready only once its own log says so, so that
// something else answering on the port is never taken for it.
func start(listen func(s *Server) ([]string, error)) (*Server, error) {
	return startProcess("redis-server", readyLine, func(s *Server) ([]string, error) {
		args, err := listen(s)
		if err != nil {
			return nil, err
		}
		// A replica that attaches gets its first copy at once, not after the 5 s a primary
		// waits by default for more replicas to share one transfer.
		return append([]string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0",
			"--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log")}, args...), nil
	})
}

// startProcess runs bin (redis-server or redis-sentinel) with the arguments args returns, and
// waits until its log says ready; it tries another port when the one it picked is taken.
func startProcess(bin, ready string, args func(s *Server) ([]string, error)) (*Server, error) {
	if _, err := exec.LookPath(bin); err != nil {
		// The Debian packages are named after their binaries.
		return nil, fmt.Errorf("%s not found: install Debian's %s package (apt-get install %s; scripts/with-redis does when run as root)", bin, bin, bin)
	}
	for attempt := 1; ; attempt++ {
		s, err := startOnce(bin, ready, args)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == 10 {
			return s, err
		}
	}
}

// errPortTaken is a server that found its port taken.
var errPortTaken = errors.New("port taken")

func startOnce(bin, ready string, listen func(s *Server) ([]string, error)) (*Server, error) {
	port, err := unusedPort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "testredis")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, dir: dir, bin: bin, ready: ready}
	s.URL = "redis://" + s.Addr + "/0"
	args, err := listen(s)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.args = args
	if err := s.launch(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitReady(10 * time.Second); err != nil {
		if strings.Contains(s.Log(), "Address already in use") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		s.Close()
		return nil, err
	}
	return s, nil
}

// launch starts the server process with s.args.
func (s *Server) launch() error {
	bin, err := exec.LookPath(s.bin)
	if err != nil {
		return err
	}
	s.readyLines = strings.Count(s.Log(), s.ready)
	s.out = &logbuf.Buffer{}
	s.cmd = command(bin, s.args)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	s.exited = exited
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(exited) }(s.cmd)
	return nil
}

// PID is the server process's id (0 when it is stopped).
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Stop kills the server by its PID and waits until it has exited.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Pause stops the server (SIGSTOP by its PID): it keeps its connections but answers nothing
// (a replica reads no more of its primary's stream) until Resume.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume lets a paused server run again (SIGCONT).
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	if s.cmd == nil || s.cmd.Process == nil {
		return fmt.Errorf("%s on %s is not running", s.bin, s.Addr)
	}
	return s.cmd.Process.Signal(sig)
}

// Restart starts the server again on the same port with the same arguments.
func (s *Server) Restart() error {
	s.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := s.launch(); err != nil {
			return err
		}
		if err := s.waitReady(3 * time.Second); err == nil {
			return nil
		}
		s.Stop()
		if time.Now().After(deadline) {
			return fmt.Errorf("restart %s on %s: not ready", s.bin, s.Addr)
		}
	}
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.Stop()
	_ = os.RemoveAll(s.dir)
}

// Log returns what the server wrote: its output and its log file.
func (s *Server) Log() string {
	var b strings.Builder
	if s.out != nil {
		b.WriteString(s.out.String())
	}
	if l, err := os.ReadFile(filepath.Join(s.dir, "redis.log")); err == nil {
		b.Write(l)
	}
	return b.String()
}

func (s *Server) waitReady(limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, TLSConfig: s.tls, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	var last error
	exited := false
	err := wait.Until(context.Background(), limit, s.bin+" on "+s.Addr+" becoming ready", func() bool {
		select {
		case <-s.exited:
			exited = true
			return true
		default:
		}
		// Its own log, not just an answer on the port: that could come from another process.
		if strings.Count(s.Log(), s.ready) <= s.readyLines {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		last = c.Ping(ctx).Err()
		return last == nil || answers(last)
	})
	switch {
	case exited:
		return fmt.Errorf("%s on %s exited: %w", s.bin, s.Addr, errors.New(tail(s.Log(), 5)))
	case err != nil:
		return fmt.Errorf("%w (last ping: %v)\n%s", err, last, tail(s.Log(), 5))
	}
	return nil
}

// answers is true for the replies of a server that is up but wants credentials (started with
// --requirepass or ACL users).
func answers(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "NOAUTH") || strings.HasPrefix(msg, "WRONGPASS")
}

// command builds the server's command; the server dies with the test binary, so no stray
// redis-server outlives a test run.
func command(bin string, args []string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// unusedPort is a loopback TCP port nothing listens on now, as the kernel picks it; another
// process may take it before redis-server binds it (start notices). Tests replace it.
var unusedPort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last n non-empty lines of s.
func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
