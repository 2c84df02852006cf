package app_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/internal/kafkatest"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"go.uber.org/goleak"
)

// TestStartStopLeavesNothing: the app started (until /readyz says ready: Redis answers, the
// Slack socket is connected) and stopped 100 times leaves no goroutine behind: whatever it
// starts, it stops and waits for. Every tenth run also handles an alert (which opens an
// incident and queues its automatic diagnosis: Kafka, the checkpoint, a probe) and a command
// that reads the brokers.
func TestStartStopLeavesNothing(t *testing.T) {
	ctx := context.Background()
	s := newSlack(t, slackfake.Options{})
	redisURL := testredis.URL(t)
	kc, err := kafkatest.Start(1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	if err := kc.CreateTopic(ctx, seedTopic, 3); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cp")
	if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: time.Now().Add(-4 * time.Minute), LatestBatch: 2, LatestCommit: 2,
		Topics: []sparktest.Topic{{Name: seedTopic, Partitions: 3, RecordsPerBatch: 3}}}); err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf(`    kafka: {cluster: main, topics: [%s], group: sms-replies-prod}
    checkpoint: {location: %s}
    probe: {schedule: "@every 1s"}
kafka:
  sample_interval: 1s
  clusters:
    main: {brokers: [%q], version: "3.6.0", timeout: 3s}
`, seedTopic, dir, kc.ListenAddrs()[0])
	before := goleak.IgnoreCurrent()
	for i := range 100 {
		in := start(t, setup{slack: s, redisURL: redisURL, extra: extra})
		if i%10 == 0 {
			in.ok("/webhooks/generic", generic("client replied sms", fmt.Sprint("lifecycle-", i)))
			if r := ask(t, s, "lag sms-replies"); !strings.Contains(r.Text, "sms-replies (group sms-replies-prod)") {
				t.Fatalf("lag: %q", r.Text)
			}
		}
		in.stop()
	}
	http.DefaultClient.CloseIdleConnections()
	goleak.VerifyNone(t, before)
}
