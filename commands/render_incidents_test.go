package commands

import (
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/state"
)

// TestIncidentCommandWords: each sentence of the incident commands' replies and usage errors,
// in full, as people read them.
func TestIncidentCommandWords(t *testing.T) {
	many := &state.Page{Open: 12, More: true, Incidents: []*state.Incident{{ID: "INC-12"}, {ID: "INC-11"}}}
	for _, c := range []struct{ got, want string }{
		{whichIncident(&state.Page{}), "which incident? This channel has no open incident"},
		{whichIncident(many), "which incident? This channel has 12 open: INC-12, INC-11 and 10 more"},
		{notAnIncidentID("x"), `"x" is not an incident id`},
		{incidentListNoPipeline(), "pipeline= needs a pipeline's name"},
		{incidentListBadAfter("x"), `after= takes an incident ID, not "x"`},
		{incidentListUnknown("frob"), `incident list does not know "frob"`},
		{incidentsAction("reopen"), "reopen incidents"},
		{incidentAcked("INC-1").Text, "INC-1 acknowledged."},
		{incidentUnacked("INC-1").Text, "INC-1 is unacknowledged again: escalation resumes at its next level."},
		{incidentReopened("INC-1").Text, "INC-1 is open again; its thread continues."},
		{incidentUnmerged("INC-3", "INC-2").Text, "INC-3 is its own incident again, with its keys, alerts and count; INC-2 gave them back."},
		{incidentUnmerged("INC-3", "").Text, "INC-3 is its own incident again, with its keys, alerts and count; the other gave them back."},
		{incidentResolved("INC-1").Text, "INC-1 resolved."},
		{incidentMerged("INC-3", "INC-2").Text, "INC-3 merged into INC-2: its alerts and future duplicates now thread there."},
		{incidentListReply(&state.Page{}, false, "", nil).Text, "No open incidents in this channel."},
		{incidentListReply(&state.Page{}, true, "INC-4", []string{"all", "sev1"}).Text, "No more open incidents in the channels you are a member of matching all sev1."},
		{severityCount(), "incident severity takes one severity, SEV1 (critical) to SEV5 (info)"},
		{notASeverity("SEV9"), `"SEV9" is not a severity: SEV1 (critical) to SEV5 (info)`},
		{severitySet("INC-1", alerts.Severity(1), alerts.Severity(3)).Text, "INC-1 is SEV1 critical now (was SEV3 warning); alerts no longer change its severity."},
		{assignCount(), "incident assign takes one person: @someone, me or nobody"},
		{notAPerson("@bob"), `"@bob" reached streamwatch as plain text, not as a person: pick them from Slack's list as you type @, or give their user id (U…), or say me`},
		{notAPerson("bob"), `"bob" is not a person: mention them (@…), give their user id (U…), or say me or nobody`},
		{assigned("INC-1", "", "").Text, "INC-1 is assigned to nobody now."},
		{assigned("INC-1", "U0BOB", "").Text, "INC-1 is assigned to U0BOB now."},
		{assigned("INC-1", "U0BOB", "bob").Text, "INC-1 is assigned to bob now."},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}

// TestLifecycleFacts: incident show's lines about owner, severity, silence and escalation.
func TestLifecycleFacts(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	inc := &state.Incident{Owner: "U0BOB", OwnerName: "bob", OwnerBy: "alice", SeverityBy: "carol",
		Silence: &state.IncidentSilence{ID: "S-1", By: "dave", Until: at, Reason: "maintenance"}, EscalatedAt: at, EscalatedTo: []string{"U0OPS", "U0LEAD"}}
	want := []string{
		"Owner: bob (U0BOB), assigned by alice",
		"Severity set by carol (alerts no longer change it)",
		"Silenced until 2026-11-30 10:41:05Z by dave (S-1): maintenance",
		"Escalated at 2026-11-30 10:41:05Z to U0OPS, U0LEAD (nobody had acknowledged it)",
	}
	got := lifecycleFacts(inc)
	if len(got) != len(want) {
		t.Fatalf("lifecycleFacts = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}
}
