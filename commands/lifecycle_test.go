package commands_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// memLifecycle records severity, owner and silence changes.
type memLifecycle struct {
	changes []string
	active  []*state.Silence
}

func (m *memLifecycle) SetSeverity(_ context.Context, id string, sev int, actor string) error {
	m.changes = append(m.changes, "severity "+id+" "+string(rune('0'+sev))+" by "+actor)
	return nil
}
func (m *memLifecycle) Assign(_ context.Context, id, owner, name, actor string) error {
	m.changes = append(m.changes, "assign "+id+" to "+owner+"/"+name+" by "+actor)
	return nil
}
func (m *memLifecycle) SilenceIncident(_ context.Context, id string, until time.Time, by state.Maker, reason string) (string, error) {
	m.changes = append(m.changes, "silence "+id+" until "+until.Format("15:04:05")+" by "+by.ID+": "+reason)
	return "SIL-1", nil
}
func (m *memLifecycle) CreateSilence(_ context.Context, ms []state.Matcher, until time.Time, by state.Maker, reason string) (string, error) {
	m.changes = append(m.changes, "silence "+state.MatchersText(ms)+" until "+until.Format("15:04:05")+" by "+by.ID+": "+reason)
	return "SIL-2", nil
}
func (m *memLifecycle) CreateSilenceFrom(ctx context.Context, ms []state.Matcher, starts, until time.Time, by state.Maker, reason string) (string, error) {
	if !starts.IsZero() {
		m.changes = append(m.changes, "from "+starts.Format("15:04:05"))
	}
	return m.CreateSilence(ctx, ms, until, by, reason)
}
func (m *memLifecycle) ExtendSilence(_ context.Context, id string, d time.Duration, actor string) (time.Time, error) {
	m.changes = append(m.changes, "extend "+id+" by "+d.String()+" by "+actor)
	return time.Time{}, nil
}
func (m *memLifecycle) PreviewSilence(context.Context, []state.Matcher) ([]state.PreviewHit, int, error) {
	return nil, 0, nil
}
func (m *memLifecycle) ExpireSilence(_ context.Context, id, actor string) (string, string, error) {
	m.changes = append(m.changes, "expire "+id+" by "+actor)
	return "", "", nil
}
func (m *memLifecycle) GetSilence(_ context.Context, id string) (*state.Silence, error) {
	for _, s := range m.active {
		if s.ID == id {
			return s, nil
		}
	}
	return nil, &state.SilenceError{ID: id, Reason: "notfound"}
}
func (m *memLifecycle) ActiveSilences(context.Context) ([]*state.Silence, error) {
	return m.active, nil
}

