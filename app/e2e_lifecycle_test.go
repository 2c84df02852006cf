package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// The incident lifecycle (issue 17) through the binary's contract: webhooks, commands, buttons
// and what Slack shows.

// amAlert is one alert of an Alertmanager group notification.
type amAlert struct{ instance, summary string }

// amGroup is an Alertmanager webhook for the group alertname=name (no pipeline: the default
// channel, no automatic diagnosis), as Alertmanager re-sends it at every group_interval.
func amGroup(name string, as ...amAlert) string {
	var list []map[string]any
	for _, a := range as {
		list = append(list, map[string]any{"status": "firing", "fingerprint": "fp-" + a.instance,
			"labels":      map[string]string{"alertname": name, "instance": a.instance, "severity": "warning"},
			"annotations": map[string]string{"summary": a.summary}, "startsAt": "2026-11-30T10:00:00Z"})
	}
	b, _ := json.Marshal(map[string]any{"version": "4", "status": "firing", "receiver": "streamwatch",
		"groupLabels": map[string]string{"alertname": name}, "alerts": list})
	return string(b)
}

// TestE2EGroupResendsThreadOnlyNews: three Alertmanager notifications of one group, the third
// with one more alert: exactly one thread reply (the new alert), and the root counts them all.
func TestE2EGroupResendsThreadOnlyNews(t *testing.T) {
	in := start(t, setup{})
	s := in.slack
	a, b := amAlert{"db1", "disk full on db1"}, amAlert{"db2", "disk full on db2"}
	in.ok("/webhooks/alertmanager", amGroup("DiskFull", a, b))
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	root := roots(s, "C0DEFAULT")[0]
	in.ok("/webhooks/alertmanager", amGroup("DiskFull", a, b))
	in.ok("/webhooks/alertmanager", amGroup("DiskFull", a, b, amAlert{"db3", "disk full on db3"}))
	waitFor(t, s, "the root to count 7 and the new alert in the thread", func(s *slackfake.Server) bool {
		return strings.Contains(mustMessage(s, "C0DEFAULT", root.TS).Text, "7 occurrences") && len(replies(s, "C0DEFAULT", root.TS)) >= 1
	})
	th := threadTexts(s, "C0DEFAULT", root.TS)
	if len(th) != 1 || !strings.Contains(th[0], "New alert: disk full on db3") {
		t.Fatalf("thread %q, want exactly one reply announcing db3", th)
	}
	if m := mustMessage(s, "C0DEFAULT", root.TS); !strings.Contains(string(m.Blocks), "3 alerts, 3 firing") {
		t.Fatalf("root blocks %s", m.Blocks)
	}
}

// TestE2EAcknowledgedIncidentStaysQuiet: 100 identical duplicates of an acknowledged incident
// update its root and post nothing in its thread.
func TestE2EAcknowledgedIncidentStaysQuiet(t *testing.T) {
	in := start(t, setup{})
	s := in.slack
	in.ok("/webhooks/generic", generic("disk almost full", "quiet-1"))
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	root := roots(s, "C0DEFAULT")[0]
	if r := askIn(t, s, "U0BOB", "C0DEFAULT", "incident ack INC-1"); !strings.Contains(r.Text, "INC-1 acknowledged") {
		t.Fatalf("ack: %q", r.Text)
	}
	for range 100 {
		in.ok("/webhooks/generic", generic("disk almost full", "quiet-1"))
	}
	waitFor(t, s, "the root to count 101", func(s *slackfake.Server) bool {
		return strings.Contains(mustMessage(s, "C0DEFAULT", root.TS).Text, "101 occurrences")
	})
	if th := threadTexts(s, "C0DEFAULT", root.TS); len(th) != 1 || !strings.HasPrefix(th[0], "Acknowledged by") {
		t.Fatalf("thread %q, want only the acknowledgement", th)
	}
}

// chatCalls are the chat.postMessage and chat.update calls so far, in order.
func chatCalls(s *slackfake.Server) []slackfake.Call {
	var out []slackfake.Call
	for _, c := range s.Calls() {
		if c.Method == "chat.postMessage" || c.Method == "chat.update" {
			out = append(out, c)
		}
	}
	return out
}

