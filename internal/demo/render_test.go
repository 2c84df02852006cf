package demo

import (
	"strings"
	"testing"
)

func TestRenderBlocks(t *testing.T) {
	cases := []struct {
		name   string
		blocks string
		want   []string
	}{
		{"an incident's root", `[
			{"type":"header","text":{"type":"plain_text","text":"🟡 INC-1: client replied sms"}},
			{"type":"section","fields":[{"type":"mrkdwn","text":"*Severity*\nSEV3 warning"},{"type":"mrkdwn","text":"*Status*\nopen"},
				{"type":"mrkdwn","text":"*Pipeline*\nsms-replies"},{"type":"mrkdwn","text":"*Occurrences*\n2"}]},
			{"type":"context","elements":[{"type":"mrkdwn","text":"Reopened: previous INC-41"},{"type":"mrkdwn","text":"Key: a&lt;b"}]},
			{"type":"actions","block_id":"incident_actions","elements":[
				{"type":"button","action_id":"incident_ack","text":{"type":"plain_text","text":"Acknowledge"},"value":"INC-1"},
				{"type":"button","action_id":"incident_resolve","text":{"type":"plain_text","text":"Resolve"},"value":"INC-1"}]}]`,
			[]string{"🟡 INC-1: client replied sms", "Severity: SEV3 warning · Status: open · Pipeline: sms-replies", "Occurrences: 2",
				"Reopened: previous INC-41 · Key: a<b", "[Acknowledge] [Resolve]"}},
		{"a reply with a code block and a mention", `[
			{"type":"section","text":{"type":"mrkdwn","text":"*1 open incident* for <@U0ONCALL>"}},
			{"type":"section","text":{"type":"mrkdwn","text":"` + "```" + `\nID   TITLE\nINC-1  x\n` + "```" + `"}},
			{"type":"divider"}]`,
			[]string{"1 open incident for @alice", "ID   TITLE", "INC-1  x", "────────"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := people.renderBlocks([]byte(c.blocks))
			if !ok || strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("got (ok %v)\n%s\nwant\n%s", ok, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
	if got := people.renderMessage("plain &amp; <https://example.com|a link>", nil); strings.Join(got, "") != "plain & a link" {
		t.Fatalf("text without blocks: %q", got)
	}
	if b, ok := repairButton([]byte(`[{"type":"actions","elements":[{"type":"button","action_id":"cmd_repair_confirm","text":{"type":"plain_text","text":"Quarantine 1 file(s)"}}]}]`)); !ok || b.label != "Quarantine 1 file(s)" {
		t.Fatalf("repair button: %+v %v", b, ok)
	}
}

func TestCompareTS(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"1700000000.000100", "1700000000.000099", 1}, {"999999999.9", "1700000000.1", -1}, {"5.5", "5.5", 0}} {
		if got := compareTS(c.a, c.b); got != c.want {
			t.Errorf("compareTS(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
