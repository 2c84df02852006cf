package commands_test

import (
	"context"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/state"
)

// memIncidents holds incidents in memory; changes are recorded.
type memIncidents struct {
	incs    map[string]*state.Incident
	changes []string
}

func (m *memIncidents) Get(_ context.Context, id string) (*state.Incident, error) {
	if inc, ok := m.incs[state.NormalizeID(id)]; ok {
		return inc, nil
	}
	return nil, state.ErrNotFound
}
func (m *memIncidents) ListPage(_ context.Context, channel string, f state.ListFilter, _ string, n int) (*state.Page, error) {
	p := &state.Page{}
	for _, id := range []string{"INC-3", "INC-2", "INC-1"} {
		if inc, ok := m.incs[id]; ok && (channel == "" || inc.Channel == channel) && (f.Channels == nil || f.Channels[inc.Channel]) {
			p.Open++
			if len(p.Incidents) < n {
				p.Incidents = append(p.Incidents, inc)
			}
		}
	}
	return p, nil
}
func (m *memIncidents) ByThread(context.Context, string, string) (string, error) { return "", nil }
func (m *memIncidents) Timeline(context.Context, string, int64) ([]state.Event, error) {
	return nil, nil
}
func (m *memIncidents) Acknowledge(_ context.Context, id, actor string) error {
	m.changes = append(m.changes, "ack "+id+" by "+actor)
	return nil
}
func (m *memIncidents) Unacknowledge(_ context.Context, id, actor string) error {
	m.changes = append(m.changes, "unack "+id+" by "+actor)
	return nil
}
func (m *memIncidents) Reopen(_ context.Context, id, actor string) error {
	m.changes = append(m.changes, "reopen "+id+" by "+actor)
	return nil
}
func (m *memIncidents) Unmerge(_ context.Context, id, actor string) error {
	m.changes = append(m.changes, "unmerge "+id+" by "+actor)
	return nil
}
func (m *memIncidents) Resolve(_ context.Context, id, actor, _ string) error {
	m.changes = append(m.changes, "resolve "+id+" by "+actor)
	return nil
}
func (m *memIncidents) Merge(_ context.Context, from, into, actor string) error {
	m.changes = append(m.changes, "merge "+from+" into "+into+" by "+actor)
	return nil
}

// named remediators: global, and per pipeline.
type named struct {
	global    []string
	pipelines map[string][]string
}

func (n named) Remediator(_ context.Context, user, pipeline string) (bool, bool, error) {
	ids := append(append([]string(nil), n.global...), n.pipelines[pipeline]...)
	if pipeline == "" {
		ids = n.global
	}
	for _, id := range ids {
		if id == user {
			return true, true, nil
		}
	}
	return false, len(ids) > 0, nil
}

type members map[string][]string // user → channels

func (m members) Channels(_ context.Context, user string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, c := range m[user] {
		out[c] = true
	}
	return out, nil
}

func authzHandler(authz commands.Authorizer) (*commands.Handler, *memIncidents, *[]state.AuditEntry) {
	incs := &memIncidents{incs: map[string]*state.Incident{
		"INC-1": {ID: "INC-1", Title: "sms", Pipeline: "sms", Channel: "C0SMS", Status: state.StatusOpen},
		"INC-2": {ID: "INC-2", Title: "orders", Pipeline: "orders", Channel: "C0ORD", Status: state.StatusOpen},
		"INC-3": {ID: "INC-3", Title: "disk", Channel: "C0OPS", Status: state.StatusOpen},
		// Moved to C0ORD (slack.default_channel) when C0GONE was archived.
		"INC-4": {ID: "INC-4", Title: "gone", Channel: "C0GONE", RootChannel: "C0ORD", Status: state.StatusOpen},
	}}
	h := commands.New("/streamwatch", incs)
	h.Authz = authz
	h.Directory = members{"U0SMS": {"C0SMS"}, "U0ORD": {"C0ORD", "C0SMS"}, "U0ADMIN": {"C0SMS", "C0ORD", "C0OPS"}}
	var audit []state.AuditEntry
	h.Audit = func(_ context.Context, e state.AuditEntry) { audit = append(audit, e) }
	return h, incs, &audit
}