// TestE2EIncidentSilence: an incident silenced for 2 s (the root's Silence button runs the same
// command) counts its duplicates and posts nothing until the silence ends; then the thread says
// so, and the news that waited follows.
func TestE2EIncidentSilence(t *testing.T) {
	in := start(t, setup{})
	s := in.slack
	in.ok("/webhooks/generic", genericDetail("disk almost full", "sil-1", "80%"))
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	root := roots(s, "C0DEFAULT")[0]
	if !strings.Contains(string(root.Blocks), `"action_id":"incident_silence"`) {
		t.Fatalf("the root has no Silence button: %s", root.Blocks)
	}
	silencedAt := time.Now()
	if r := askIn(t, s, "U0BOB", "C0DEFAULT", "incident silence INC-1 for 2s deploy in progress"); !strings.Contains(r.Text, "INC-1 is silenced until") {
		t.Fatalf("silence: %q", r.Text)
	}
	waitFor(t, s, "the silence in the thread and on the root", func(s *slackfake.Server) bool {
		th := threadTexts(s, "C0DEFAULT", root.TS)
		m := mustMessage(s, "C0DEFAULT", root.TS)
		return len(th) == 1 && strings.Contains(th[0], "Silenced until") && strings.Contains(th[0], "deploy in progress") &&
			strings.Contains(m.Text, "silenced") && strings.Contains(string(m.Blocks), "End silence")
	})
	quietFrom := len(chatCalls(s))
	for range 20 {
		in.ok("/webhooks/generic", genericDetail("disk almost full", "sil-1", "80%"))
	}
	in.ok("/webhooks/generic", genericDetail("disk almost full", "sil-1", "95%")) // news, held
	waitFor(t, s, "the end of the silence", func(s *slackfake.Server) bool {
		for _, txt := range threadTexts(s, "C0DEFAULT", root.TS) {
			if strings.Contains(txt, "has ended: 21 occurrences arrived meanwhile") {
				return true
			}
		}
		return false
	})
	if time.Since(silencedAt) < 2*time.Second {
		t.Fatalf("the silence ended after %v, before its 2s", time.Since(silencedAt))
	}
	calls := chatCalls(s)[quietFrom:]
	if len(calls) == 0 || calls[0].Method != "chat.postMessage" || !strings.Contains(calls[0].Params["text"], "has ended") {
		var got []string
		for _, c := range calls {
			got = append(got, c.Method+": "+c.Params["text"])
		}
		t.Fatalf("Slack calls while silenced, up to its end: %q", got)
	}
	waitFor(t, s, "the held news and the root's count", func(s *slackfake.Server) bool {
		th := threadTexts(s, "C0DEFAULT", root.TS)
		m := mustMessage(s, "C0DEFAULT", root.TS)
		return len(th) == 3 && strings.Contains(th[2], "Changed: disk almost full — 95%") && strings.Contains(m.Text, "22 occurrences") &&
			!strings.Contains(m.Text, "silenced")
	})
	if show := command(t, s, "C0DEFAULT", "incident show INC-1"); !strings.Contains(show, "silence_expired") {
		t.Fatalf("the timeline does not show the silence's end: %s", show)
	}
	// The root's buttons: Silence 1h, then End silence.
	click(t, s, "U0CAROL", "C0DEFAULT", root.TS, "incident_silence")
	waitFor(t, s, "the button's silence", func(s *slackfake.Server) bool {
		th := threadTexts(s, "C0DEFAULT", root.TS)
		return len(th) == 4 && strings.Contains(th[3], "by u0carol (SIL-2): Silence 1h button") &&
			strings.Contains(string(mustMessage(s, "C0DEFAULT", root.TS).Blocks), `"action_id":"incident_unsilence"`)
	})
	click(t, s, "U0CAROL", "C0DEFAULT", root.TS, "incident_unsilence")
	waitFor(t, s, "the button's end of the silence", func(s *slackfake.Server) bool {
		th := threadTexts(s, "C0DEFAULT", root.TS)
		return len(th) == 5 && strings.Contains(th[4], "u0carol ended the silence SIL-2")
	})
	var audited bool
	for _, e := range auditEntries(t, in.prefix) {
		audited = audited || (e.Action == "silence incident" && e.Outcome == "done" && e.Incident == "INC-1" && e.Actor == "U0BOB")
	}
	if !audited {
		t.Fatalf("the silence is not audited: %+v", auditEntries(t, in.prefix))
	}
}

