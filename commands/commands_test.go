package commands_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/state"
)

func newHandler(t *testing.T) (*commands.Handler, *state.Store) {
	t.Helper()
	rdb, prefix := testredis.Client(t)
	st := state.New(rdb, prefix)
	return commands.New("/streamwatch", st), st
}

func TestParse(t *testing.T) {
	h, _ := newHandler(t)
	cases := []struct {
		text     string
		path     string
		args     []string
		errLike  string
		usageHas string
	}{
		{text: "", path: "help"},
		{text: "help", path: "help"},
		{text: "HELP incident", path: "help", args: []string{"incident"}},
		{text: "incident list", path: "incident list"},
		{text: "  incident   show   INC-4 ", path: "incident show", args: []string{"INC-4"}},
		{text: "incident resolve INC-4 ACL restored by storage team", path: "incident resolve", args: strings.Fields("INC-4 ACL restored by storage team")},
		{text: "incident merge 3 2", path: "incident merge", args: []string{"3", "2"}},
		{text: "incident merge 3", errLike: "takes arguments FROM INTO", usageHas: "/streamwatch incident merge FROM INTO"},
		{text: "incident list all", path: "incident list", args: []string{"all"}},
		{text: "incident list all mine sev1 open pipeline=p after=INC-1 extra", errLike: "takes arguments [all] [mine] [sev1…sev5] [open|acked] [pipeline=NAME]"},
		{text: "incident frob", errLike: `unknown command "incident frob"`, usageHas: "/streamwatch incident show [ID]"},
		{text: "frobnicate now", errLike: `unknown command "frobnicate now"`, usageHas: "/streamwatch help"},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			cmd, args, err := h.Parse(c.text)
			if c.errLike != "" {
				ue, ok := err.(*commands.UsageError)
				if !ok || !strings.Contains(ue.Msg, c.errLike) {
					t.Fatalf("err = %v, want usage error like %q", err, c.errLike)
				}
				if c.usageHas != "" && !strings.Contains(strings.Join(ue.Usages, "\n"), c.usageHas) {
					t.Fatalf("usages %v lack %q", ue.Usages, c.usageHas)
				}
				return
			}
			if err != nil || cmd.Path != c.path || strings.Join(args, " ") != strings.Join(c.args, " ") {
				t.Fatalf("Parse(%q) = %v %v %v, want %s %v", c.text, cmd, args, err, c.path, c.args)
			}
		})
	}
}

func TestHandleAnswersUsageNeverPanics(t *testing.T) {
	h, _ := newHandler(t)
	ctx := context.Background()
	r := h.Handle(ctx, commands.Request{ChannelID: "C1", Text: "incident merge"})
	if !r.Usage || !strings.Contains(r.Sections[0].Lines[1], "incident merge FROM INTO") {
		t.Fatalf("reply %+v", r)
	}
	r = h.Handle(ctx, commands.Request{ChannelID: "C1", Text: "incident merge x y"})
	if !r.Usage || !strings.Contains(r.Text, `"x" is not an incident id`) {
		t.Fatalf("reply %+v", r)
	}
	r = h.Handle(ctx, commands.Request{ChannelID: "C1", Text: "incident ack"})
	if !r.Usage || !strings.Contains(r.Text, "no open incident") {
		t.Fatalf("ack without incident: %+v", r)
	}
	r = h.Handle(ctx, commands.Request{ChannelID: "C1", Text: "incident show INC-77"})
	if r.Text != "Sorry: incident INC-77 does not exist." {
		t.Fatalf("show missing: %q", r.Text)
	}
}

