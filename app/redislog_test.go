package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/internal/logbuf"
)

// TestRedisMessagesReachEveryInstance: go-redis has one logger per process; its messages reach
// the log of every app built and not yet closed (so the no-secrets-in-logs check of any
// instance sees them), and none after the app closed.
func TestRedisMessagesReachEveryInstance(t *testing.T) {
	var first, second logbuf.Buffer
	l1 := slog.New(slog.NewJSONHandler(&first, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l2 := slog.New(slog.NewJSONHandler(&second, &slog.HandlerOptions{Level: slog.LevelDebug}))
	addRedisLog(l1)
	addRedisLog(l2)
	redisLogger{}.Printf(context.Background(), "redis: dial %s: refused", "127.0.0.1:1")
	removeRedisLog(l1)
	redisLogger{}.Printf(context.Background(), "redis: after the first closed")
	removeRedisLog(l2)
	for name, buf := range map[string]*logbuf.Buffer{"first": &first, "second": &second} {
		if !strings.Contains(buf.String(), "redis: dial 127.0.0.1:1: refused") {
			t.Errorf("the %s instance's log misses go-redis's message:\n%s", name, buf.String())
		}
	}
	if strings.Contains(first.String(), "after the first closed") || !strings.Contains(second.String(), "after the first closed") {
		t.Errorf("after the first closed: first %q, second %q", first.String(), second.String())
	}
}