// TestE2ELabelSilence: a label silence keeps a matching alert from opening an incident (the
// webhook answers silenced), lists it, shows in status, and ends early on request.
func TestE2ELabelSilence(t *testing.T) {
	in := start(t, setup{})
	s := in.slack
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", in.logs.String())
			for _, c := range s.Calls() {
				t.Logf("call %s %v %s", c.Method, c.Params["text"], c.Error)
			}
		}
	})
	r := askIn(t, s, "U0ALICE", "C0DEFAULT", "silence alertname=NoisyCheck,instance=~db[0-9]+ for 1h broker maintenance")
	if !strings.Contains(inertText(r.Text), "SIL-1: alerts matching alertname=NoisyCheck,instance=~db[0-9]+ open and join no incident until") {
		t.Fatalf("silence: %q", r.Text)
	}
	body := in.ok("/webhooks/alertmanager", amGroup("NoisyCheck", amAlert{"db1", "noisy on db1"}))
	if !strings.Contains(body, `"result":"silenced"`) || !strings.Contains(body, `"silence":"SIL-1"`) || strings.Contains(body, `"incident"`) {
		t.Fatalf("the silenced alert answered %s", body)
	}
	in.ok("/webhooks/alertmanager", amGroup("NoisyCheck", amAlert{"db1", "noisy on db1"}))
	if body := in.ok("/webhooks/alertmanager", amGroup("NoisyCheck", amAlert{"web1", "noisy on web1"})); !strings.Contains(body, `"result":"opened"`) {
		t.Fatalf("an alert the silence does not match answered %s", body)
	}
	// (The silence was announced in the channel.)
	waitFor(t, s, "the other alert's root", func(s *slackfake.Server) bool { return incidentRoot(s, "C0DEFAULT", "INC-1").TS != "" })
	if ids := rootsByIncident(s, "C0DEFAULT"); len(ids) != 1 || strings.Contains(incidentRoot(s, "C0DEFAULT", "INC-1").Text, "db1") {
		t.Fatalf("roots %v: the silenced alert opened one", ids)
	}
	list := command(t, s, "C0DEFAULT", "silences")
	for _, want := range []string{"1 silence in force", "SIL-1: alerts matching alertname=NoisyCheck", "silenced 2 alerts", "×2", "noisy on db1", "broker maintenance"} {
		if !strings.Contains(list, want) {
			t.Fatalf("silences does not say %q:\n%s", want, list)
		}
	}
	if status := command(t, s, "C0PIPE", "status"); !strings.Contains(status, "Silences in force (1)") || !strings.Contains(status, "SIL-1") {
		t.Fatalf("status does not show the silence:\n%s", status)
	}
	if r := askIn(t, s, "U0ALICE", "C0DEFAULT", "silence expire SIL-1"); !strings.Contains(r.Text, "SIL-1 ended") {
		t.Fatalf("expire: %q", r.Text)
	}
	// Now db1 joins the group's incident, as news.
	if body := in.ok("/webhooks/alertmanager", amGroup("NoisyCheck", amAlert{"db1", "noisy on db1"})); !strings.Contains(body, `"incident":"INC-1","result":"duplicate"`) {
		t.Fatalf("after the silence ended: %s", body)
	}
	waitFor(t, s, "db1 in INC-1's thread", func(s *slackfake.Server) bool {
		th := threadTexts(s, "C0DEFAULT", incidentRoot(s, "C0DEFAULT", "INC-1").TS)
		return len(th) == 1 && strings.Contains(th[0], "New alert: noisy on db1")
	})
	var actions []string
	for _, e := range auditEntries(t, in.prefix) {
		actions = append(actions, e.Action+" "+e.Outcome)
	}
	if j := strings.Join(actions, ","); !strings.Contains(j, "silence alerts done") || !strings.Contains(j, "end silence done") {
		t.Fatalf("audit %q", actions)
	}
}

// incidentRoot is the root message of incident id in channel (zero when there is none).
func incidentRoot(s *slackfake.Server, channel, id string) slackfake.Message {
	for _, m := range roots(s, channel) {
		if strings.Contains(m.Text, " "+id+": ") {
			return m
		}
	}
	return slackfake.Message{}
}

