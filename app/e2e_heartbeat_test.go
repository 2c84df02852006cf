package app_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
)

// watchdog is Alertmanager's always-firing Watchdog, as the generic webhook takes it.
func watchdog() string {
	b, _ := json.Marshal(map[string]any{"source": "alertmanager", "title": "Watchdog", "severity": "none", "dedup_key": "watchdog",
		"labels": map[string]string{"alertname": "Watchdog"}})
	return string(b)
}

// TestE2EHeartbeatDeadMansSwitch: with two replicas, a Watchdog every 500ms for 3s opens
// nothing; when it stops, one root opens after every (2s) and its grace (1s); when it arrives
// again, the incident resolves.
func TestE2EHeartbeatDeadMansSwitch(t *testing.T) {
	s := newSlack(t, slackfake.Options{})
	su := setup{redisURL: testredis.URL(t), prefix: testredis.Prefix(), slack: s,
		alertsExtra: "  heartbeats:\n    - match: {alertname: Watchdog}\n      every: 2s\n      channel: C0DEFAULT\n"}
	a, b := start(t, su), start(t, su)
	var lastSent time.Time
	for i := range 6 {
		in := a
		if i%2 == 1 {
			in = b
		}
		lastSent = time.Now()
		if got := answerOf(t, in.ok("/webhooks/generic", watchdog())); got.Result != "heartbeat" || got.Incident != "" {
			t.Fatalf("a Watchdog: %+v", got)
		}
		began := time.Now()
		wait.For(t, 5*time.Second, "half a second between Watchdogs", func() bool { return time.Since(began) >= 500*time.Millisecond })
	}
	if n := len(roots(s, "C0DEFAULT")); n != 0 {
		t.Fatalf("%d roots while the Watchdog arrived", n)
	}
	waitFor(t, s, "the root of the missing Watchdog", func(s *slackfake.Server) bool { return len(roots(s, "C0DEFAULT")) == 1 })
	if d := time.Since(lastSent); d < 3*time.Second {
		t.Fatalf("the root came %v after the last Watchdog, before every and its grace (3s)", d)
	}
	root := roots(s, "C0DEFAULT")[0]
	if !strings.Contains(root.Text, "No alertname=Watchdog alert for") || !strings.Contains(root.Text, "expected every 2s") {
		t.Fatalf("the root: %q", root.Text)
	}
	// Both replicas run the check: still one root a few ticks later.
	began := time.Now()
	wait.For(t, 10*time.Second, "three more checks", func() bool { return time.Since(began) >= 3*time.Second })
	if n := len(roots(s, "C0DEFAULT")); n != 1 {
		t.Fatalf("%d roots for one missing Watchdog", n)
	}
	b.ok("/webhooks/generic", watchdog())
	waitFor(t, s, "the incident resolved by the Watchdog's return", func(s *slackfake.Server) bool {
		for _, m := range replies(s, "C0DEFAULT", root.TS) {
			if strings.Contains(m.Text, "Resolved by streamwatch") && strings.Contains(m.Text, "arrived again") {
				return true
			}
		}
		return false
	})
	// Its clocks, once across the replicas: time to detect from the last Watchdog, time to
	// resolve; and the postmortem draft states them.
	count := func(series string) int {
		n := 0
		for _, in := range []*instance{a, b} {
			for _, l := range strings.Split(metricsOf(t, in), "\n") {
				if strings.HasPrefix(l, series+" ") {
					v, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(l, series)))
					n += v
				}
			}
		}
		return n
	}
	wait.For(t, 10*time.Second, "the clocks in /metrics", func() bool {
		return count(`streamwatch_incident_time_to_detect_seconds_count{source="heartbeat"}`) == 1 &&
			count(`streamwatch_incident_time_to_resolve_seconds_count{source="heartbeat"}`) == 1
	})
	command(t, s, "C0DEFAULT", "incident postmortem INC-1")
	var draft string
	waitFor(t, s, "the postmortem draft", func(s *slackfake.Server) bool {
		for _, f := range s.Files() {
			if f.Name == "INC-1-postmortem.md" {
				draft = string(f.Content)
			}
		}
		return draft != ""
	})
	// every (2s) and its grace (1s), plus up to a check's tick (1s)
	if !regexp.MustCompile(`\*\*Time to detect:\*\* [34]s \(the fault visible at`).MatchString(draft) {
		t.Fatalf("the postmortem draft's time to detect:\n%s", draft)
	}
	for _, want := range []string{"**Time to resolve:**", "**Time to acknowledge:** not acknowledged"} {
		if !strings.Contains(draft, want) {
			t.Fatalf("the postmortem draft lacks %q:\n%s", want, draft)
		}
	}
}
