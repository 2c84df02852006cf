package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

// TestE2ERemediatorsAndAllowedChannels: resolve and merge are reserved to the remediators (user
// ids and user groups); commands outside slack.allowed_channels get a polite refusal.
func TestE2ERemediatorsAndAllowedChannels(t *testing.T) {
	s := newSlack(t, slackfake.Options{UserGroups: map[string][]string{"S0ONCALL": {"U0BOB"}}})
	prefix := testredis.Prefix()
	in := start(t, setup{slack: s, prefix: prefix, slackExtra: "  remediators: [U0ADMIN, S0ONCALL]\n  allowed_channels: [C0PIPE, C0DEFAULT]\n"})
	in.ok("/webhooks/generic", generic("client replied sms", "authz"))
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0PIPE")) == 1 })
	r := ask(t, s, "incident resolve INC-1")
	if !strings.Contains(r.Text, "only the people listed in slack.remediators or pipelines[sms-replies].remediators may resolve incidents") {
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
	got := auditLines(t, prefix, 10)
	want := []string{"U1 resolve incidents refused", "U0BOB resolve done", "U0BOB command refused"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("audit: %q, want %q", got, want)
	}
}

// auditLines are the newest n audit entries as "actor action outcome".
func auditLines(t *testing.T, prefix string, n int64) []string {
	t.Helper()
	rdb, _ := testredis.Client(t)
	log, err := state.New(rdb, prefix).AuditLog(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range log {
		got = append(got, e.Actor+" "+e.Action+" "+e.Outcome)
	}
	return got
}

func auditEntries(t *testing.T, prefix string) []state.AuditEntry {
	t.Helper()
	rdb, _ := testredis.Client(t)
	log, err := state.New(rdb, prefix).AuditLog(t.Context(), 100)
	if err != nil {
		t.Fatal(err)
	}
	return log
}

// alertFor is a generic alert that routes to pipeline by its own label ("" for none).
func alertFor(title, key, pipeline string) string {
	labels := map[string]string{"alertname": title}
	if pipeline != "" {
		labels["pipeline"] = pipeline
	}
	b, _ := json.Marshal(map[string]any{"source": "test", "title": title, "severity": "critical",
		"labels": labels, "dedup_key": key})
	return string(b)
}

// click presses a button of a message (a root or an ephemeral reply) as user, in channel.
func click(t *testing.T, s *slackfake.Server, user, channel, ts, action string) {
	t.Helper()
	if _, err := s.SendBlockAction(context.Background(), slackfake.BlockAction{UserID: user, ChannelID: channel, MessageTS: ts, ActionID: action}); err != nil {
		t.Fatal(err)
	}
}

// TestE2EButtonsObeyChannelRules: the root message's buttons are the commands they stand for:
// a click in a channel outside slack.allowed_channels is refused like a typed command, and
// audited; nothing changes.
func TestE2EButtonsObeyChannelRules(t *testing.T) {
	prefix := testredis.Prefix()
	in := start(t, setup{prefix: prefix, slackExtra: "  allowed_channels: [C0PIPE]\n"})
	s := in.slack
	// No pipeline: the incident goes to slack.default_channel, where commands are not taken.
	in.ok("/webhooks/generic", alertFor("disk almost full", "disk-1", ""))
	waitFor(t, s, "the root in C0DEFAULT", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	root := roots(s, "C0DEFAULT")[0]
	for _, action := range []string{"incident_ack", "incident_resolve"} {
		before := len(s.Ephemerals())
		click(t, s, "U0EVE", "C0DEFAULT", root.TS, action)
		waitFor(t, s, "the refusal of "+action, func(s *slackfake.Server) bool {
			e := s.Ephemerals()
			return len(e) > before && e[len(e)-1].User == "U0EVE" && strings.Contains(e[len(e)-1].Text, "does not take commands in this channel")
		})
	}
	rdb, _ := testredis.Client(t)
	inc, err := state.New(rdb, prefix).Get(t.Context(), "INC-1")
	if err != nil || inc.Status != state.StatusOpen {
		t.Fatalf("after refused clicks the incident is %+v, %v", inc, err)
	}
	var refused []string
	for _, e := range auditEntries(t, prefix) {
		if e.Outcome == "refused" {
			refused = append(refused, e.Actor+" "+e.Action+" via "+e.Via+" in "+e.Channel+": "+e.Detail)
		}
	}
	want := []string{
		"U0EVE command via button in C0DEFAULT: channel not in slack.allowed_channels: incident ack INC-1",
		"U0EVE command via button in C0DEFAULT: channel not in slack.allowed_channels: incident resolve INC-1",
	}
	if strings.Join(refused, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audited refusals:\n%s\nwant:\n%s", strings.Join(refused, "\n"), strings.Join(want, "\n"))
	}
	if m, _ := s.Message("C0DEFAULT", root.TS); strings.Contains(m.Text, "acknowledged") || m.Edits > 0 {
		t.Fatalf("the root changed after refused clicks: %q (%d edits)", m.Text, m.Edits)
	}
}

// TestE2EPerPipelineRemediators: pipelines[].remediators add to slack.remediators for that
// pipeline only; the audit trail is theirs to read; incidents of other channels are listed
// and shown only to their members; acknowledge is audited.
func TestE2EPerPipelineRemediators(t *testing.T) {
	s := newSlack(t, slackfake.Options{UserGroups: map[string][]string{"S0ORDERS": {"U0ORD"}},
		Members: map[string][]string{"C0PIPE": {"U0SMS", "U0ORD", "U0ADMIN"}, "C0ORDERS": {"U0ORD", "U0ADMIN"}}})
	prefix := testredis.Prefix()
	in := start(t, setup{slack: s, prefix: prefix, slackExtra: "  remediators: [U0ADMIN]\n",
		extra: "    remediators: [U0SMS]\n  - name: orders\n    channel: C0ORDERS\n    remediators: [S0ORDERS]\n"})
	in.ok("/webhooks/generic", alertFor("client replied sms", "sms-1", "sms-replies"))
	in.ok("/webhooks/generic", alertFor("orders late", "orders-1", "orders"))
	waitFor(t, s, "both roots", func(s *slackfake.Server) bool {
		return len(roots(s, "C0PIPE")) == 1 && len(roots(s, "C0ORDERS")) == 1
	})
	// U0SMS remediates sms-replies, not orders; a member of S0ORDERS the other way round.
	if r := askIn(t, s, "U0SMS", "C0ORDERS", "incident resolve INC-2"); !strings.Contains(r.Text, "pipelines[orders].remediators may resolve incidents") {
		t.Fatalf("U0SMS resolving INC-2 in C0ORDERS: %q", r.Text)
	}
	if r := askIn(t, s, "U0SMS", "C0PIPE", "incident show INC-2"); !strings.Contains(r.Text, "INC-2 belongs to a channel you are not a member of") {
		t.Fatalf("U0SMS showing INC-2 of C0ORDERS: %q", r.Text)
	}
	if r := askIn(t, s, "U0ORD", "C0PIPE", "incident resolve INC-1 not mine"); !strings.Contains(r.Text, "pipelines[sms-replies].remediators may resolve incidents") {
		t.Fatalf("U0ORD resolving INC-1: %q", r.Text)
	}
	if r := askIn(t, s, "U0ORD", "C0ORDERS", "incident ack INC-2"); r.Text != "INC-2 acknowledged." {
		t.Fatalf("U0ORD acknowledging INC-2: %q", r.Text)
	}
	if r := askIn(t, s, "U0ORD", "C0ORDERS", "incident resolve INC-2 carrier fixed"); r.Text != "INC-2 resolved." {
		t.Fatalf("U0ORD resolving INC-2: %q", r.Text)
	}
	// incident list: this channel's; all: the channels of the user.
	in.ok("/webhooks/generic", alertFor("orders late again", "orders-2", "orders"))
	waitFor(t, s, "the third root", func(s *slackfake.Server) bool { return len(roots(s, "C0ORDERS")) == 2 })
	if r := askIn(t, s, "U0SMS", "C0PIPE", "incident list"); !strings.Contains(r.Text, "1 open incident in this channel") || !strings.Contains(string(r.Blocks), "INC-1") ||
		strings.Contains(string(r.Blocks), "INC-3") {
		t.Fatalf("list in C0PIPE: %q %s", r.Text, r.Blocks)
	}
	if r := askIn(t, s, "U0SMS", "C0PIPE", "incident list all"); !strings.Contains(r.Text, "Open incidents in the channels you are a member of") ||
		!strings.Contains(string(r.Blocks), "INC-1") || strings.Contains(string(r.Blocks), "INC-3") {
		t.Fatalf("list all for U0SMS: %q %s", r.Text, r.Blocks)
	}
	if r := askIn(t, s, "U0ORD", "C0PIPE", "incident list all"); !strings.Contains(r.Text, "Open incidents in the channels you are a member of, newest first") ||
		!strings.Contains(string(r.Blocks), "INC-1") || strings.Index(string(r.Blocks), "INC-1") < strings.Index(string(r.Blocks), "INC-3") {
		t.Fatalf("list all for U0ORD, newest first: %q %s", r.Text, r.Blocks)
	}
	// The audit trail: remediators of the pipeline only.
	if r := askIn(t, s, "U0SMS", "C0PIPE", "audit orders"); !strings.Contains(r.Text, "pipelines[orders].remediators may read the audit trail of orders") {
		t.Fatalf("U0SMS reading orders' audit: %q", r.Text)
	}
	if r := askIn(t, s, "U0SMS", "C0PIPE", "audit"); !strings.Contains(r.Text, "only the people listed in slack.remediators may read the whole audit trail") {
		t.Fatalf("U0SMS reading the whole audit: %q", r.Text)
	}
	r := askIn(t, s, "U0ORD", "C0ORDERS", "audit orders")
	trail := string(r.Blocks)
	for _, want := range []string{"U0ORD", "acknowledge INC-2", "resolve INC-2", "carrier fixed", "(command in C0ORDERS)"} {
		if !strings.Contains(trail, want) {
			t.Errorf("audit of orders lacks %q: %q %s", want, r.Text, trail)
		}
	}
	if strings.Contains(trail, "not mine") {
		t.Errorf("audit of orders shows sms-replies' entries: %s", trail)
	}
	r = askIn(t, s, "U0ADMIN", "C0PIPE", "audit INC-1")
	if !strings.Contains(string(r.Blocks), "U0ORD") || !strings.Contains(string(r.Blocks), "refused  resolve incidents INC-1") {
		t.Errorf("audit of INC-1 for the admin: %q %s", r.Text, r.Blocks)
	}
}