// escalations are the escalation replies in a thread.
func escalations(s *slackfake.Server, ch, ts string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range replies(s, ch, ts) {
		if strings.Contains(m.Text, "is still unacknowledged after") {
			out = append(out, m)
		}
	}
	return out
}

// TestE2EEscalationOnceAcrossReplicas: with two replicas, an unacknowledged SEV1 is escalated
// once, mentioning the on-call group, and its root says so; an acknowledged one never is.
func TestE2EEscalationOnceAcrossReplicas(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s,
		slackExtra: "  escalation: {after: 2s, mention: [S0ONCALL, U0LEAD], severities: [SEV1]}\n"}
	a, b := start(t, su), start(t, su)
	a.ok("/webhooks/generic", alertFor("replication broken", "esc-1", ""))
	b.ok("/webhooks/generic", alertFor("primary down", "esc-2", ""))
	waitFor(t, s, "two roots", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 2 })
	if r := askIn(t, s, "U0BOB", "C0DEFAULT", "incident ack INC-2"); !strings.Contains(r.Text, "INC-2 acknowledged") {
		t.Fatalf("ack: %q", r.Text)
	}
	byID := map[string]slackfake.Message{}
	for _, r := range roots(s, "C0DEFAULT") {
		byID[regexp.MustCompile(`INC-\d+`).FindString(r.Text)] = r
	}
	waitFor(t, s, "INC-1's escalation", func(s *slackfake.Server) bool {
		return len(escalations(s, "C0DEFAULT", byID["INC-1"].TS)) == 1 &&
			strings.Contains(mustMessage(s, "C0DEFAULT", byID["INC-1"].TS).Text, "escalated")
	})
	esc := escalations(s, "C0DEFAULT", byID["INC-1"].TS)[0]
	if strings.Join(esc.Mentions, " ") != "<!subteam^S0ONCALL> <@U0LEAD>" {
		t.Fatalf("the escalation mentions %v: %q", esc.Mentions, esc.Text)
	}
	// Three more ticks of the escalation job (each run by one replica or the other): still one.
	rdb, _ := testredis.Client(t)
	st := state.New(rdb, su.prefix)
	first, err := st.LastTick(t.Context(), "escalate")
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "three more escalation ticks", func() bool {
		last, err := st.LastTick(t.Context(), "escalate")
		return err == nil && last.Sub(first) >= 3*time.Second
	})
	if n := len(escalations(s, "C0DEFAULT", byID["INC-1"].TS)); n != 1 {
		t.Fatalf("INC-1 escalated %d times", n)
	}
	if n := len(escalations(s, "C0DEFAULT", byID["INC-2"].TS)); n != 0 {
		t.Fatalf("the acknowledged INC-2 escalated %d times", n)
	}
	for _, m := range s.Messages("C0DEFAULT") {
		if len(m.Mentions) > 0 && m.TS != esc.TS {
			t.Fatalf("another message mentions %v: %q", m.Mentions, m.Text)
		}
	}
}

// inertText is a reply as a person reads it: without the zero-width spaces that keep *, _
// and ~ from formatting.
func inertText(s string) string { return strings.ReplaceAll(s, "\u200b", "") }

// grafanaWithLinks is a Grafana notification whose alert carries every kind of link, one of
// them a javascript: URL and one with credentials, which must not reach Slack.
func grafanaWithLinks() string {
	b, _ := json.Marshal(map[string]any{"status": "firing", "orgId": 1, "alerts": []map[string]any{{
		"status": "firing", "fingerprint": "4f6a0c2b9e1d7a35",
		"labels": map[string]string{"alertname": "ReplicationLag", "grafana_folder": "Databases", "team": "data"},
		"annotations": map[string]string{"summary": "replication lag on db1", "description": "lag 45s > 30s",
			"runbook_url": "https://wiki.example/runbooks/replication"},
		"generatorURL": "https://grafana.example/alerting/grafana/ab12/view",
		"dashboardURL": "https://grafana.example/d/db?orgId=1",
		"panelURL":     "https://user:secret@grafana.example/d/db?orgId=1&viewPanel=4",
		"silenceURL":   "javascript:alert(document.cookie)",
	}}})
	return string(b)
}

