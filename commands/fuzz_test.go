package commands_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/driverlog"
	"github.com/streamwatch/streamwatch/integrations/kafka"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// The integrations behind the non-incident commands answer at once, without a network: the
// fuzz targets are about the grammar and the argument checks in front of them.
var errStub = errors.New("stub integration")

type stubs struct{}

func (stubs) Names() []string { return []string{"sms-replies"} }
func (stubs) Probe(_ context.Context, p string) (probe.Result, error) {
	return probe.Result{Pipeline: p, Status: probe.StatusOK}, nil
}
func (stubs) History(context.Context, string, int64) ([]state.ProbeRecord, error) { return nil, nil }
func (stubs) Digest(context.Context) (pipeline.Digest, error)                     { return pipeline.Digest{}, nil }
func (stubs) PipelineLag(context.Context, string) (*kafka.LagReport, error)       { return nil, errStub }
func (stubs) GroupLag(context.Context, string, string, ...string) (*kafka.LagReport, error) {
	return nil, errStub
}
func (stubs) TopicGroups(context.Context, string, string) (*kafka.GroupsReport, error) {
	return nil, errStub
}
func (stubs) Diagnose(context.Context, string) (*spark.Report, error) { return nil, errStub }
func (stubs) StartWatch(context.Context, string, string, string, string, time.Duration) (string, error) {
	return "batch 7", nil
}
func (stubs) Backup(context.Context, string, string) (*remediate.BackupResult, error) {
	return nil, errStub
}
func (stubs) Backups(context.Context, string) ([]remediate.BackupInfo, error) { return nil, errStub }
func (stubs) Propose(context.Context, commands.Kind, string, string, string) (*commands.Proposal, error) {
	return nil, errStub
}
func (stubs) Confirm(context.Context, commands.Confirmation) (*commands.Outcome, error) {
	return nil, &commands.RefusalError{Reason: "no verified backup"}
}

type diagnoser struct{}

func (diagnoser) Diagnose(context.Context, string) (pipeline.Verdict, error) {
	return pipeline.Verdict{}, errStub
}
func (diagnoser) Logs(context.Context, string) (*driverlog.Report, error) { return nil, errStub }

// remediators lets U0ADMIN remediate, nobody else.
type remediators struct{}

func (remediators) Remediator(_ context.Context, user, _ string) (bool, bool, error) {
	return user == "U0ADMIN", true, nil
}

