package app_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// TestE2ETwoReplicasOneIncident: 1,000 concurrent identical alerts split over two bots sharing
// Redis and Slack make exactly one incident and one root message.
func TestE2ETwoReplicasOneIncident(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s}
	a, b := start(t, su), start(t, su)
	const n = 1000
	results := make(chan string, n)
	concurrently(n, 16, func(i int) {
		in := a
		if i%2 == 1 {
			in = b
		}
		code, body := in.post("/webhooks/generic", generic("client replied sms", "replicas"))
		results <- fmt.Sprint(code, " ", body)
	})
	close(results)
	opened := 0
	for r := range results {
		if !strings.HasPrefix(r, "200 ") {
			t.Fatalf("alert refused: %s", r)
		}
		if strings.Contains(r, `"result":"opened"`) {
			opened++
		}
		if !strings.Contains(r, `"incident":"INC-1"`) {
			t.Fatalf("alert went elsewhere: %s", r)
		}
	}
	if opened != 1 {
		t.Fatalf("%d answers say opened, want 1", opened)
	}
	waitFor(t, s, "the root to count 1000", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 1 && strings.Contains(r[0].Text, "1000 occurrences")
	})
	if r := roots(s, "C0PIPE"); echoes(s, "C0PIPE", r[0].TS) != 0 {
		t.Fatalf("duplicates posted thread replies: %q", threadTexts(s, "C0PIPE", r[0].TS))
	}
	if n := len(roots(s, "C0PIPE")); n != 1 {
		t.Fatalf("%d root messages, want 1", n)
	}
}

// TestE2ESocketDroppedAndRefreshed: the bot reconnects by itself when Slack drops the socket
// or asks for a refresh, and answers commands afterwards.
func TestE2ESocketDroppedAndRefreshed(t *testing.T) {
	in := start(t, setup{})
	s := in.slack
	ctx := context.Background()
	opens := func() int { return len(s.CallsTo("apps.connections.open")) }
	before := opens()
	s.DropSockets()
	waitFor(t, s, "a new connection after the drop", func(s *slackfake.Server) bool { return opens() > before && s.Connected() == 1 })
	before = opens()
	if err := s.SendDisconnect("refresh_requested"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "a new connection after the refresh", func(s *slackfake.Server) bool { return opens() > before && s.Connected() >= 1 })
	env, err := s.SendSlashCommand(ctx, slackfake.SlashCommand{ChannelID: "C0PIPE", UserID: "U1", Text: "help"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the reply after reconnecting", func(s *slackfake.Server) bool {
		for _, p := range s.ResponsePosts() {
			if p.EnvelopeID == env.ID {
				return true
			}
		}
		return false
	})
}

// TestE2EInvalidAuthIsNotReady: revoked tokens give a clear log line and /readyz 503, and the
// process stays up (no crash loop).
func TestE2EInvalidAuthIsNotReady(t *testing.T) {
	in := start(t, setup{})
	in.slack.FailNext("apps.connections.open", 1000, slackfake.Fault{Error: "invalid_auth"})
	in.slack.DropSockets()
	waitFor(t, in.slack, "a refused reconnect", func(s *slackfake.Server) bool {
		for _, c := range s.CallsTo("apps.connections.open") {
			if c.Error == "invalid_auth" {
				return true
			}
		}
		return false
	})
	// /readyz is not a change of the fake: poll it.
	if err := wait.Until(context.Background(), 20*time.Second, "/readyz turning 503 after invalid_auth", func() bool {
		code, _ := in.readyz()
		return code == 503
	}); err != nil {
		t.Fatalf("%v\n%s", err, in.logs)
	}
	if !strings.Contains(in.logs.String(), "invalid_auth") {
		t.Fatalf("no log line names invalid_auth:\n%s", in.logs)
	}
	if r, err := http.Get(in.url + "/healthz"); err != nil || r.StatusCode != 200 {
		t.Fatalf("/healthz: %v", err)
	}
}
