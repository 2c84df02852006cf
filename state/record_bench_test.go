package state_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// BenchmarkRecordAlerts20 records batches of 20 alerts as `make bench`'s ingest sends them: half
// re-sends of 10 hot keys, half new keys, which fold into the channel's flood after the first
// 20. Besides the time per batch it reports what redis-server itself spent running the record
// script per batch (INFO commandstats), the figure that bounds ingest: Redis runs scripts on
// one thread.
func BenchmarkRecordAlerts20(b *testing.B) {
	ctx := context.Background()
	rdb, prefix := testredis.Client(b)
	s := state.New(rdb, prefix)
	s.FloodLimit, s.FloodQuietFor, s.Coalesce = 20, time.Minute, 10*time.Second
	if err := s.EnsureOutbox(ctx); err != nil {
		b.Fatal(err)
	}
	n := 0
	batch := func() []state.AlertRecord {
		as := make([]state.AlertRecord, 20)
		for i := range as {
			n++
			key := "hot" + strconv.Itoa(n%10)
			if n%2 == 1 {
				key = "new" + strconv.Itoa(n)
			}
			as[i] = state.AlertRecord{Key: key, Fingerprint: key, Title: "client replied sms " + key, Severity: 3,
				Channel: "C1", Source: "alertmanager", Detail: "no datastore writes",
				Labels:      map[string]string{"alertname": key, "service": "sms-replies", "severity": "3"},
				Annotations: map[string]string{"description": "no writes for 20m"},
				Links:       map[string]string{"generator": "http://prometheus:9090/graph?g0.expr=" + key}}
		}
		return as
	}
	before := scriptMicros(b, rdb)
	for b.Loop() {
		if _, err := s.RecordAlerts(ctx, batch()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(scriptMicros(b, rdb)-before)/float64(b.N), "redis-µs/batch")
}

// scriptMicros is the time redis-server has spent in EVALSHA since it started, in µs. The
// server may be shared with other tests' prefixes; a benchmark runs alone.
func scriptMicros(b *testing.B, rdb *redis.Client) int64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "cmdstat_evalsha:"); ok {
			for _, f := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(f, "usec="); ok {
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						b.Fatal(fmt.Errorf("commandstats: %q: %w", l, err))
					}
					return n
				}
			}
		}
	}
	return 0
}
