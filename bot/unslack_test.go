package bot

import "testing"

// TestUnslack: what Slack writes into a command comes back as what the person typed; user
// mentions stay, for commands that name people.
func TestUnslack(t *testing.T) {
	for in, want := range map[string]string{
		"incident assign <@U0BOB|bob>":                            "incident assign <@U0BOB|bob>",
		"incident assign <@U0BOB>":                                "incident assign <@U0BOB>",
		"silence host=<http://db1.example|db1.example> for 1h":    "silence host=db1.example for 1h",
		"silence url=<https://x.example/a?b=1&amp;c=2> for 1h":    "silence url=https://x.example/a?b=1&c=2 for 1h",
		"incident resolve INC-1 moved to <#C0OPS|ops>":            "incident resolve INC-1 moved to #ops",
		"incident resolve INC-1 told <!subteam^S0ONCALL|@oncall>": "incident resolve INC-1 told @oncall",
		"incident resolve INC-1 told <!here>":                     "incident resolve INC-1 told @here",
		"silence lag=~&lt;10 for 1h a &amp; b":                    "silence lag=~<10 for 1h a & b",
		"plain text":                                              "plain text",
	} {
		if got := unslack(in); got != want {
			t.Errorf("unslack(%q) = %q, want %q", in, got, want)
		}
	}
}
