package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// process is a server this program started. It is stopped by its PID, never by name.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	log     *os.File
	done    chan struct{}
}

func startProcess(name, logPath string, env []string, bin string, args ...string) (*process, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, log: f, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, and SIGKILL when the process is still there after grace. It reports
// whether the process had to be killed.
func (p *process) stop(grace time.Duration) (killed bool) {
	defer p.log.Close()
	if p.exited() {
		return false
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return false
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	return true
}

// logTail is the end of what the process wrote, for error messages.
func (p *process) logTail(lines int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// memory reads the resident set (VmRSS) and its peak (VmHWM) of a process, in KiB.
func memory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss, _ = strconv.ParseInt(f[1], 10, 64)
		case "VmHWM:":
			hwm, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	if rss == 0 || hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status has no VmRSS/VmHWM", pid)
	}
	return rss, hwm, nil
}

// cpuTime is the CPU time (user + system) a process has used, from /proc/<pid>/stat. Linux
// counts it in USER_HZ ticks, 100 per second on every architecture Go supports.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after it start at state (field 3).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// selfCPU is the CPU time this process has used: during a load run, that is Slack's fake.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitHTTP polls url until it answers 200, the process exits or limit passes.
func waitHTTP(ctx context.Context, p *process, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			var body bytes.Buffer
			_, _ = body.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(body.String()))
		} else {
			last = err.Error()
		}
		if p.exited() {
			return fmt.Errorf("%s exited before %s answered 200:\n%s", p.name, url, p.logTail(20))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: %s did not answer 200 within %v (last: %s):\n%s", p.name, url, limit, last, p.logTail(20))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// redisArgs is how the benchmark runs redis-server: persisted as production runs it, every
// write appended to a file that is fsync'ed once a second.
var redisArgs = []string{"--save", "", "--appendonly", "yes", "--appendfsync", "everysec"}

// redisSetup says how redis-server runs, for RESULTS.md.
const redisSetup = "loopback, `appendonly yes`, `appendfsync everysec`, no RDB snapshots"

// redisServer is a throwaway redis-server on a free loopback port, with persistence as
// production has it (redisArgs).
type redisServer struct {
	*process
	url    string
	client *redis.Client
}

// startRedis starts a redis-server; extra are more of its arguments (--replicaof …).
func startRedis(ctx context.Context, dir, tag string, extra ...string) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server not found: install Debian's redis-server package (apt-get install redis-server)")
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, tag)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	args := append(append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", data}, redisArgs...), extra...)
	p, err := startProcess("redis-server", filepath.Join(dir, tag+".log"), os.Environ(), bin, args...)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	r := &redisServer{process: p, url: "redis://" + addr + "/0",
		client: redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})}
	deadline := time.Now().Add(10 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := r.client.Ping(pctx).Err()
		cancel()
		if err == nil {
			return r, nil
		}
		if p.exited() || time.Now().After(deadline) {
			r.close()
			return nil, fmt.Errorf("redis-server on %s did not answer PING: %v\n%s", addr, err, p.logTail(10))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// port is the server's port, as its URL says.
func (r *redisServer) port() string {
	hostPort := strings.TrimSuffix(strings.TrimPrefix(r.url, "redis://"), "/0")
	return hostPort[strings.LastIndex(hostPort, ":")+1:]
}

func (r *redisServer) close() {
	_ = r.client.Close()
	r.stop(5 * time.Second)
}

// usedMemory is redis-server's used_memory (INFO memory), in bytes.
func (r *redisServer) usedMemory(ctx context.Context) (int64, error) {
	info, err := r.client.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("INFO memory has no used_memory")
}

// prefixMemory adds up MEMORY USAGE (exact: SAMPLES 0) of every key under a key prefix, and
// counts the keys.
func (r *redisServer) prefixMemory(ctx context.Context, prefix string) (bytes int64, keys int, err error) {
	iter := r.client.Scan(ctx, 0, "{"+prefix+"}:*", 1000).Iterator()
	for iter.Next(ctx) {
		n, err := r.client.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return 0, 0, err
		}
		bytes += n
		keys++
	}
	return bytes, keys, iter.Err()
}
