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

var redisLogOnce sync.Once

// redisLogger sends go-redis's own messages (dial failures while Redis is down) to slog.
type redisLogger struct{ l *slog.Logger }

func (r redisLogger) Printf(_ context.Context, format string, v ...any) {
	r.l.Debug("go-redis", "msg", fmt.Sprintf(format, v...))
}