// TestLifecycleCommands: severity, owner and silences, their grammar and who may use them.
func TestLifecycleCommands(t *testing.T) {
	perPipeline := named{global: []string{"U0ADMIN"}, pipelines: map[string][]string{"sms": {"U0SMS"}}}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, user, channel, text string
		want                      string // in the reply
		change                    string // what the store saw, "" for nothing
		audit                     string // the last audit entry: action outcome
	}{
		{"severity", "U0SMS", "C0SMS", "incident severity INC-1 SEV1", "INC-1 is SEV1 critical now (was unknown)", "severity INC-1 1 by U0SMS", "set severity done"},
		{"severity spelled otherwise", "U0SMS", "C0SMS", "incident severity INC-1 critical", "INC-1 is SEV1 critical now", "severity INC-1 1 by U0SMS", "set severity done"},
		{"not a severity", "U0SMS", "C0SMS", "incident severity INC-1 SEV9", `"SEV9" is not a severity`, "", ""},
		{"assign me", "U0SMS", "C0SMS", "incident assign INC-1 me", "INC-1 is assigned to U0SMS now", "assign INC-1 to U0SMS/U0SMS by U0SMS", "assign done"},
		{"assign a mention", "U0SMS", "C0SMS", "incident assign INC-1 <@U0BOB|bob>", "INC-1 is assigned to bob now", "assign INC-1 to U0BOB/bob by U0SMS", "assign done"},
		{"assign an id", "U0SMS", "C0SMS", "incident assign INC-1 W0ENT", "assigned to W0ENT", "assign INC-1 to W0ENT/ by U0SMS", "assign done"},
		{"assign nobody", "U0SMS", "C0SMS", "incident assign INC-1 nobody", "INC-1 is assigned to nobody now", "assign INC-1 to / by U0SMS", "assign done"},
		{"assign plain text", "U0SMS", "C0SMS", "incident assign INC-1 @bob", "reached streamwatch as plain text", "", ""},
		{"another channel's incident", "U0SMS", "C0SMS", "incident severity INC-2 SEV1", "INC-2 belongs to a channel you are not a member of", "", "see incidents of other channels refused"},
		{"silence an incident", "U0SMS", "C0SMS", "incident silence INC-1 for 90m deploy", "INC-1 is silenced until 2026-11-30 11:30:00Z (SIL-1)", "silence INC-1 until 11:30:00 by U0SMS: deploy", "silence incident done"},
		{"silence in days", "U0SMS", "C0SMS", "incident silence INC-1 for 2d", "silenced until 2026-12-02 10:00:00Z", "silence INC-1 until 10:00:00 by U0SMS: ", "silence incident done"},
		{"silence without for", "U0SMS", "C0SMS", "incident silence INC-1 90m", "say how long: for DURATION", "", ""},
		{"silence too long", "U0SMS", "C0SMS", "incident silence INC-1 for 31d", "too long: at most 720h0m0s", "", ""},
		{"silence too short", "U0SMS", "C0SMS", "incident silence INC-1 for 10ms", "too short", "", ""},
		{"silence not a duration", "U0SMS", "C0SMS", "incident silence INC-1 for ever", `"ever" is not a duration`, "", ""},
		{"label silence of a pipeline: its remediators", "U0SMS", "C0SMS", "silence pipeline=sms,alertname=~Lag.* for 2h broker maintenance",
			"SIL-2: alerts matching pipeline=sms,alertname=~Lag.* open and join no incident until 2026-11-30 12:00:00Z", "silence pipeline=sms,alertname=~Lag.* until 12:00:00 by U0SMS: broker maintenance", "silence alerts done"},
		{"and nobody else", "U0ORD", "C0SMS", "silence pipeline=sms for 2h", "pipelines[sms].remediators may silence alerts", "", "silence alerts refused"},
		{"a label silence of no pipeline: slack.remediators", "U0SMS", "C0SMS", "silence alertname=Lag for 2h", "only the people listed in slack.remediators may silence alerts", "", "silence alerts refused"},
		{"a value with spaces", "U0ADMIN", "C0OPS", `silence alertname="client replied sms" for 1h`, "alerts matching alertname=client replied sms", "silence alertname=client replied sms until 11:00:00 by U0ADMIN: ", "silence alerts done"},
		{"bad matchers", "U0ADMIN", "C0OPS", "silence alertname=~( for 1h", "alertname=~(: error parsing regexp", "", ""},
		{"no matchers", "U0ADMIN", "C0OPS", "silence for 1h x", "silence takes LABEL=VALUE matchers, then for DURATION", "", ""},
		{"end a label silence: as making it", "U0ORD", "C0SMS", "silence expire SIL-2", "pipelines[sms].remediators may end silences", "", "end silences refused"},
		{"end an incident silence: its channel's members", "U0SMS", "C0SMS", "silence expire sil-1", "SIL-1 ended: INC-1's updates are posted again.", "expire SIL-1 by U0SMS", "end silence done"},
		{"end a silence that does not exist", "U0SMS", "C0SMS", "silence expire SIL-9", "Sorry: SIL-9 does not exist.", "", ""},
		{"silences", "U0ORD", "C0SMS", "silences", "2 silences in force", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, audit := authzHandler(perPipeline)
			h.Now = func() time.Time { return now }
			mem := &memLifecycle{active: []*state.Silence{
				{ID: "SIL-1", Kind: state.SilenceIncident, Incident: "INC-1", By: "U0SMS", Until: now.Add(time.Hour)},
				{ID: "SIL-2", Kind: state.SilenceLabels, Matchers: "pipeline=sms", By: "U0SMS", Until: now.Add(time.Hour), Hits: 1,
					Alerts: []state.SilencedAlert{{Fingerprint: "fp", Key: "k", Title: "lag", Count: 1}}},
			}}
			h.RegisterLifecycle(mem)
			h.RegisterSilences(mem)
			r := h.Handle(context.Background(), commands.Request{UserID: tc.user, UserName: tc.user, ChannelID: tc.channel, Text: tc.text, Via: "command"})
			text := strings.ReplaceAll(r.Text, "\u200b", "")
			if !strings.Contains(text, tc.want) {
				t.Fatalf("reply %q, want %q", text, tc.want)
			}
			if got := strings.Join(mem.changes, "; "); got != tc.change {
				t.Fatalf("changes %q, want %q", got, tc.change)
			}
			var last string
			if len(*audit) > 0 {
				e := (*audit)[len(*audit)-1]
				last = e.Action + " " + e.Outcome
				if e.Actor != tc.user || e.Channel != tc.channel {
					t.Fatalf("audited as %+v", e)
				}
			}
			if last != tc.audit {
				t.Fatalf("last audit entry %q, want %q", last, tc.audit)
			}
		})
	}
}

