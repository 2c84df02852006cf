package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/config"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/internal/logbuf"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// TestSIGHUPReloadsTheConfiguration: a real SIGHUP to the serving process reloads its file. A
// good file with slack.time_zone: Europe/Paris makes the next root's times Paris times; a bad
// file (an unknown zone) is refused with the reason in the log, the running configuration
// stays, and the process keeps serving.
func TestSIGHUPReloadsTheConfiguration(t *testing.T) {
	t.Cleanup(func() { human.SetZone(nil) })
	fake := slackfake.New(slackfake.Options{})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	path := filepath.Join(t.TempDir(), "streamwatch.yaml")
	write := func(zone string) {
		t.Helper()
		yaml := fmt.Sprintf("http: {allow_unauthenticated_webhooks: true}\nslack: {default_channel: C0ALERTS, time_zone: %s}\nredis: {key_prefix: %s}\n",
			zone, testredis.Prefix())
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("UTC")
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SLACK_BOT_TOKEN": "xoxb-fake", "SLACK_APP_TOKEN": "xapp-fake", "SLACK_API_URL": fake.APIURL(),
		"REDIS_URL": testredis.URL(t)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	logs := &logbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, cfg, path, func(k string) string { return env[k] }, slog.New(slog.NewJSONHandler(logs, nil)), ln)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	wait.For(t, 30*time.Second, "serve to start", func() bool { return strings.Contains(logs.String(), "streamwatch starting") })

	// alert posts an alert and returns its root's "First seen" line once Slack has it.
	alert := func(key string) string {
		t.Helper()
		body := `{"source":"test","title":"primary down ` + key + `","severity":"critical","dedup_key":"` + key + `"}`
		resp, err := http.Post("http://"+addr+"/webhooks/generic", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("webhook: %s", resp.Status)
		}
		var first string
		wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer wcancel()
		if err := fake.WaitFor(wctx, func(s *slackfake.Server) bool {
			for _, m := range s.Messages("C0ALERTS") {
				if m.ThreadTS == "" && strings.Contains(m.Text, key) {
					first = string(m.Blocks)
					return true
				}
			}
			return false
		}); err != nil {
			t.Fatalf("the root of %s: %v", key, err)
		}
		return first
	}
	hup := func(logLine string, n int) {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		wait.For(t, 20*time.Second, logLine, func() bool { return strings.Count(logs.String(), logLine) == n })
	}

	if root := alert("k1"); !regexp.MustCompile(`\d\d:\d\d:\d\dZ`).MatchString(root) || strings.Contains(root, "CET") {
		t.Fatalf("before the reload the root's times are not UTC: %s", root)
	}
	write("Europe/Paris")
	hup("configuration reloaded", 1)
	if root := alert("k2"); !strings.Contains(root, " CET") {
		t.Fatalf("after reloading time_zone Europe/Paris the root's times are not Paris times: %s", root)
	}
	write("Mars/Olympus")
	hup("configuration reload refused", 1)
	if !strings.Contains(logs.String(), `slack.time_zone: unknown time zone \"Mars/Olympus\"`) {
		t.Fatalf("the refusal does not say why:\n%s", logs.String())
	}
	if root := alert("k3"); !strings.Contains(root, " CET") {
		t.Fatalf("a refused file changed the running time zone: %s", root)
	}
}