func TestIncidentCommandsFindTheirIncident(t *testing.T) {
	h, st := newHandler(t)
	ctx := context.Background()
	rec := func(key, ch string) {
		if _, err := st.RecordAlert(ctx, state.AlertRecord{Key: key, Fingerprint: key, Title: "t " + key, Severity: 2, Channel: ch}); err != nil {
			t.Fatal(err)
		}
	}
	rec("a", "C1")
	rec("b", "C2")
	rec("c", "C2")
	// One open incident in C1: the id may be left out.
	r := h.Handle(ctx, commands.Request{ChannelID: "C1", UserName: "alice", Text: "incident ack"})
	if r.Text != "INC-1 acknowledged." {
		t.Fatalf("ack: %+v", r)
	}
	// Two in C2: the reply names them, newest first.
	r = h.Handle(ctx, commands.Request{ChannelID: "C2", Text: "incident resolve done"})
	if !r.Usage || !strings.Contains(r.Text, "INC-3, INC-2") {
		t.Fatalf("ambiguous resolve: %+v", r)
	}
	r = h.Handle(ctx, commands.Request{ChannelID: "C2", UserName: "bob", Text: "incident resolve INC-3 storage ACL fixed"})
	if r.Text != "INC-3 resolved." {
		t.Fatalf("resolve: %+v", r)
	}
	inc, _ := st.Get(ctx, "INC-3")
	if inc.Note != "storage ACL fixed" || inc.ResolvedBy != "bob" {
		t.Fatalf("stored: %+v", inc)
	}
	r = h.Handle(ctx, commands.Request{ChannelID: "C2", Text: "incident list"})
	if !strings.Contains(r.Text, "1 open incident in this channel") || !strings.Contains(strings.Join(r.Sections[0].Lines, "\n"), "SEV2 high") {
		t.Fatalf("list: %+v", r)
	}
	r = h.Handle(ctx, commands.Request{ChannelID: "C2", Text: "incident list all"})
	if !strings.Contains(r.Text, "Open incidents in the channels you are a member of, newest first") ||
		len(r.Sections[0].Lines) != 3 || !strings.HasPrefix(r.Sections[0].Lines[1], "INC-2    C2") {
		t.Fatalf("list all: %+v", r)
	}
	r = h.Handle(ctx, commands.Request{ChannelID: "C1", Text: "incident show"})
	all := r.Text
	for _, s := range r.Sections {
		all += "\n" + strings.Join(s.Lines, "\n")
	}
	for _, want := range []string{"INC-1: t a", "acknowledged by alice", "Occurrences: 1", "opened", "acknowledged by alice"} {
		if !strings.Contains(all, want) {
			t.Fatalf("show lacks %q:\n%s", want, all)
		}
	}
}

// TestDispatchNamesTheCommand: the grammar's path of the command that ran, "" for text that
// does not fit (a usage answer), parsed once.
func TestDispatchNamesTheCommand(t *testing.T) {
	h := commands.New("/streamwatch", nil)
	for text, want := range map[string]string{"help": "help", "help incident": "help", "frobnicate": "", "frobnicate now": ""} {
		r, path := h.Dispatch(context.Background(), commands.Request{Text: text})
		if path != want || (want == "") != r.Usage {
			t.Errorf("Dispatch(%q) = %q (usage %v), want %q", text, path, r.Usage, want)
		}
	}
}

// TestTableLines: columns as wide as their widest cell, two spaces apart, numbers to the
// right, no trailing spaces; a section's text is its lines, its table, then the rest.
func TestTableLines(t *testing.T) {
	tb := &commands.Table{Header: []string{"PART", "LAG", "MEMBER"}, Right: []bool{true, true, false},
		Rows: [][]string{{"0", "1,234", "consumer-1"}, {"12", "7", ""}}}
	s := commands.Section{Lines: []string{"head", ""}, Table: tb, After: []string{"total: 1,241"}}
	want := []string{"head", "", "PART    LAG  MEMBER", "   0  1,234  consumer-1", "  12      7", "total: 1,241"}
	if got := s.Text(); !slices.Equal(got, want) {
		t.Fatalf("text =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestIncidentShowInTimeZone: incident show writes its times in slack.time_zone, as every
// other reply does, not in UTC.
func TestIncidentShowInTimeZone(t *testing.T) {
	h, st := newHandler(t)
	ctx := context.Background()
	st.SetClock(func() time.Time { return time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC) })
	if _, err := st.RecordAlert(ctx, state.AlertRecord{Key: "a", Fingerprint: "a", Title: "t a", Severity: 2, Channel: "C1"}); err != nil {
		t.Fatal(err)
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	human.SetZone(paris)
	t.Cleanup(func() { human.SetZone(nil) })
	r := h.Handle(ctx, commands.Request{ChannelID: "C1", Text: "incident show INC-1"})
	all := r.Text
	for _, s := range r.Sections {
		all += "\n" + strings.Join(s.Lines, "\n")
	}
	if !strings.Contains(all, "First seen: 2026-11-30 11:41:05 CET") || strings.Contains(all, "10:41:05Z") {
		t.Fatalf("incident show in Europe/Paris:\n%s", all)
	}
}
