package load_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bench/load"
)

func TestCheckLoopback(t *testing.T) {
	for url, ok := range map[string]bool{
		"http://127.0.0.1:8080/webhooks/alertmanager": true,
		"http://localhost:9093/api/v2/alerts":         true,
		"http://[::1]:80/":                            true,
		"http://127.8.9.10/":                          true,
		"http://10.0.0.1:8080/":                       false,
		"http://example.com/":                         false,
		"ftp://127.0.0.1/":                            false,
	} {
		if err := load.CheckLoopback(url); (err == nil) != ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok=%v", url, err, ok)
		}
	}
}

func TestMixSpreadsDuplicates(t *testing.T) {
	m := load.Mix{Run: "t", Batch: 20, Dup: 0.5, Hot: 10}
	reqs := m.Requests(3)
	hot := map[string]bool{}
	for _, a := range m.HotAlerts() {
		hot[a.Fingerprint()] = true
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		dups := 0
		for _, a := range r {
			if hot[a.Fingerprint()] {
				dups++
			} else if seen[a.Fingerprint()] {
				t.Fatalf("new alert %v sent twice", a.Labels)
			}
			seen[a.Fingerprint()] = true
		}
		if len(r) != 20 || dups != 10 {
			t.Fatalf("request of %d alerts with %d duplicates, want 20 with 10", len(r), dups)
		}
	}
	for _, f := range []load.Format{load.Webhook, load.API} {
		b, err := load.Body(f, reqs[0])
		if err != nil || !json.Valid(b) {
			t.Fatalf("%s body: %v %s", f, err, b)
		}
	}
}

func TestRunStopsByCountAndByTime(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/slow" {
			time.Sleep(20 * time.Millisecond)
		}
		_, _ = w.Write([]byte(`{"incidents":[{"incident":"INC-1","result":"opened"},{"incident":"INC-1","result":"duplicate"}]}`))
	}))
	defer srv.Close()
	bodies := [][]byte{[]byte(`{}`)}
	r, err := load.Run(context.Background(), load.Plan{URL: srv.URL, Token: "tok", Bodies: bodies, AlertsPerRequest: 2,
		Requests: 40, Duration: 10 * time.Second, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 40 || r.OK != 40 || r.Alerts != 80 || r.Opened != 40 || r.Duplicates != 40 || r.StoppedBy != "count" || hits.Load() != 40 {
		t.Fatalf("result %+v after %d hits", r, hits.Load())
	}
	if r.P50ms <= 0 || r.P99ms < r.P50ms || r.MaxMs < r.P99ms {
		t.Fatalf("latencies %+v", r)
	}
	r, err = load.Run(context.Background(), load.Plan{URL: srv.URL + "/slow", Token: "tok", Bodies: bodies,
		Requests: 1 << 20, Duration: 200 * time.Millisecond, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.StoppedBy != "time" || r.Requests == 0 || r.Requests > 40 {
		t.Fatalf("time-bounded run: %+v", r)
	}
	r, _ = load.Run(context.Background(), load.Plan{URL: srv.URL, Bodies: bodies, Requests: 3, Duration: time.Second})
	if r.OK != 0 || r.Status[http.StatusUnauthorized] != 3 || r.FirstFail == "" {
		t.Fatalf("without the token: %+v", r)
	}
	if _, err := load.Run(context.Background(), load.Plan{URL: "http://192.0.2.1/", Bodies: bodies, Requests: 1, Duration: time.Second}); err == nil {
		t.Fatal("a non-loopback target was accepted")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if p := load.Percentile(d, 50); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := load.Percentile(d, 99); p != 99*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if p := load.Percentile(nil, 99); p != 0 {
		t.Errorf("p99 of nothing = %v", p)
	}
}