// TestAccessRules: the table in authz.go, command by command.
func TestAccessRules(t *testing.T) {
	perPipeline := named{global: []string{"U0ADMIN"}, pipelines: map[string][]string{"sms": {"U0SMS"}, "orders": {"U0ORD"}}}
	nobody := named{}
	for _, tc := range []struct {
		name    string
		authz   commands.Authorizer
		user    string
		channel string
		text    string
		want    string // in the reply
		change  string // what the store saw, "" for nothing
	}{
		{"pipeline remediator resolves their pipeline", perPipeline, "U0SMS", "C0SMS", "incident resolve INC-1", "INC-1 resolved.", "resolve INC-1 by U0SMS"},
		{"and not another", perPipeline, "U0ORD", "C0SMS", "incident resolve INC-1", "pipelines[sms].remediators may resolve incidents", ""},
		{"global remediator resolves anything", perPipeline, "U0ADMIN", "C0OPS", "incident resolve INC-3", "INC-3 resolved.", "resolve INC-3 by U0ADMIN"},
		{"an incident of no pipeline: global only", perPipeline, "U0SMS", "C0OPS", "incident resolve INC-3", "only the people listed in slack.remediators may resolve incidents", ""},
		{"merge needs both pipelines", perPipeline, "U0ORD", "C0ORD", "incident merge INC-2 INC-1", "pipelines[sms].remediators may merge incidents", ""},
		{"nobody named: resolve is open", nobody, "U0SMS", "C0SMS", "incident resolve INC-1", "INC-1 resolved.", "resolve INC-1 by U0SMS"},
		{"nobody named: the audit trail is closed", nobody, "U0SMS", "C0SMS", "audit sms", "nobody may read the audit trail of sms: no remediator is named for sms", ""},
		{"another channel's incident: members only", perPipeline, "U0SMS", "C0SMS", "incident ack INC-2", "INC-2 belongs to a channel you are not a member of", ""},
		{"a member of that channel may", perPipeline, "U0ORD", "C0SMS", "incident ack INC-2", "INC-2 acknowledged.", "ack INC-2 by U0ORD"},
		{"typed in the incident's channel", perPipeline, "U0SMS", "C0ORD", "incident ack INC-2", "INC-2 acknowledged.", "ack INC-2 by U0SMS"},
		{"a moved incident: members of the channel its root moved to", perPipeline, "U0ORD", "C0SMS", "incident ack INC-4", "INC-4 acknowledged.", "ack INC-4 by U0ORD"},
		{"a moved incident, typed where its root is", perPipeline, "U0SMS", "C0ORD", "incident ack INC-4", "INC-4 acknowledged.", "ack INC-4 by U0SMS"},
		{"a moved incident: not others", perPipeline, "U0SMS", "C0SMS", "incident ack INC-4", "INC-4 belongs to a channel you are not a member of", ""},
		{"list: this channel", perPipeline, "U0SMS", "C0SMS", "incident list", "1 open incident in this channel", ""},
		{"list all: the user's channels", perPipeline, "U0ORD", "C0SMS", "incident list all", "Open incidents in the channels you are a member of, newest first", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, incs, audit := authzHandler(tc.authz)
			h.RegisterAudit(nilTrail{})
			r := h.Handle(context.Background(), commands.Request{UserID: tc.user, UserName: tc.user, ChannelID: tc.channel, Text: tc.text, Via: "command"})
			if !strings.Contains(r.Text, tc.want) {
				t.Fatalf("reply %q, want %q", r.Text, tc.want)
			}
			if got := strings.Join(incs.changes, "; "); got != tc.change {
				t.Fatalf("changes %q, want %q", got, tc.change)
			}
			refused := strings.Contains(r.Text, "may ") || strings.Contains(r.Text, "not a member")
			var last state.AuditEntry
			if len(*audit) > 0 {
				last = (*audit)[len(*audit)-1]
			}
			switch {
			case refused && (last.Outcome != "refused" || last.Actor != tc.user || last.Channel != tc.channel || last.Via != "command"):
				t.Fatalf("refusal audited as %+v", last)
			case tc.change != "" && last.Outcome != "done":
				t.Fatalf("change audited as %+v", last)
			}
		})
	}
}

type nilTrail struct{}

func (nilTrail) AuditTrail(context.Context, func(state.AuditEntry) bool, int, int) ([]state.AuditEntry, error) {
	return nil, nil
}

// TestRemediationGrammar: --confirm needs a plan, --force a reason and a plan, a restore's
// backup comes before the flags.
func TestRemediationGrammar(t *testing.T) {
	h, _, _ := authzHandler(named{global: []string{"U0ADMIN"}})
	rec := &recorder{}
	h.RegisterRemediation(rec, nil)
	for _, tc := range []struct{ text, want string }{
		{"checkpoint repair sms --confirm", "--confirm needs the plan id"},
		{"checkpoint repair sms --force now", "--force goes after --confirm PLAN"},
		{"checkpoint repair sms --confirm p-3 --force", "--force needs a reason"},
		{"checkpoint repair sms --yes", `unknown flag or argument "--yes"`},
		{"checkpoint repair sms --confirm p-3 --force stopped it by hand", "confirm repair sms P-3 force=stopped it by hand"},
		{"checkpoint restore sms 20261130T104105Z", "propose restore sms 20261130T104105Z"},
		{"checkpoint restore sms --confirm P-4", "confirm restore sms P-4 force="},
		{"checkpoint repair sms", "propose repair sms "},
	} {
		rec.got = ""
		r := h.Handle(context.Background(), commands.Request{UserID: "U0ADMIN", ChannelID: "C0SMS", Text: tc.text})
		if !strings.Contains(r.Text+rec.got, tc.want) {
			t.Errorf("%q: reply %q, call %q; want %q", tc.text, r.Text, rec.got, tc.want)
		}
	}
}

type recorder struct{ got string }

func (r *recorder) Backup(context.Context, string, string) (*remediate.BackupResult, error) {
	return nil, errStub
}
func (r *recorder) Backups(context.Context, string) ([]remediate.BackupInfo, error) {
	return nil, errStub
}
func (r *recorder) Propose(_ context.Context, k commands.Kind, p, backup, _ string) (*commands.Proposal, error) {
	r.got = "propose " + string(k) + " " + p + " " + backup
	return &commands.Proposal{Pipeline: p}, nil
}
func (r *recorder) Confirm(_ context.Context, c commands.Confirmation) (*commands.Outcome, error) {
	r.got = "confirm " + string(c.Kind) + " " + c.Pipeline + " " + c.Plan + " force=" + c.Force
	return &commands.Outcome{Kind: c.Kind, Pipeline: c.Pipeline, Plan: c.Plan}, nil
}
