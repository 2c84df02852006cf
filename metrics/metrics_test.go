package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/metrics"
)

// TestTransportCountsSlackCalls: Web API calls are counted by method and HTTP status,
// response_url posts under one label (their paths are secrets), failed calls as "error".
func TestTransportCountsSlackCalls(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "chat.update") {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()
	m := metrics.New()
	c := &http.Client{Transport: m.Transport(nil)}
	for _, path := range []string{"/api/chat.postMessage", "/api/chat.postMessage", "/api/chat.update", "/actions/T1/123/abcSECRET"} {
		resp, err := c.Post(srv.URL+path, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if _, err := c.Post("http://127.0.0.1:1/api/chat.postMessage", "application/json", nil); err == nil {
		t.Fatal("a post to a closed port succeeded")
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(w.Body)
	for _, want := range []string{
		`streamwatch_slack_api_calls_total{method="chat.postMessage",status="200"} 2`,
		`streamwatch_slack_api_calls_total{method="chat.update",status="429"} 1`,
		`streamwatch_slack_api_calls_total{method="response_url",status="200"} 1`,
		`streamwatch_slack_api_calls_total{method="chat.postMessage",status="error"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(body), "SECRET") {
		t.Error("a response_url's path is in the metrics")
	}
}
