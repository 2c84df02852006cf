package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/bot/slackfake"
)

// TestE2EHostileAlert: an alert whose title, labels and annotations try to notify, link, format
// and overflow reaches Slack inert and whole: the root, the thread reply of its duplicate and
// the replies to incident show and incident list are all accepted by the fake (which refuses
// what Slack refuses), nobody is mentioned, and the title is there, literally.
func TestE2EHostileAlert(t *testing.T) {
	in := start(t, setup{})
	s := in.slack
	title := "<!channel> *URGENT* `db` down ``` <@U0BOSS> <https://evil.example|click> _now_\nsecond line " + strings.Repeat("&<>", 1200)
	body, _ := json.Marshal(map[string]any{"source": "<!here>", "title": title, "severity": "critical", "dedup_key": "hostile",
		"labels":      map[string]string{"alertname": "client replied sms", "team": "<!subteam^S0ALL>", "pipeline": "sms-replies"},
		"annotations": map[string]string{"description": "```<!everyone>``` " + strings.Repeat("x", 10000)}})
	in.ok("/webhooks/generic", string(body))
	in.ok("/webhooks/generic", string(body))
	waitFor(t, s, "the root and the duplicate's thread reply", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 1 && len(replies(s, "C0PIPE", r[0].TS)) >= 1
	})
	show := ask(t, s, "incident show INC-1")
	list := ask(t, s, "incident list")
	for _, p := range []slackfake.ResponsePost{show, list} {
		if p.Status != 200 || p.Error != "" || len(p.Mentions) > 0 {
			t.Fatalf("reply refused or mentioning: %d %q %v", p.Status, p.Error, p.Mentions)
		}
	}
	if !strings.Contains(show.Text, "INC-1: &lt;!channel&gt; *\u200bURGENT*\u200b `db` down `\u200b`\u200b`\u200b &lt;@U0BOSS&gt;") {
		t.Errorf("show's text does not carry the title, inert: %q", clipText(show.Text))
	}
	for _, c := range s.Calls() {
		if c.Error != "" {
			t.Errorf("Slack would refuse %s: %s", c.Method, c.Error)
		}
	}
	for _, m := range s.Messages("C0PIPE") {
		if len(m.Mentions) > 0 {
			t.Errorf("message %s mentions %v", m.TS, m.Mentions)
		}
		if code, problems := slackfake.Check(m.Text, string(m.Blocks)); code != "" {
			t.Errorf("message %s: %s %v", m.TS, code, problems)
		}
	}
	root := roots(s, "C0PIPE")[0]
	if !strings.Contains(string(root.Blocks), "\\u003c!channel\\u003e *URGENT* `db` down") {
		t.Errorf("the header does not show the title as it is: %s", clipText(string(root.Blocks)))
	}
}

func clipText(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}