// TestE2ELinksOnTheRoot: the alert's own http(s) links are buttons on the root; incident show
// lists its labels and annotations.
func TestE2ELinksOnTheRoot(t *testing.T) {
	in := start(t, setup{})
	s := in.slack
	in.ok("/webhooks/grafana", grafanaWithLinks())
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	blocks := string(roots(s, "C0DEFAULT")[0].Blocks)
	for _, want := range []string{`"url":"https://wiki.example/runbooks/replication"`, `"url":"https://grafana.example/d/db?orgId=1"`,
		`"url":"https://grafana.example/alerting/grafana/ab12/view"`, `"text":"Runbook"`, `"text":"Dashboard"`} {
		if !strings.Contains(blocks, want) {
			t.Fatalf("the root lacks %s: %s", want, blocks)
		}
	}
	for _, bad := range []string{"javascript", "secret", "Silence in Grafana", `"text":"Panel"`} {
		if strings.Contains(blocks, bad) {
			t.Fatalf("the root carries %q: %s", bad, blocks)
		}
	}
	show := command(t, s, "C0DEFAULT", "incident show INC-1")
	for _, want := range []string{"labels: alertname=ReplicationLag, grafana_folder=Databases, team=data",
		`annotations: description=lag 45s \u0026gt; 30s, runbook_url=https://wiki.example/runbooks/replication, summary=replication lag on db1`,
		"links: dashboard=https://grafana.example/d/db?orgId=1, generator="} {
		if !strings.Contains(show, want) {
			t.Fatalf("incident show lacks %q:\n%s", want, show)
		}
	}
	if strings.Contains(show, "secret") || strings.Contains(show, "javascript") {
		t.Fatalf("incident show lists a link with credentials or a javascript: URL:\n%s", show)
	}
}

