package app_test

import (
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/bot/slackfake"
)

// TestE2EIncidentsSurviveSlackMishaps: through the built app, an incident whose root someone
// deleted is posted again once in its channel, and its thread continues there; an incident of
// an archived pipeline channel moves to slack.default_channel with a note, and is listed there.
func TestE2EIncidentsSurviveSlackMishaps(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	in := start(t, setup{slack: s})

	in.ok("/webhooks/generic", alertFor("primary down", "gone-1", ""))
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	first := roots(s, "C0DEFAULT")[0]
	if !s.DeleteMessage("C0DEFAULT", first.TS) {
		t.Fatal("the root could not be deleted")
	}
	if r := askIn(t, s, "U0BOB", "C0DEFAULT", "incident ack INC-1"); !strings.Contains(r.Text, "INC-1 acknowledged") {
		t.Fatalf("ack: %q", r.Text)
	}
	waitFor(t, s, "the root posted again, with the ack in its thread", func(s *slackfake.Server) bool {
		rs := roots(s, "C0DEFAULT")
		if len(rs) != 1 || rs[0].TS == first.TS {
			return false
		}
		th := s.Thread("C0DEFAULT", rs[0].TS)
		return len(th) == 3 && strings.Contains(th[1].Text, "was deleted in Slack, so it is posted again here") &&
			strings.Contains(th[2].Text, "cknowledged")
	})

	s.ArchiveChannel("C0PIPE")
	in.ok("/webhooks/generic", alertFor("client replied sms", "moved-1", "sms-replies"))
	waitFor(t, s, "INC-2 moved to the default channel", func(s *slackfake.Server) bool {
		for _, r := range roots(s, "C0DEFAULT") {
			if strings.Contains(r.Text, "INC-2") {
				th := s.Thread("C0DEFAULT", r.TS)
				return len(th) >= 2 && th[1].Text == "Moved here from <#C0PIPE>: that channel is archived. Its thread continues here."
			}
		}
		return false
	})
	if n := len(s.Messages("C0PIPE")); n != 0 {
		t.Fatalf("the archived channel holds %d messages", n)
	}
	// Moved, INC-2 is listed in the default channel, and no longer in its old one.
	r := askIn(t, s, "U0BOB", "C0DEFAULT", "incident list")
	if !strings.Contains(r.Text, "2 open incidents in this channel") || !strings.Contains(string(r.Blocks), "INC-2") {
		t.Fatalf("incident list in C0DEFAULT: %q %s", r.Text, r.Blocks)
	}
	if r := askIn(t, s, "U0BOB", "C0PIPE", "incident list"); strings.Contains(string(r.Blocks), "INC-2") || strings.Contains(r.Text, "1 open incident") {
		t.Fatalf("incident list in C0PIPE: %q %s", r.Text, r.Blocks)
	}
}
