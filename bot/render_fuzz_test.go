package bot

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// hostile are alert contents that try to notify, link, format, break a code block or a limit.
var hostile = []string{
	"<!channel>", "<!here> <!everyone>", "<@U123> <@W0ENT|bob>", "<!subteam^S0ONCALL>", "<https://evil.example|click here>",
	"<mailto:a@b.c|mail>", "<#C0PIPE>", "```", "```<!channel>```", "`code` and ``double``", "*bold* _italic_ ~strike~",
	"_client_replied_sms_", "line one\nline two\r\nthree\ttab", "\x00\x07\x1b[31mred", "\xff\xfe invalid \xc3", "\u2028sep\u2029",
	strings.Repeat("a", 10000), strings.Repeat("&", 5000), strings.Repeat("<", 3001), strings.Repeat("`", 4000),
	strings.Repeat("é", 3000), strings.Repeat("*_", 2000), "&lt;!channel&gt; already escaped", "> quote\n>>> block quote",
}

// incidents is an in-memory commands.Incidents holding one incident.
type incidents struct{ inc *state.Incident }

func (f incidents) Get(_ context.Context, id string) (*state.Incident, error) {
	if state.NormalizeID(id) != f.inc.ID {
		return nil, state.ErrNotFound
	}
	return f.inc, nil
}
func (f incidents) ListOpen(context.Context, string) ([]*state.Incident, error) {
	return []*state.Incident{f.inc, f.inc, f.inc}, nil
}
func (f incidents) ByThread(context.Context, string, string) (string, error) { return f.inc.ID, nil }
func (f incidents) Timeline(context.Context, string, int64) ([]state.Event, error) {
	var out []state.Event
	for i := range 15 {
		out = append(out, state.Event{At: time.Unix(int64(i), 0), Event: "note", Actor: f.inc.AckBy, Detail: f.inc.Title})
	}
	return out, nil
}
func (incidents) Acknowledge(context.Context, string, string) error     { return nil }
func (incidents) Resolve(context.Context, string, string, string) error { return nil }
func (incidents) Merge(context.Context, string, string, string) error   { return nil }

// message is one rendered message: its text and blocks as sent to Slack.
type message struct {
	kind   string
	text   string
	blocks []slack.Block
}

// everyMessage renders content into every kind of message and reply the bot sends.
func everyMessage(content string) []message {
	inc := &state.Incident{ID: "INC-7", Title: content, Key: content, Severity: 1, Pipeline: "sms-replies", Channel: "C0PIPE",
		Status: state.StatusAcknowledged, AckBy: content, Count: 12, FirstSeen: time.Unix(1, 0), LastSeen: time.Unix(2, 0),
		Previous: "INC-6", MergedFrom: []string{"INC-5"}, AllResolved: true,
		Alerts: map[string]state.AlertState{content: {Status: "firing"}, "fp2": {Status: "resolved"}}}
	var out []message
	out = append(out, message{"root", rootText(inc), rootBlocks(inc)})
	for _, d := range []state.Delivery{
		{Kind: state.KindFlush, Count: 3, Detail: content},
		{Kind: state.KindEvent, Event: "resolved", Actor: content, Detail: content},
		{Kind: state.KindEvent, Event: "acknowledged", Actor: content},
		{Kind: state.KindEvent, Event: "merged_into", Detail: content},
		{Kind: state.KindEvent, Event: "merged_from", Detail: content, Count: 2},
		{Kind: state.KindEvent, Event: "remediation", Detail: content},
		{Kind: state.KindEvent, Event: "all_resolved", Actor: "probe", Detail: content},
		{Kind: state.KindEvent, Event: content, Actor: content},
	} {
		out = append(out, message{"thread " + d.Event, threadText(d), nil})
	}
	verdict := commands.Reply{Text: content, Sections: []commands.Section{
		{Title: content, Lines: []string{content, content, content}, Pre: true},
		{Lines: []string{content, "- evidence: " + content}},
	}}
	out = append(out, message{"thread note", threadText(state.Delivery{Kind: state.KindEvent, Event: "note", Detail: commands.EncodeReply(verdict)}), nil})
	out = append(out, message{"notice", noticeText(content), nil}, message{"reply notice", noticeText(commands.EncodeReply(verdict)), nil})
	h := commands.New("/streamwatch", incidents{inc})
	for _, text := range []string{"incident list", "incident list all", "incident show INC-7", "incident show", content, "incident show " + content} {
		r := h.Handle(context.Background(), commands.Request{UserID: "U1", ChannelID: "C0PIPE", Text: text})
		t, b := replyBlocks(r)
		out = append(out, message{"reply to " + clip(text, 20), t, b})
	}
	t, b := replyBlocks(verdict)
	out = append(out, message{"reply verdict", t, b})
	big := commands.Reply{Text: content, Actions: []commands.Action{{ID: "x", Label: content, Command: content, Confirm: content, Danger: true}}}
	for range 60 {
		big.Sections = append(big.Sections, commands.Section{Title: content, Lines: []string{content}, Pre: len(big.Sections)%2 == 0})
	}
	t, b = replyBlocks(big)
	out = append(out, message{"reply with 60 sections and a button", t, b})
	return out
}