// TestE2ESeverityAndOwner: severity and owner set by commands show on the root and in
// incident list, are audited, and the owner is mentioned in the thread.
func TestE2ESeverityAndOwner(t *testing.T) {
	in := start(t, setup{slackExtra: "  remediators: [U0ADMIN]\n"})
	s := in.slack
	in.ok("/webhooks/generic", generic("disk almost full", "own-1"))
	waitFor(t, s, "the root", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	root := roots(s, "C0DEFAULT")[0]
	if r := askIn(t, s, "U0ALICE", "C0DEFAULT", "incident severity INC-1 SEV1"); !strings.Contains(r.Text, "INC-1 is SEV1 critical now (was SEV3 warning)") {
		t.Fatalf("severity: %q", r.Text)
	}
	if r := askIn(t, s, "U0ALICE", "C0DEFAULT", "incident assign INC-1 <@U0BOB|bob>"); !strings.Contains(r.Text, "INC-1 is assigned to bob now") {
		t.Fatalf("assign: %q", r.Text)
	}
	waitFor(t, s, "the root with both, and both thread notes", func(s *slackfake.Server) bool {
		m := mustMessage(s, "C0DEFAULT", root.TS)
		return strings.Contains(m.Text, "SEV1 critical") && strings.Contains(string(m.Blocks), `*Owner*\n\u003c@U0BOB\u003e`) &&
			strings.Contains(string(m.Blocks), "Severity set by u0alice") && len(replies(s, "C0DEFAULT", root.TS)) >= 2
	})
	th := replies(s, "C0DEFAULT", root.TS)
	if len(th) != 2 || !strings.HasPrefix(th[0].Text, "Severity set to SEV1 critical by u0alice (was SEV3 warning)") ||
		th[1].Text != "Assigned to <@U0BOB> by u0alice." || strings.Join(th[1].Mentions, " ") != "<@U0BOB>" {
		t.Fatalf("thread %+v", th)
	}
	in.ok("/webhooks/generic", generic("disk almost full", "own-1"))
	list := command(t, s, "C0DEFAULT", "incident list")
	if !regexp.MustCompile(`INC-1\s+SEV1 critical\s+open\s+bob\s`).MatchString(list) {
		t.Fatalf("incident list:\n%s", list)
	}
	audit := command(t, s, "C0DEFAULT", "incident show INC-1") // visible to all; the trail to remediators
	if !strings.Contains(audit, "Owner: bob (U0BOB), assigned by u0alice") {
		t.Fatalf("incident show:\n%s", audit)
	}
	trail := askIn(t, s, "U0ADMIN", "C0DEFAULT", "audit INC-1")
	for _, want := range []string{"set severity INC-1", "assign INC-1", "SEV1 critical (was SEV3 warning)", "to bob (U0BOB)"} {
		if !strings.Contains(trail.Text+string(trail.Blocks), want) {
			t.Fatalf("the audit trail lacks %q: %s", want, trail.Blocks)
		}
	}
	if r := askIn(t, s, "U0ALICE", "C0DEFAULT", "incident assign INC-1 @carol"); !strings.Contains(r.Text, "plain text") {
		t.Fatalf("assigning a name Slack did not resolve: %q", r.Text)
	}
}

// draftRow is a timeline row of the postmortem draft.
var draftRow = regexp.MustCompile(`(?m)^\| (\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ) \| ([^|]+) \|`)

// TestE2EPostmortemHasTheWholeTimeline: `incident postmortem` shares a Markdown file in the
// incident's thread; read back from Slack, it holds every event of the incident's timeline,
// and the response times, the actions and the follow-ups.
func TestE2EPostmortemHasTheWholeTimeline(t *testing.T) {
	in := start(t, setup{})
	s := in.slack
	in.ok("/webhooks/generic", genericDetail("client replied sms", "pm-1", "no writes for 20m"))
	waitFor(t, s, "the root and the diagnosis", func(s *slackfake.Server) bool {
		r := roots(s, "C0PIPE")
		return len(r) == 1 && len(replies(s, "C0PIPE", r[0].TS)) == 1
	})
	root := roots(s, "C0PIPE")[0]
	for _, c := range []string{"incident ack INC-1", "incident severity INC-1 SEV2", "incident assign INC-1 me",
		"incident silence INC-1 for 1h investigating", "silence expire SIL-1"} {
		if r := askIn(t, s, "U0ALICE", "C0PIPE", c); strings.HasPrefix(r.Text, "Sorry") {
			t.Fatalf("%s: %q", c, r.Text)
		}
	}
	for i := range 3 {
		in.ok("/webhooks/generic", genericDetail("client replied sms", "pm-1", fmt.Sprintf("no writes for %dm", 21+i)))
	}
	if r := askIn(t, s, "U0ALICE", "C0PIPE", "incident resolve INC-1 checkpoint ACL restored"); !strings.Contains(r.Text, "INC-1 resolved") {
		t.Fatalf("resolve: %q", r.Text)
	}
	rdb, _ := testredis.Client(t)
	events, dropped, err := state.New(rdb, in.prefix).FullTimeline(t.Context(), "INC-1")
	if err != nil || dropped != 0 || len(events) < 10 {
		t.Fatalf("timeline of %d events (%d dropped): %v", len(events), dropped, err)
	}
	r := askIn(t, s, "U0ALICE", "C0PIPE", "incident postmortem INC-1")
	if !strings.Contains(r.Text, fmt.Sprintf("Postmortem draft of INC-1 posted in its thread: INC-1-postmortem.md, with all %d timeline events", len(events))) {
		t.Fatalf("postmortem: %q", r.Text)
	}
	files := s.Files()
	if len(files) != 1 || files[0].Name != "INC-1-postmortem.md" || files[0].Channel != "C0PIPE" || files[0].ThreadTS != root.TS {
		t.Fatalf("shared files %+v", files)
	}
	draft := string(files[0].Content)
	rows := map[string]int{}
	for _, m := range draftRow.FindAllStringSubmatch(draft, -1) {
		rows[m[1]+" "+strings.TrimSpace(m[2])]++
	}
	want := map[string]int{}
	for _, e := range events {
		want[e.At.UTC().Format("2006-01-02 15:04:05Z")+" "+strings.ReplaceAll(e.Name, "_", `\_`)]++
	}
	for k, n := range want {
		if rows[k] != n {
			t.Errorf("the draft has %d rows for %q, the timeline %d", rows[k], k, n)
		}
	}
	if len(draftRow.FindAllString(draft, -1)) != len(events) {
		t.Errorf("the draft has %d timeline rows for %d events", len(draftRow.FindAllString(draft, -1)), len(events))
	}
	for _, want := range []string{"## Summary", "## Impact window", "- **Time to acknowledge:** ", "- **Time to resolve:** ",
		"## Diagnoses", "Automatic diagnosis", "## Human actions and remediations", "u0alice: silenced — SIL-1 until", "u0alice: resolved — checkpoint ACL restored", "## Follow-ups", "- [ ] "} {
		if !strings.Contains(draft, want) {
			t.Errorf("the draft lacks %q", want)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("draft:\n%s", draft)
	}
	if m, _ := s.Message("C0PIPE", files[0].MessageTS); len(m.Files) != 1 || m.ThreadTS != root.TS {
		t.Fatalf("the file is not shared in INC-1's thread: %+v", m)
	}
}

// TestE2ELabelSilenceHoldsAcrossReplicasAndRestarts: a silence made through one replica
// silences alerts that reach another, and a replica started afterwards.
func TestE2ELabelSilenceHoldsAcrossReplicasAndRestarts(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s}
	a, b := start(t, su), start(t, su)
	// Both replicas have read the (empty) silences.
	a.ok("/webhooks/alertmanager", amGroup("Warmup", amAlert{"x", "warm"}))
	b.ok("/webhooks/alertmanager", amGroup("Warmup", amAlert{"x", "warm"}))
	if r := askIn(t, s, "U0ALICE", "C0DEFAULT", "silence alertname=NoisyCheck for 1h"); !strings.Contains(r.Text, "SIL-1") {
		t.Fatalf("silence: %q", r.Text)
	}
	for _, in := range []*instance{a, b} {
		if body := in.ok("/webhooks/alertmanager", amGroup("NoisyCheck", amAlert{"db1", "noisy"})); !strings.Contains(body, `"result":"silenced"`) {
			t.Fatalf("a replica did not hold the silence: %s", body)
		}
	}
	a.stop()
	b.stop()
	c := start(t, su)
	if body := c.ok("/webhooks/alertmanager", amGroup("NoisyCheck", amAlert{"db2", "noisy"})); !strings.Contains(body, `"result":"silenced"`) {
		t.Fatalf("after a restart: %s", body)
	}
	if list := command(t, s, "C0DEFAULT", "silences"); !strings.Contains(list, "silenced 3 alerts") {
		t.Fatalf("silences:\n%s", list)
	}
}

// TestE2EIncidentListPages: 25 open incidents in a channel: incident list shows the newest 20,
// newest first, with a More button that shows the other 5; a filter narrows it; a command
// typed without an ID names the newest open ones.
func TestE2EIncidentListPages(t *testing.T) {
	in := start(t, setup{prefix: testredis.Prefix(), alertsExtra: "  flood: {new_incidents_per_minute: 0}\n"})
	s := in.slack
	for i := 1; i <= 25; i++ {
		a := answerOf(t, in.ok("/webhooks/generic", alertFor(fmt.Sprintf("disk %02d", i), fmt.Sprintf("disk-%02d", i), "")))
		if a.Incident != fmt.Sprintf("INC-%d", i) {
			t.Fatalf("alert %d opened %+v", i, a)
		}
	}
	// The table's rows start a line of the reply's blocks (JSON: after an escaped newline).
	rows := func(blocks string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`\\n(INC-\d+) `).FindAllStringSubmatch(blocks, -1) {
			out = append(out, m[1])
		}
		return out
	}
	r := askIn(t, s, "U0ALICE", "C0DEFAULT", "incident list")
	got := rows(string(r.Blocks))
	if !strings.Contains(r.Text, "25 open incidents in this channel, newest first (20 shown)") || len(got) != 20 ||
		got[0] != "INC-25" || got[19] != "INC-6" || !strings.Contains(string(r.Blocks), `"More"`) {
		t.Fatalf("first page %q rows %v:\n%s", r.Text, got, r.Blocks)
	}
	before := len(s.ResponsePosts())
	if _, err := s.SendBlockAction(context.Background(), slackfake.BlockAction{UserID: "U0ALICE", ChannelID: "C0DEFAULT",
		MessageTS: ephemeralTS(t, s, "25 open incidents"), ActionID: "cmd_incident_list_more"}); err != nil {
		t.Fatal(err)
	}
	var more slackfake.ResponsePost
	waitFor(t, s, "the next page", func(s *slackfake.Server) bool {
		p := s.ResponsePosts()
		if len(p) > before {
			more = p[len(p)-1]
			return true
		}
		return false
	})
	if got := rows(string(more.Blocks)); strings.Join(got, " ") != "INC-5 INC-4 INC-3 INC-2 INC-1" || strings.Contains(string(more.Blocks), `"More"`) {
		t.Fatalf("second page %q rows %v:\n%s", more.Text, got, more.Blocks)
	}
	askIn(t, s, "U0BOB", "C0DEFAULT", "incident ack INC-7")
	r = askIn(t, s, "U0ALICE", "C0DEFAULT", "incident list acked")
	if got := rows(string(r.Blocks)); strings.Join(got, " ") != "INC-7" {
		t.Fatalf("acked: %q rows %v", r.Text, got)
	}
	r = askIn(t, s, "U0ALICE", "C0DEFAULT", "incident resolve")
	if !strings.Contains(r.Text, "which incident? This channel has 25 open: INC-25, INC-24, INC-23, INC-22, INC-21, INC-20, INC-19, INC-18, INC-17, INC-16 and 15 more") {
		t.Fatalf("resolve without an ID: %q", r.Text)
	}
}

