package commands

import (
	"context"
	"strings"
	"testing"
)

// fullGrammar is the handler with every command the app registers.
func fullGrammar() *Handler {
	h := New("/streamwatch", nil)
	h.RegisterHealth(nil)
	h.RegisterKafka(nil)
	h.RegisterCheckpoint(nil)
	h.RegisterDiagnose(nil)
	h.RegisterWatch(nil)
	h.RegisterAudit(nil)
	h.RegisterIncidentDiagnose(nil)
	h.RegisterRemediation(nil, nil)
	h.RegisterLifecycle(nil)
	h.RegisterSilences(nil)
	h.RegisterPostmortem(nil)
	h.RegisterChart(nil, nil)
	return h
}

// TestEveryCommandHasHelp: each command of the grammar has its words in render_help.go's
// table (a summary, an example, a group, who may run it); no entry names a command that does
// not exist.
func TestEveryCommandHasHelp(t *testing.T) {
	h := fullGrammar()
	paths := map[string]bool{}
	for _, c := range h.Commands() {
		paths[c.Path] = true
		ch, ok := commandHelps[c.Path]
		if !ok || ch.summary == "" || ch.example == "" || ch.may == "" || ch.group == "" || c.Summary != ch.summary || c.Example != ch.example {
			t.Errorf("%q has no entry in commands/render_help.go with a summary, an example, a group and who may run it", c.Path)
		}
	}
	for p := range commandHelps {
		if !paths[p] {
			t.Errorf("help entry %q names no command", p)
		}
	}
}

func TestHelp(t *testing.T) {
	h := fullGrammar()
	text := func(r Reply) string {
		var b strings.Builder
		b.WriteString(r.Text + "\n")
		for _, s := range r.Sections {
			b.WriteString("## " + s.Title + "\n" + strings.Join(s.Text(), "\n") + "\n")
		}
		return b.String()
	}
	all, _ := h.Dispatch(context.Background(), Request{Text: "help"})
	var titles []string
	for _, s := range all.Sections {
		titles = append(titles, s.Title)
	}
	if strings.Join(titles, ",") != strings.Join(helpGroups, ",") {
		t.Errorf("help groups %q, want %q", titles, helpGroups)
	}
	if got := text(all); !strings.Contains(got, "/streamwatch incident resolve [ID] [note…]") || !strings.Contains(got, "/streamwatch checkpoint repair") {
		t.Errorf("help lacks commands:\n%s", got)
	}

	one, _ := h.Dispatch(context.Background(), Request{Text: "help checkpoint repair"})
	got := text(one)
	for _, want := range []string{
		"## Usage\n/streamwatch checkpoint repair PIPELINE [--confirm PLAN [--force REASON…]]",
		"## Examples\n/streamwatch checkpoint repair sms-replies\n/streamwatch checkpoint repair sms-replies --confirm P-7\n",
		"## Who may run it\nthe dry run: anyone who may use commands in this channel (slack.allowed_channels); --confirm and --force: only the remediators",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("help checkpoint repair lacks %q:\n%s", want, got)
		}
	}
	some, _ := h.Dispatch(context.Background(), Request{Text: "help incident"})
	if got := text(some); !strings.Contains(got, "incident ack") || strings.Contains(got, "silence expire") {
		t.Errorf("help incident lists:\n%s", got)
	}
	none, _ := h.Dispatch(context.Background(), Request{Text: "help frobnicate"})
	if !none.Usage || !strings.Contains(none.Text, `no command starts with "frobnicate"`) {
		t.Errorf("help frobnicate: %+v", none)
	}
}
