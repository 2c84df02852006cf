package main

import (
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// TestE2ERemediatorsAndAllowedChannels: resolve and merge are reserved to slack.remediators
// (user ids and user groups); commands outside slack.allowed_channels get a polite refusal.
func TestE2ERemediatorsAndAllowedChannels(t *testing.T) {
	s := newSlack(t, slackfake.Options{UserGroups: map[string][]string{"S0ONCALL": {"U0BOB"}}})
	prefix := testredis.Prefix()
	in := start(t, setup{slack: s, prefix: prefix, slackExtra: "  remediators: [U0ADMIN, S0ONCALL]\n  allowed_channels: [C0PIPE, C0DEFAULT]\n"})
	in.ok("/webhooks/generic", generic("client replied sms", "authz"))
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	r := ask(t, s, "incident resolve INC-1")
	if !strings.Contains(r.Text, "only the people listed in slack.remediators may resolve incidents") {
		t.Fatalf("U1 resolving: %q", r.Text)
	}
	env, err := s.SendSlashCommand(t.Context(), slackfake.SlashCommand{ChannelID: "C0PIPE", UserID: "U0BOB", Text: "incident resolve INC-1 fixed"})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "bob's resolve", func(s *slackfake.Server) bool {
		for _, p := range s.ResponsePosts() {
			if p.EnvelopeID == env.ID {
				return strings.Contains(p.Text, "INC-1 resolved.")
			}
		}
		return false
	})
	env, _ = s.SendSlashCommand(t.Context(), slackfake.SlashCommand{ChannelID: "C0ELSEWHERE", UserID: "U0BOB", Text: "incident list"})
	waitFor(t, s, "the refusal elsewhere", func(s *slackfake.Server) bool {
		for _, p := range s.ResponsePosts() {
			if p.EnvelopeID == env.ID {
				return strings.Contains(p.Text, "does not take commands in this channel")
			}
		}
		return false
	})
	rdb, _ := testredis.Client(t)
	log, err := state.New(rdb, prefix).AuditLog(t.Context(), 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range log {
		got = append(got, e.Actor+" "+e.Action+" "+e.Outcome)
	}
	want := []string{"U1 resolve incidents refused", "U0BOB resolve done", "U0BOB command refused"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("audit: %q, want %q", got, want)
	}
}
