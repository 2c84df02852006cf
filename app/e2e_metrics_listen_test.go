package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestE2EMetricsListen: with http.metrics_listen set, the webhook address answers webhooks
// only; /metrics, /healthz and /readyz answer on the metrics address.
func TestE2EMetricsListen(t *testing.T) {
	in := start(t, setup{metrics: true})
	in.ok("/webhooks/generic", generic("client replied sms", "metrics-listen"))
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if code, _ := get(in.url + path); code != http.StatusNotFound {
			t.Errorf("GET %s on the webhook address answered %d, want 404", path, code)
		}
		if code, body := get(in.opsURL + path); code != http.StatusOK {
			t.Errorf("GET %s on the metrics address answered %d: %s", path, code, body)
		}
	}
	if _, body := get(in.opsURL + "/metrics"); !strings.Contains(body, `streamwatch_alerts_received_total{outcome="opened",source="generic"} 1`) {
		t.Errorf("/metrics on the metrics address does not count the webhook:\n%s", grepLines(body, "streamwatch_alerts"))
	}
	req, _ := http.NewRequest("POST", in.opsURL+"/webhooks/generic", strings.NewReader(generic("x", "y")))
	req.Header.Set("Authorization", "Bearer "+webhookToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a webhook on the metrics address answered %d, want 404", resp.StatusCode)
	}
}
