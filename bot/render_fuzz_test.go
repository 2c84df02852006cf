package bot

import (
	"context"
	"encoding/json"
	"net/url"
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
func (f incidents) ListPage(context.Context, string, state.ListFilter, string, int) (*state.Page, error) {
	return &state.Page{Incidents: []*state.Incident{f.inc, f.inc, f.inc}, Open: 40, More: true, Next: f.inc.ID}, nil
}
func (f incidents) Unacknowledge(context.Context, string, string) error      { return nil }
func (f incidents) Reopen(context.Context, string, string) error             { return nil }
func (f incidents) Unmerge(context.Context, string, string) error            { return nil }
func (f incidents) ByThread(context.Context, string, string) (string, error) { return f.inc.ID, nil }
func (f incidents) Timeline(context.Context, string, int64) ([]state.Event, error) {
	var out []state.Event
	for i := range 15 {
		out = append(out, state.Event{At: time.Unix(int64(i), 0), Name: "note", Actor: f.inc.AckBy, Detail: f.inc.Title})
	}
	return out, nil
}
func (incidents) Acknowledge(context.Context, string, string) error     { return nil }
func (incidents) Resolve(context.Context, string, string, string) error { return nil }
func (incidents) Merge(context.Context, string, string, string) error   { return nil }

// silences is an in-memory commands.Silences holding one silence of each kind.
type silences struct{ list []*state.Silence }

func (f silences) SilenceIncident(context.Context, string, time.Time, state.Maker, string) (string, error) {
	return "SIL-1", nil
}
func (f silences) CreateSilence(context.Context, []state.Matcher, time.Time, state.Maker, string) (string, error) {
	return "SIL-2", nil
}
func (f silences) CreateSilenceFrom(context.Context, []state.Matcher, time.Time, time.Time, state.Maker, string) (string, error) {
	return "SIL-2", nil
}
func (f silences) ExtendSilence(context.Context, string, time.Duration, string) (time.Time, error) {
	return time.Time{}, nil
}
func (f silences) PreviewSilence(context.Context, []state.Matcher) ([]state.PreviewHit, int, error) {
	return nil, 0, nil
}
func (f silences) ExpireSilence(context.Context, string, string) (string, string, error) {
	return "", "", nil
}
func (f silences) GetSilence(context.Context, string) (*state.Silence, error) { return f.list[0], nil }
func (f silences) ActiveSilences(context.Context) ([]*state.Silence, error)   { return f.list, nil }

// lifecycle accepts every severity and owner.
type lifecycle struct{}

func (lifecycle) SetSeverity(context.Context, string, int, string) error       { return nil }
func (lifecycle) Assign(context.Context, string, string, string, string) error { return nil }

// postmortem is an in-memory commands.Postmortem.
type postmortem struct {
	tl       []state.Event
	contexts map[string]state.AlertContext
	audit    []state.AuditEntry
}

func (f postmortem) FullTimeline(context.Context, string) ([]state.Event, int64, error) {
	return f.tl, 3, nil
}
func (f postmortem) AlertContexts(context.Context, string) (map[string]state.AlertContext, error) {
	return f.contexts, nil
}
func (f postmortem) AuditTrail(context.Context, func(state.AuditEntry) bool, int, int) ([]state.AuditEntry, error) {
	return f.audit, nil
}

// message is one rendered message: its text and blocks as sent to Slack, and the mentions it
// is meant to carry (escalation, owner), which come from ids, never from content.
type message struct {
	kind     string
	text     string
	blocks   []slack.Block
	mentions []string
}

// mentionOf is what mention renders of a user id given as content: nothing unless it is one.
func mentionOf(content string) []string {
	if m := mention(content); m != "" && content[0] != 'S' {
		return []string{m}
	}
	return nil
}

// everyMessage renders content into every kind of message and reply the bot sends.
func everyMessage(content string) []message {
	links := map[string]string{"runbook": content, "dashboard": "https://grafana.example/d/" + content, "panel": "javascript:" + content,
		"generator": "http://" + content, "silence": "https://user:pw@grafana.example/" + content}
	inc := &state.Incident{ID: "INC-7", Title: content, Key: content, Severity: 1, Pipeline: "sms-replies", Channel: "C0PIPE",
		Status: state.StatusAcknowledged, AckBy: content, Count: 12, FirstSeen: time.Unix(1, 0), LastSeen: time.Unix(2, 0),
		Previous: "INC-6", MergedFrom: []string{"INC-5"}, AllResolved: true,
		Alerts: map[string]state.AlertState{content: {Status: "firing"}, "fp2": {Status: "resolved"}},
		Links:  links, Owner: content, OwnerName: content, OwnerBy: content, SeverityBy: content, EscalatedAt: time.Unix(3, 0),
		EscalatedTo: []string{content}, Silence: &state.IncidentSilence{ID: content, Until: time.Unix(9, 0), By: content, Reason: content},
		AckAt: time.Unix(2, 0), Detect: content, DetectState: "active"}
	var out []message
	out = append(out, message{"root", rootText(inc), rootBlocks(inc, ""), mentionOf(content)})
	silenced := *inc
	silenced.Silence = &state.IncidentSilence{ID: "SIL-3", By: content, Reason: content}
	silenced.Owner = "U0BOB"
	out = append(out, message{"root silenced", rootText(&silenced), rootBlocks(&silenced, ""), []string{"<@U0BOB>"}})
	recovered := *inc
	recovered.DetectState = "recovered"
	out = append(out, message{"root recovered", rootText(&recovered), rootBlocks(&recovered, ""), mentionOf(content)})
	ev := func(kind string, e state.Event) state.Delivery {
		return state.Delivery{Kind: kind, Incident: content, Event: e}
	}
	for _, d := range []state.Delivery{
		ev(state.KindFlush, state.Event{Count: 3, Detail: content}),
		ev(state.KindEvent, state.Event{Name: "resolved", Actor: content, Note: content}),
		ev(state.KindEvent, state.Event{Name: "acknowledged", Actor: content}),
		ev(state.KindEvent, state.Event{Name: "merged_into", Other: content}),
		ev(state.KindEvent, state.Event{Name: "merged_from", Other: content, Count: 2}),
		ev(state.KindEvent, state.Event{Name: "remediation", Detail: content}),
		ev(state.KindEvent, state.Event{Name: "all_resolved", Actor: "probe", Detail: content}),
		ev(state.KindEvent, state.Event{Name: content, Actor: content}),
		ev(state.KindFlush, state.Event{Name: "news", Distinct: 12, News: []state.News{{Kind: "joined", Detail: content},
			{Kind: "labels", Detail: content}, {Kind: content, Detail: content}, {Kind: content}}}),
		ev(state.KindEvent, state.Event{Name: "silenced", Actor: content, Silence: content, Reason: content}),
		ev(state.KindEvent, state.Event{Name: "silence_expired", Actor: content, Silence: content, By: content, Reason: content, Count: 3}),
		ev(state.KindEvent, state.Event{Name: "silence_ended", Actor: content, Silence: content}),
		ev(state.KindEvent, state.Event{Name: "severity", Actor: content, Severity: 9, Was: 9}),
		ev(state.KindEvent, state.Event{Name: "assigned", Actor: content, OwnerName: content}),
		ev(state.KindEvent, state.Event{Name: "detected", Detail: content}),
		ev(state.KindEvent, state.Event{Name: "recovered", Detail: content, Firing: 2, Names: []string{content}}),
		ev(state.KindEvent, state.Event{Name: "correlated", Title: content, Pipeline: content}),
		ev(state.KindFlush, state.Event{Name: "news", Distinct: 3, News: []state.News{{Kind: "correlated", Title: content, Pipeline: content},
			{Kind: "detected", Detail: content}, {Kind: "recovered", Detail: content, Names: `["` + strings.ReplaceAll(content, `"`, `'`) + `"]`}}}),
		ev(state.KindEvent, state.Event{Name: "flood_over", Limit: 20, Quiet: time.Minute}),
	} {
		out = append(out, message{"thread " + d.Name, threadText(d), nil, nil})
	}
	// The lifecycle messages that mention people: only the ids they were given, never content.
	for _, m := range []struct {
		d    state.Delivery
		want []string
	}{
		{ev(state.KindEvent, state.Event{Name: "escalated", Mention: append([]string{"S0ONCALL", "U0LEAD"}, strings.Split(content, ",")...), After: time.Minute}),
			append([]string{"<!subteam^S0ONCALL>", "<@U0LEAD>"}, escalationOf(content)...)},
		{ev(state.KindEvent, state.Event{Name: "assigned", Actor: content, Owner: content, OwnerName: content}), mentionOf(content)},
		{ev(state.KindEvent, state.Event{Name: "assigned", Actor: content, Owner: "U0BOB", OwnerName: content}), []string{"<@U0BOB>"}},
	} {
		out = append(out, message{"thread " + m.d.Name, threadText(m.d), nil, m.want})
	}
	verdict := commands.Reply{Text: content, Sections: []commands.Section{
		{Title: content, Lines: []string{content, content, content}, Pre: true},
		{Lines: []string{content, "- evidence: " + content}},
	}}
	out = append(out, message{"thread note", threadText(state.Delivery{Kind: state.KindEvent, Event: state.Event{Name: "note", Detail: commands.EncodeReply(verdict)}}), nil, nil})
	out = append(out, message{"notice", noticeText(content), nil, nil}, message{"reply notice", noticeText(commands.EncodeReply(verdict)), nil, nil})
	h := commands.New("/streamwatch", incidents{inc})
	h.RegisterSilences(silences{[]*state.Silence{
		{ID: content, Kind: state.SilenceLabels, Matchers: content, By: content, Reason: content, Hits: 3,
			Alerts: []state.SilencedAlert{{Fingerprint: content, Key: content, Title: content, Count: 2}}},
		{ID: "SIL-2", Kind: state.SilenceIncident, Incident: content, By: content, Reason: content},
	}})
	h.RegisterLifecycle(lifecycle{})
	h.RegisterPostmortem(postmortem{
		tl:       []state.Event{{At: time.Unix(1, 0), Name: content, Actor: content, Detail: content}, {Name: "note", Actor: content, Detail: content}},
		contexts: map[string]state.AlertContext{content: {Title: content, Labels: map[string]string{content: content}, Annotations: map[string]string{"a": content}, Links: links}},
		audit:    []state.AuditEntry{{At: time.Unix(5, 0), Actor: content, Action: content, Target: content, Outcome: "refused", Detail: content, Via: content}},
	})
	for _, text := range []string{"incident list", "incident list all", "incident show INC-7", "incident show", content, "incident show " + content,
		"silences", "status", "silence " + content + " for 1h " + content, "incident silence INC-7 for " + content, "incident assign INC-7 " + content} {
		r := h.Handle(context.Background(), commands.Request{UserID: "U1", ChannelID: "C0PIPE", Text: text})
		t, b := replyBlocks(r)
		out = append(out, message{"reply to " + clip(text, 20), t, b, nil})
	}
	pm := h.Handle(context.Background(), commands.Request{UserID: "U1", UserName: content, ChannelID: "C0PIPE", Text: "incident postmortem INC-7"})
	if pm.File != nil {
		out = append(out, message{"postmortem file comment", fileComment(*pm.File), nil, nil},
			message{kind: "postmortem draft", text: pm.File.Content})
	}
	t, b := replyBlocks(verdict)
	out = append(out, message{"reply verdict", t, b, nil})
	big := commands.Reply{Text: content, Actions: []commands.Action{{ID: "x", Label: content, Command: content, Confirm: content, Danger: true}}}
	for range 60 {
		big.Sections = append(big.Sections, commands.Section{Title: content, Lines: []string{content}, Pre: len(big.Sections)%2 == 0})
	}
	t, b = replyBlocks(big)
	out = append(out, message{"reply with 60 sections and a button", t, b, nil})
	return out
}

// escalationOf is what an escalation renders of ids given as content (the list of ids it is
// given comes from slack.escalation.mention, comma-separated): a mention for each that is one.
func escalationOf(content string) []string {
	var out []string
	for _, id := range strings.Split(content, ",") {
		if m := mention(strings.TrimSpace(id)); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// draftHeadings are the only headings a postmortem draft has.
var draftHeadings = regexp.MustCompile(`^(# Postmortem draft: INC-7 — |## (Summary|Impact window|Response|Timeline|Alerts|Diagnoses|Human actions and remediations|Follow-ups)$)`)

// unescapedPipe is a | that is not escaped.
var unescapedPipe = regexp.MustCompile(`(^|[^\\])\|`)

// checkDraft fails unless a postmortem draft keeps content inert: its own headings only, table
// rows of four cells, no Markdown links, and angle brackets only around http(s) autolinks.
func checkDraft(t *testing.T, draft string) {
	t.Helper()
	if !utf8.ValidString(draft) {
		t.Fatalf("draft: invalid UTF-8")
	}
	for _, l := range strings.Split(draft, "\n") {
		if strings.HasPrefix(l, "#") && !draftHeadings.MatchString(l) {
			t.Fatalf("draft: a heading of its own: %q", clip(l, 200))
		}
		if strings.HasPrefix(l, "| ") && len(unescapedPipe.FindAllString(l, -1)) != 5 {
			t.Fatalf("draft: a table row of more cells: %q", clip(l, 300))
		}
		if regexp.MustCompile(`(^|[^\\])\]\(`).MatchString(l) {
			t.Fatalf("draft: a Markdown link: %q", clip(l, 300))
		}
		for i := strings.IndexByte(l, '<'); i >= 0; i = next(l, i) {
			rest := l[i+1:]
			end := strings.IndexByte(rest, '>')
			if end < 0 || safeURL(rest[:end]) == "" {
				t.Fatalf("draft: an angle bracket that is not a safe autolink: %q", clip(l, 300))
			}
		}
	}
}

func next(l string, i int) int {
	j := strings.IndexByte(l[i+1:], '<')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// checkURLs fails unless every button URL in raw blocks is http or https with a host and no
// credentials.
func checkURLs(t *testing.T, kind, raw string) {
	t.Helper()
	for _, m := range regexp.MustCompile(`"url":"((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(raw, -1) {
		var u string
		if err := json.Unmarshal([]byte(`"`+m[1]+`"`), &u); err != nil {
			t.Fatalf("%s: url %q: %v", kind, m[1], err)
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
			t.Fatalf("%s: a button links to %q", kind, u)
		}
	}
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
	if m.kind == "postmortem draft" {
		checkDraft(t, m.text)
		return
	}
	// The mentions a message is meant to carry, and no other.
	raw0, _ := json.Marshal(m.blocks)
	rendered := strings.Join(slackfake.MrkdwnTexts(raw0), "\n")
	for _, w := range m.mentions {
		if !strings.Contains(m.text, w) && !strings.Contains(rendered, w) {
			t.Fatalf("%s: the mention %s is missing: %q", m.kind, w, clip(m.text, 300))
		}
		m.text = strings.ReplaceAll(m.text, w, "")
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
		for _, w := range m.mentions {
			s = strings.ReplaceAll(s, w, "")
		}
		inert(t, m.kind+" block", s)
	}
	checkURLs(t, m.kind, raw)
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