// TestPostmortemDraft: the response times, the impact window and the follow-ups come from the
// record; every event is a row.
func TestPostmortemDraft(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	inc := &state.Incident{ID: "INC-7", Title: "client replied sms", Severity: 2, Pipeline: "sms-replies", Channel: "C0PIPE",
		Status: state.StatusResolved, FirstSeen: t0, LastSeen: t0.Add(30 * time.Minute), Count: 40, AckBy: "alice",
		AckAt: t0.Add(4*time.Minute + 12*time.Second), ResolvedBy: "bob", ResolvedAt: t0.Add(time.Hour + 2*time.Minute), AllResolved: true,
		EscalatedAt: t0.Add(3 * time.Minute), EscalatedTo: []string{"S0ONCALL"}, Previous: "INC-3",
		Links:  map[string]string{"runbook": "https://wiki.example/r", "panel": "javascript:alert(1)"},
		Alerts: map[string]state.AlertState{"fp1": {Status: "resolved", LastSeen: t0.Add(50 * time.Minute)}}}
	tl := []state.Event{
		{At: t0, Name: "opened", Actor: "alertmanager", Title: "client replied sms"},
		{At: t0.Add(time.Minute), Name: "note", Actor: "streamwatch", Detail: "Automatic diagnosis — sms-replies: probable cause CHECKPOINT_NOT_WRITABLE (confirmed)\n*Symptoms*"},
		{At: t0.Add(3 * time.Minute), Name: "escalated", Actor: "streamwatch", Severity: 2, After: 3 * time.Minute, Mention: []string{"S0ONCALL"}},
		{At: t0.Add(4*time.Minute + 12*time.Second), Name: "acknowledged", Actor: "alice"},
		{At: t0.Add(20 * time.Minute), Name: "remediation", Actor: "streamwatch", Detail: "Quarantined 1 file(s) of sms-replies"},
		{At: t0.Add(50 * time.Minute), Name: "all_resolved", Actor: "alertmanager"},
		{At: t0.Add(time.Hour + 2*time.Minute), Name: "resolved", Actor: "bob", Note: "ACL | restored"},
	}
	audit := []state.AuditEntry{{At: t0.Add(19 * time.Minute), Actor: "U0ALICE", Action: "checkpoint repair", Target: "sms-replies",
		Outcome: "done", Pipeline: "sms-replies", Via: "button", Channel: "C0PIPE", Detail: "plan P-3"}}
	d := commands.PostmortemDraft(inc, tl, 0, nil, audit, t0.Add(2*time.Hour))
	for _, want := range []string{
		"# Postmortem draft: INC-7 — client replied sms",
		"- **Incident:** INC-7, SEV2 high, pipeline sms-replies, channel C0PIPE",
		"- **Links:** runbook <https://wiki.example/r>",
		"- **Started:** 2026-11-30 10:41:05Z (the first alert)",
		"- **Ended:** 2026-11-30 11:31:05Z (every alert resolved)",
		"- **Duration:** 50m0s",
		"- **Time to acknowledge:** 4m12s (alice at 2026-11-30 10:45:17Z)",
		"- **Time to resolve:** 1h2m0s (bob at 2026-11-30 11:43:05Z)",
		"- **Escalated:** 2026-11-30 10:44:05Z, to S0ONCALL, after 3m0s without acknowledgement",
		"All 7 events (UTC).",
		`| 2026-11-30 11:43:05Z | resolved | bob | ACL \| restored |`,
		"- 2026-11-30 10:42:05Z streamwatch: Automatic diagnosis — sms-replies: probable cause CHECKPOINT\\_NOT\\_WRITABLE (confirmed)",
		"- 2026-11-30 11:00:05Z U0ALICE: checkpoint repair sms-replies, done (button in C0PIPE) — plan P-3",
		"- 2026-11-30 10:45:17Z alice: acknowledged",
		"- [ ] It waited 4m12s for an acknowledgement and was escalated: review the on-call rotation.",
		"- [ ] Confirm the probable causes of the last diagnosis",
		"- [ ] Check that the remediations held",
		"- [ ] The key of INC-7 opened INC-3 before",
		"- [ ] Update the runbook <https://wiki.example/r>",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the draft lacks %q", want)
		}
	}
	if strings.Contains(d, "javascript") {
		t.Error("the draft links a javascript: URL")
	}
	if t.Failed() {
		t.Log(d)
	}
}
