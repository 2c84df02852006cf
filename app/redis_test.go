package app_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/app"
	"github.com/streamwatch/streamwatch/config"
)

func TestRedisUniversalOptions(t *testing.T) {
	for _, tt := range []struct {
		url     string
		cluster bool
		dial    time.Duration
		retries int
	}{
		{"redis://:pw@127.0.0.1:6390/2", false, 2 * time.Second, 1},
		{"redis://127.0.0.1:6390/0?dial_timeout=5s&max_retries=3", false, 5 * time.Second, 3},
		{"redis://127.0.0.1:7001?addr=127.0.0.1:7002&addr=127.0.0.1:7003", true, 2 * time.Second, 1},
		{"redis://127.0.0.1:7001?cluster=true&max_retries=-1", true, 2 * time.Second, -1},
	} {
		opts, err := config.ParseRedisURL(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		u := app.UniversalOptions(opts)
		if u.DialTimeout != tt.dial || u.ReadTimeout != 3*time.Second || u.WriteTimeout != 3*time.Second || u.MaxRetries != tt.retries {
			t.Errorf("%s: dial %v read %v write %v retries %d", tt.url, u.DialTimeout, u.ReadTimeout, u.WriteTimeout, u.MaxRetries)
		}
		if opts.DialTimeout != 0 && opts.DialTimeout != tt.dial {
			t.Errorf("%s: universalOptions changed its argument", tt.url)
		}
		rdb := redis.NewUniversalClient(u)
		if _, ok := rdb.(*redis.ClusterClient); ok != tt.cluster {
			t.Errorf("%s: client %T, want a cluster client: %v", tt.url, rdb, tt.cluster)
		}
		_ = rdb.Close()
	}
}
