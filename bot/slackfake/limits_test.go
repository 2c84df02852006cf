package slackfake

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

// TestCheckRejectsWhatSlackRejects: Block Kit's documented limits, each one character over.
func TestCheckRejectsWhatSlackRejects(t *testing.T) {
	blocks := func(bs ...slack.Block) string {
		b, _ := json.Marshal(bs)
		return string(b)
	}
	txt := func(typ, s string) *slack.TextBlockObject { return slack.NewTextBlockObject(typ, s, false, false) }
	button := func(label, value string, confirm *slack.ConfirmationBlockObject) slack.Block {
		b := slack.NewButtonBlockElement("cmd_x", value, txt("plain_text", label))
		b.Confirm = confirm
		return slack.NewActionBlock("a", b)
	}
	confirm := func(title, text, yes string) *slack.ConfirmationBlockObject {
		return slack.NewConfirmationBlockObject(txt("plain_text", title), txt("plain_text", text), txt("plain_text", yes), txt("plain_text", "Cancel"))
	}
	many := make([]slack.Block, 51)
	for i := range many {
		many[i] = slack.NewDividerBlock()
	}
	x := strings.Repeat
	for _, tc := range []struct {
		name, text, blocks, code, problem string
	}{
		{"fine", "t", blocks(slack.NewSectionBlock(txt("mrkdwn", x("é", 3000)), nil, nil), button(x("b", 75), x("v", 2000), confirm(x("t", 100), x("c", 300), x("y", 30)))), "", ""},
		{"51 blocks", "", blocks(many...), "invalid_blocks", "no more than 50 items allowed"},
		{"section text", "", blocks(slack.NewSectionBlock(txt("mrkdwn", x("é", 3001)), nil, nil)), "invalid_blocks", "must be less than 3001 characters"},
		{"empty section text", "", blocks(slack.NewSectionBlock(txt("mrkdwn", ""), nil, nil)), "invalid_blocks", "must be more than 0 characters"},
		{"header", "", blocks(slack.NewHeaderBlock(txt("plain_text", x("h", 151)))), "invalid_blocks", "must be less than 151 characters"},
		{"mrkdwn header", "", blocks(slack.NewHeaderBlock(txt("mrkdwn", "h"))), "invalid_blocks", "must be plain_text"},
		{"field", "", blocks(slack.NewSectionBlock(nil, []*slack.TextBlockObject{txt("mrkdwn", x("f", 2001))}, nil)), "invalid_blocks", "must be less than 2001 characters"},
		{"context text", "", blocks(slack.NewContextBlock("", txt("mrkdwn", x("c", 3001)))), "invalid_blocks", "must be less than 3001 characters"},
		{"button text", "", blocks(button(x("b", 76), "v", nil)), "invalid_blocks", "must be less than 76 characters"},
		{"button value", "", blocks(button("b", x("v", 2001), nil)), "invalid_blocks", "at most 2000 characters"},
		{"confirm title", "", blocks(button("b", "v", confirm(x("t", 101), "c", "y"))), "invalid_blocks", "confirm/title/text"},
		{"confirm text", "", blocks(button("b", "v", confirm("t", x("c", 301), "y"))), "invalid_blocks", "confirm/text/text"},
		{"confirm button", "", blocks(button("b", "v", confirm("t", "c", x("y", 31)))), "invalid_blocks", "confirm/confirm/text"},
		{"no text", "", "", "no_text", ""},
		{"long text", x("m", 40001), "", "msg_too_long", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, problems := Check(tc.text, tc.blocks)
			if code != tc.code || !strings.Contains(strings.Join(problems, "\n"), tc.problem) {
				t.Fatalf("Check = %q %q, want %q with %q", code, problems, tc.code, tc.problem)
			}
		})
	}
}

// TestMentionsOnlyWhereSlackParsesThem: mrkdwn text and message text notify, plain_text does not.
func TestMentionsOnlyWhereSlackParsesThem(t *testing.T) {
	b, _ := json.Marshal([]slack.Block{
		slack.NewHeaderBlock(slack.NewTextBlockObject("plain_text", "<!channel> in a header", false, false)),
		slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", "hi <@U0BOB> and &lt;!here&gt;", false, false), nil, nil),
	})
	got := mentions("<!subteam^S0ONCALL>", b)
	if strings.Join(got, " ") != "<!subteam^S0ONCALL> <@U0BOB>" {
		t.Fatalf("mentions = %q", got)
	}
}
