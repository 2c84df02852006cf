package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// universalOptions completes REDIS_URL's options (config.ParseRedisURL: one server, or a cluster
// with IsClusterMode, which makes redis.NewUniversalClient build a ClusterClient) with timeouts
// short enough that a webhook answers 503 quickly while Redis is down. A timeout or retry count
// the URL sets (?dial_timeout=5s, ?max_retries=3) is kept.
func universalOptions(o *redis.UniversalOptions) *redis.UniversalOptions {
	u := *o
	if u.TLSConfig != nil {
		u.TLSConfig = u.TLSConfig.Clone()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&u.DialTimeout, 2*time.Second)
	def(&u.ReadTimeout, 3*time.Second)
	def(&u.WriteTimeout, 3*time.Second)
	if u.MaxRetries == 0 {
		u.MaxRetries = 1
	}
	if u.Protocol == 0 {
		// RESP2: streamwatch uses nothing of RESP3 (push messages, client-side caching), and
		// under RESP3 go-redis looks for pushed messages before reading every reply.
		u.Protocol = 2
	}
	return &u
}

// redisLogs are the logs of the apps of this process that are built and not yet closed.
// go-redis has one logger per process (redis.SetLogger), and its messages (dial failures while
// Redis is down) name no client: each goes to every one of them, so that no instance's log,
// and no check of it (no secrets in logs), misses one.
var redisLogs struct {
	once sync.Once
	mu   sync.Mutex
	logs map[*slog.Logger]int
}

// addRedisLog sends go-redis's messages to l too, until removeRedisLog(l).
func addRedisLog(l *slog.Logger) {
	redisLogs.once.Do(func() { redis.SetLogger(redisLogger{}) })
	redisLogs.mu.Lock()
	defer redisLogs.mu.Unlock()
	if redisLogs.logs == nil {
		redisLogs.logs = map[*slog.Logger]int{}
	}
	redisLogs.logs[l]++
}

func removeRedisLog(l *slog.Logger) {
	redisLogs.mu.Lock()
	defer redisLogs.mu.Unlock()
	if redisLogs.logs[l]--; redisLogs.logs[l] <= 0 {
		delete(redisLogs.logs, l)
	}
}

// redisLogger sends go-redis's own messages to every app's log (redisLogs).
type redisLogger struct{}

func (redisLogger) Printf(ctx context.Context, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	redisLogs.mu.Lock()
	logs := make([]*slog.Logger, 0, len(redisLogs.logs))
	for l := range redisLogs.logs {
		logs = append(logs, l)
	}
	redisLogs.mu.Unlock()
	for _, l := range logs {
		l.DebugContext(ctx, "go-redis", "msg", msg)
	}
}
