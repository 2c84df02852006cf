package bot_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// BenchmarkWebhookToRedis measures POST /webhooks/alertmanager through the real handler into a
// real redis-server on loopback: every alert is durably recorded before the 200. Half of the
// alerts are duplicates of an open incident, half open new ones.
func BenchmarkWebhookToRedis(b *testing.B) {
	h, sample := benchHandler(b)
	bodies := make([][]byte, 64)
	for i := range bodies {
		name := "client replied sms"
		if i%2 == 1 {
			name = fmt.Sprintf("alert %d", i)
		}
		bodies[i] = bytes.Replace(sample, []byte(`"alertname": "client replied sms"`), []byte(`"alertname": "`+name+`"`), 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		req := httptest.NewRequest("POST", "/webhooks/alertmanager", bytes.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Authorization", "Bearer t")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("answer %d: %s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "alerts/s")
}

// BenchmarkWebhookToRedisParallel is the same with concurrent senders, as during a storm.
func BenchmarkWebhookToRedisParallel(b *testing.B) {
	h, sample := benchHandler(b)
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/webhooks/alertmanager", bytes.NewReader(sample))
			req.Header.Set("Authorization", "Bearer t")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Errorf("answer %d: %s", w.Code, w.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "alerts/s")
}

// benchHandler is the bot's routes over a real redis-server (token "t"), and a real
// Alertmanager payload.
func benchHandler(b *testing.B) (http.Handler, []byte) {
	rdb, prefix := testredis.Client(b)
	st := state.New(rdb, prefix)
	router := alerts.NewRouter(nil, []string{"alertname", "pipeline"}, nil, "C0DEFAULT")
	h := bot.New(bot.Options{Store: st, Router: router, WebhookToken: "t"}).Routes()
	sample, err := os.ReadFile("../app/testdata/alertmanager-sms.json")
	if err != nil {
		b.Fatal(err)
	}
	return h, sample
}
