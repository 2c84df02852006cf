// Package testredis gives tests a real redis-server: the one REDIS_URL names, or a throwaway
// server started on a free loopback port for the test binary's lifetime.
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
// sharing one server never see each other's keys.
func Client(t testing.TB) (*redis.Client, string) {
	t.Helper()
	opt, err := redis.ParseURL(URL(t))
	if err != nil {
		t.Fatalf("parse redis url: %v", err)
	}
	c := redis.NewClient(opt)
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
	URL  string
	Addr string
	Port int
	cmd  *exec.Cmd
	dir  string
	args []string
}

// Start runs redis-server on a free loopback port and waits until it answers PING.
func Start(extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found: install Debian's redis-server package (apt-get install redis-server) or set REDIS_URL")
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "testredis")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, dir: dir}
	s.URL = "redis://" + s.Addr + "/0"
	s.args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log")}, extra...)
	s.cmd = command(bin, s.args)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	go func() { _ = s.cmd.Wait() }()
	if err := s.waitReady(10 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop kills the server by its PID.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	s.cmd = nil
}

// Restart starts the server again on the same port with the same arguments.
func (s *Server) Restart() error {
	s.Stop()
	bin, _ := exec.LookPath("redis-server")
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.cmd = command(bin, s.args)
		if err := s.cmd.Start(); err != nil {
			return err
		}
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		if err := s.waitReady(3 * time.Second); err == nil {
			return nil
		}
		_ = s.cmd.Process.Kill()
		<-done
		if time.Now().After(deadline) {
			return fmt.Errorf("restart redis-server on %s: not ready", s.Addr)
		}
	}
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.Stop()
	_ = os.RemoveAll(s.dir)
}

func (s *Server) waitReady(limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not ready: %w", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, bounded by the deadline
	}
}

// command builds the server's command; the server dies with the test binary, so no stray
// redis-server outlives a test run.
func command(bin string, args []string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// FreePort asks the kernel for a free loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