// TestE2EEscalationLevelsAndUnack: with two replicas, level 1 calls the on-call group once; an
// acknowledgement holds level 2 back for as long as it lasts; unack resumes the count where it
// stopped, and level 2 calls the leads, then repeats; each mention once per replica set.
func TestE2EEscalationLevelsAndUnack(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s,
		slackExtra: "  escalation: {after: 1s, mention: [S0ONCALL], severities: [SEV1], levels: [{after: 3s, mention: [S0LEADS], repeat: 2s}]}\n"}
	a, b := start(t, su), start(t, su)
	a.ok("/webhooks/generic", alertFor("primary down", "esc-1", ""))
	var root slackfake.Message
	waitFor(t, s, "the root", func(s *slackfake.Server) bool {
		root = incidentRoot(s, "C0DEFAULT", "INC-1")
		return root.TS != ""
	})
	mentions := func() []string {
		var out []string
		for _, m := range replies(s, "C0DEFAULT", root.TS) {
			if len(m.Mentions) > 0 {
				out = append(out, strings.Join(m.Mentions, " "))
			}
		}
		return out
	}
	waitFor(t, s, "level 1", func(*slackfake.Server) bool { return len(mentions()) == 1 })
	if r := askIn(t, s, "U0BOB", "C0DEFAULT", "incident ack INC-1"); !strings.Contains(r.Text, "INC-1 acknowledged") {
		t.Fatalf("ack: %q", r.Text)
	}
	waitFor(t, s, "the Unacknowledge button", func(s *slackfake.Server) bool {
		return strings.Contains(string(mustMessage(s, "C0DEFAULT", root.TS).Blocks), `"Unacknowledge"`)
	})
	rdb, _ := testredis.Client(t)
	st := state.New(rdb, su.prefix)
	first, err := st.LastTick(t.Context(), "escalate")
	if err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, "4s of escalation ticks while acknowledged", func() bool {
		last, err := st.LastTick(t.Context(), "escalate")
		return err == nil && last.Sub(first) >= 4*time.Second
	})
	if m := mentions(); len(m) != 1 {
		t.Fatalf("escalated while acknowledged: %v", m)
	}
	click(t, s, "U0BOB", "C0DEFAULT", root.TS, "incident_unack")
	waitFor(t, s, "level 2 and its repeat", func(*slackfake.Server) bool { return len(mentions()) >= 3 })
	m := mentions()
	if m[0] != "<!subteam^S0ONCALL>" || m[1] != "<!subteam^S0LEADS>" || m[2] != "<!subteam^S0LEADS>" {
		t.Fatalf("mentions in order %v, want the on-call group, then the leads twice", m)
	}
	th := replies(s, "C0DEFAULT", root.TS)
	var texts []string
	for _, r := range th {
		texts = append(texts, r.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"Unacknowledged by u0bob: escalation resumes at its next level.", "(level 2)", "(a reminder, level 2)"} {
		if !strings.Contains(all, want) {
			t.Fatalf("the thread lacks %q:\n%s", want, all)
		}
	}
	_ = b
}