var fences = regexp.MustCompile("```")

// inert fails unless a mrkdwn string is safe: no < or > at all (every mention, link and
// special form needs them), code blocks balanced with no backtick inside, no run of
// backticks outside.
func inert(t *testing.T, where, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%s: invalid UTF-8: %q", where, s)
	}
	if strings.ContainsAny(s, "<>") {
		t.Fatalf("%s: unescaped < or > survives: %q", where, clip(s, 300))
	}
	parts := fences.Split(s, -1)
	if len(parts)%2 == 0 {
		t.Fatalf("%s: an unclosed code block: %q", where, clip(s, 300))
	}
	for i, p := range parts {
		if i%2 == 1 && strings.Contains(p, "`") {
			t.Fatalf("%s: a backtick inside a code block: %q", where, clip(p, 300))
		}
		if i%2 == 0 && strings.Contains(p, "``") {
			t.Fatalf("%s: a run of backticks outside code blocks: %q", where, clip(p, 300))
		}
	}
}

func checkMessage(t *testing.T, m message) {
	t.Helper()
	if strings.HasPrefix(m.kind, "thread") && m.text == "" {
		return // no thread reply is posted (deliver skips empty ones)
	}
	raw := ""
	if len(m.blocks) > 0 {
		b, err := json.Marshal(m.blocks)
		if err != nil {
			t.Fatalf("%s: blocks do not marshal: %v", m.kind, err)
		}
		raw = string(b)
	}
	if code, problems := slackfake.Check(m.text, raw); code != "" {
		t.Fatalf("%s: Slack would answer %s: %q", m.kind, code, problems)
	}
	if runes(m.text) > maxThreadText {
		t.Fatalf("%s: text of %d characters", m.kind, runes(m.text))
	}
	inert(t, m.kind+" text", m.text)
	for _, s := range slackfake.MrkdwnTexts(json.RawMessage(raw)) {
		inert(t, m.kind+" block", s)
	}
}

// FuzzHostileContent renders arbitrary alert content into every message kind and asserts
// Slack's limits and that nothing in it can mention, link or break out of a code block.
func FuzzHostileContent(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		for _, m := range everyMessage(content) {
			checkMessage(t, m)
		}
	})
}

// TestMrkdwnIsInertAndReadable: formatting characters at a word's edge get a zero-width space,
// inside a word they stay as they are; escapes and cuts never split an entity.
func TestMrkdwnIsInertAndReadable(t *testing.T) {
	for in, want := range map[string]string{
		"*bold* _it_ ~st~":   "*\u200bbold*\u200b _\u200bit_\u200b ~\u200bst~\u200b",
		"client_replied_sms": "client_replied_sms",
		"a ``` b":            "a `\u200b`\u200b`\u200b b",
		"`x`":                "`x`",
		"<!channel> & co":    "&lt;!channel&gt; &amp; co",
		"bad \xff byte":      "bad \uFFFD byte",
	} {
		if got := mrkdwn(in); got != want {
			t.Errorf("mrkdwn(%q) = %q, want %q", in, got, want)
		}
	}
	if got := pre("``` <@U1>"); got != "ˋˋˋ &lt;@U1&gt;" {
		t.Errorf("pre = %q", got)
	}
	if got := clip("ab&amp;cd", 5); got != "ab…" {
		t.Errorf("clip inside an entity = %q", got)
	}
	if got := clip(strings.Repeat("é", 10), 4); got != "ééé…" || !utf8.ValidString(got) {
		t.Errorf("clip of runes = %q", got)
	}
}

func TestEveryMessageOfHostileContent(t *testing.T) {
	for _, s := range hostile {
		for _, m := range everyMessage(s) {
			checkMessage(t, m)
		}
	}
	// Readable: the title is there, literally, in the reply to incident show.
	for _, m := range everyMessage("disk <full> & *slow*") {
		if m.kind == "reply to incident show INC-7" && !strings.Contains(m.text, "disk &lt;full&gt; &amp; *\u200bslow*\u200b") {
			t.Errorf("show: %q", m.text)
		}
	}
}