// fullHandler is the grammar as serve wires it, over a real store holding two open incidents
// in C1 (INC-2's root message is 1700000000.000100) and one in C2.
func fullHandler(tb testing.TB) *commands.Handler {
	tb.Helper()
	rdb, prefix := testredis.Client(tb)
	st := state.New(rdb, prefix)
	ctx := context.Background()
	for i, ch := range []string{"C1", "C1", "C2"} {
		key := string(rune('a' + i))
		if _, err := st.RecordAlert(ctx, state.AlertRecord{Key: key, Fingerprint: key, Title: "t " + key, Severity: 3, Channel: ch}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := st.Complete(ctx, rootDelivery(tb, st, "INC-2"), "1700000000.000100", "C1"); err != nil {
		tb.Fatal(err)
	}
	h := commands.New("/streamwatch", st)
	h.Authz = remediators{}
	h.Audit = func(context.Context, state.AuditEntry) {}
	h.RegisterHealth(stubs{})
	h.RegisterKafka(stubs{})
	h.RegisterCheckpoint(stubs{})
	h.RegisterDiagnose(diagnoser{})
	h.RegisterWatch(stubs{})
	h.RegisterRemediation(stubs{}, st)
	h.RegisterAudit(st)
	h.RegisterIncidentDiagnose(&pipeline.Verdicts{Diagnoser: diagnoser{}, Store: st})
	r := h.Handle(ctx, commands.Request{ChannelID: "C1", ThreadTS: "1700000000.000100", Text: "incident show"})
	if r.Text != "INC-2: t b" {
		tb.Fatalf("the fixture's thread is not INC-2's: %+v", r)
	}
	return h
}

// rootDelivery returns an incident's root entry from the outbox; completing it records the
// root message's ts, which makes its thread the incident's.
func rootDelivery(tb testing.TB, st *state.Store, id string) state.Delivery {
	tb.Helper()
	ctx := context.Background()
	if err := st.EnsureOutbox(ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := st.Pump(ctx); err != nil {
		tb.Fatal(err)
	}
	list, err := st.ReadOutbox(ctx, "fuzz", false, 100, 0)
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range list {
		if d.Incident == id && d.Kind == state.KindRoot {
			return d
		}
	}
	tb.Fatalf("no root delivery of %s in %+v", id, list)
	return state.Delivery{}
}

// malformed are inputs people (and a fuzzer) type that do not fit the grammar.
var malformed = []string{
	"", " ", "\t\n", "help help help", "HELP INCIDENT", "incident", "incident  ", "INCIDENT LIST now",
	"incident show INC-", "incident show inc-07", "incident show 99999999999999999999", "incident show -1",
	"incident merge", "incident merge 1", "incident merge INC-1 INC-1", "incident merge a b", "incident merge 1 2 3",
	"incident resolve", "incident resolve INC-2 ✓ fixed", "incident ack INC-1 INC-2",
	"lag", "lag --cluster", "lag --cluster=", "lag g t --cluster", "lag p --cluster c", "lag --frob p", "lag a b c d e",
	"groups", "groups --cluster x", "groups t --cluster=", "probe", "probe all", "probe history", "status now",
	"watch", "watch p for", "watch p during 5m", "watch p for 0s", "watch p for -5m", "watch p for 25h",
	"watch p for 9223372036854775807ns", "watch p for 1e9h", "checkpoint", "checkpoint a b",
	"checkpoint repair p --yes", "checkpoint repair p --confirm", "checkpoint backup", "diagnose", "logs a b",
	"checkpoint repair p --force", "checkpoint repair p --confirm P-1 --force", "checkpoint repair p --confirm --force x",
	"checkpoint restore p 2026 --confirm", "checkpoint restore p b c", "checkpoint backups", "audit a b", "incident list some",
	"frobnicate", "<@U0BOT> help", "`incident list`", "incident\u00a0list", "ıncident list", "İNCIDENT LIST",
	"\x00", "\xff\xfe", strings.Repeat("incident ", 200),
}

func seeds(f *testing.F, h *commands.Handler) {
	for _, c := range h.Commands() {
		if c.Example == "" {
			f.Fatalf("command %q has no Example", c.Path)
		}
		f.Add(c.Example)
		f.Add(strings.ToUpper(c.Example))
		f.Add(c.Path) // without its arguments
		f.Add(c.Example + " extra words")
	}
	for _, s := range malformed {
		f.Add(s)
	}
}

// FuzzParse: Parse never panics; it returns a command whose words start the text and whose
// argument count fits, or a *UsageError with a message and usage lines.
func FuzzParse(f *testing.F) {
	h := fullHandler(f)
	seeds(f, h)
	f.Fuzz(func(t *testing.T, text string) {
		c, args, err := h.Parse(text)
		words := strings.Fields(text)
		if err != nil {
			var ue *commands.UsageError
			if !errors.As(err, &ue) || ue == nil {
				t.Fatalf("Parse(%q) error %T %v, want *commands.UsageError", text, err, err)
			}
			if ue.Msg == "" || len(ue.Usages) == 0 {
				t.Fatalf("Parse(%q) usage error without message or usages: %+v", text, ue)
			}
			for _, u := range ue.Usages {
				if !strings.HasPrefix(u, "/streamwatch ") {
					t.Fatalf("Parse(%q) usage %q does not start with the command name", text, u)
				}
			}
			if c != nil && fits(c, len(words)-len(strings.Fields(c.Path))) {
				t.Fatalf("Parse(%q) refused %q although its argument count fits", text, c.Path)
			}
			return
		}
		if c == nil {
			t.Fatalf("Parse(%q) returned neither a command nor an error", text)
		}
		if len(words) == 0 {
			if c.Path != "help" || len(args) != 0 {
				t.Fatalf("Parse(%q) = %q %q, want help", text, c.Path, args)
			}
			return
		}
		path := strings.Fields(c.Path)
		if len(words) < len(path) {
			t.Fatalf("Parse(%q) = %q: more words in the path than typed", text, c.Path)
		}
		for i, p := range path {
			if !strings.EqualFold(words[i], p) {
				t.Fatalf("Parse(%q) = %q: word %d %q is not %q", text, c.Path, i, words[i], p)
			}
		}
		if strings.Join(args, "\x00") != strings.Join(words[len(path):], "\x00") {
			t.Fatalf("Parse(%q) args %q, want %q", text, args, words[len(path):])
		}
		if !fits(c, len(args)) {
			t.Fatalf("Parse(%q) = %q with %d args, outside %d..%d", text, c.Path, len(args), c.Min, c.Max)
		}
	})
}

func fits(c *commands.Command, n int) bool {
	return n >= c.Min && (c.Max < 0 || n <= c.Max)
}

// FuzzHandle: Handle always answers with a sentence, never panics; input Parse refuses gets a
// usage reply with the usage lines, and a reply's usage lines name the command.
func FuzzHandle(f *testing.F) {
	h := fullHandler(f)
	seeds(f, h)
	f.Fuzz(func(t *testing.T, text string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, req := range []commands.Request{
			{UserID: "U0ALICE", ChannelID: "C1", Text: text},
			{UserID: "U0ADMIN", UserName: "admin", ChannelID: "C1", ThreadTS: "1700000000.000100", Text: text},
		} {
			r := h.Handle(ctx, req)
			if strings.TrimSpace(r.Text) == "" {
				t.Fatalf("Handle(%+v) answered no text: %+v", req, r)
			}
			_, _, perr := h.Parse(text)
			if perr != nil && (!r.Usage || r.Text != perr.Error()+".") {
				t.Fatalf("Handle(%q): Parse refused it (%v) but the reply is %+v", text, perr, r)
			}
			if r.Usage {
				if len(r.Sections) == 0 || len(r.Sections[0].Lines) < 2 || r.Sections[0].Lines[0] != "Usage:" {
					t.Fatalf("Handle(%q) usage reply without usage lines: %+v", text, r)
				}
				for _, l := range r.Sections[0].Lines[1:] {
					if !strings.HasPrefix(l, "  /streamwatch ") {
						t.Fatalf("Handle(%q) usage line %q", text, l)
					}
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("Handle(%q) took more than 10s", text)
			}
		}
	})
}
