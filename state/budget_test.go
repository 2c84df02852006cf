package state_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

// TestCallBudget holds the Redis calls the record script makes on each alert path: a run of
// one alert (what a lone webhook costs, the run's own calls included) and each further alert
// of the same path in the same run (what a storm's batch costs an alert). A path that grows
// fails here, with its new count; to change a budget on purpose, change it below and say why
// in the commit (docs/architecture.md has the table, CONTRIBUTING.md how to measure).
func TestCallBudget(t *testing.T) {
	budgets := []struct {
		path    string
		one     int64 // a run of this one alert
		further int64 // each further alert of the path in the same run
		// setup records what the path needs and returns the alerts of the measured run
		// (n of them: the first is the path's, the others its repeats in the run).
		setup func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord
	}{
		{"identical re-send", 6, 2, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			record(t, s, alert("k", "fp"))
			record(t, s, alert("k", "fp")) // an update is pending already, as during a storm
			c.Add(time.Second)
			return repeat(alert("k", "fp"), n)
		}},
		{"identical re-send, the first since the root's last update (schedules the next)", 8, 2, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			record(t, s, alert("k", "fp"))
			c.Add(time.Second)
			return repeat(alert("k", "fp"), n)
		}},
		{"identical re-send after a window (its last seen is written)", 7, 2, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			record(t, s, alert("k", "fp"))
			record(t, s, alert("k", "fp"))
			c.Add(time.Minute)
			return repeat(alert("k", "fp"), n)
		}},
		{"new alert in an incident (news)", 16, 8, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			record(t, s, alert("k", "fp"))
			c.Add(time.Second)
			var as []state.AlertRecord
			for i := range n {
				as = append(as, alert("k", fmt.Sprint("new-", i)))
			}
			return as
		}},
		{"new key (opens its incident, and queues its automatic diagnosis)", 20, 17, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			var as []state.AlertRecord
			for i := range n {
				as = append(as, alert(fmt.Sprint("key-", i), "fp"))
			}
			return as
		}},
		{"new key joining a flood", 15, 4, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			s.FloodLimit = 2
			record(t, s, alert("a", "a"), alert("b", "b"), alert("c", "c"))
			c.Add(time.Second)
			var as []state.AlertRecord
			for i := range n {
				as = append(as, alert(fmt.Sprint("storm-", i), fmt.Sprint("fp-", i)))
			}
			return as
		}},
		{"flooded key re-sent", 7, 3, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			s.FloodLimit = 2
			record(t, s, alert("a", "a"), alert("b", "b"), alert("c", "c"))
			c.Add(time.Second)
			return repeat(alert("c", "c"), n)
		}},
		{"resolve, others still fire (news)", 10, 2, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			record(t, s, alert("k", "a"), alert("k", "b"))
			c.Add(time.Second)
			return repeat(resolvedAlert("k", "a"), n)
		}},
		{"the last alert resolves (reads who opened it: detection's incidents resolve at once)", 14, 2, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			record(t, s, alert("k", "a"))
			c.Add(time.Second)
			return repeat(resolvedAlert("k", "a"), n)
		}},
		{"resolved alert re-sent", 3, 2, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			record(t, s, alert("k", "a"), alert("k", "b"), resolvedAlert("k", "a"))
			c.Add(time.Second)
			return repeat(resolvedAlert("k", "a"), n)
		}},
		{"silenced", 11, 6, func(t *testing.T, s *state.Store, c *clock, n int) []state.AlertRecord {
			if _, err := s.CreateSilence(context.Background(), mustMatchers(t, "alertname=muted"), c.Now().Add(time.Hour), state.Maker{Name: "bob"}, ""); err != nil {
				t.Fatal(err)
			}
			a := labelled("k", "fp", "muted", map[string]string{"alertname": "muted"})
			return repeat(a, n)
		}},
	}
	// The budgets are documented: docs/architecture.md shows this table, row for row.
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range budgets {
		if row := fmt.Sprintf("| %s | %d | %d |", b.path, b.one, b.further); !strings.Contains(string(doc), row) {
			t.Errorf("docs/architecture.md lacks the call budget's row %q", row)
		}
	}
	const n = 11
	var table []string
	for _, b := range budgets {
		t.Run(b.path, func(t *testing.T) {
			count := func(runs int) int64 {
				s, c, _, _ := newStore(t)
				calls := s.CountCalls()
				as := b.setup(t, s, c, runs)
				calls.Store(0)
				record(t, s, as...)
				return calls.Load()
			}
			one := count(1)
			further := (count(n) - one) / (n - 1)
			table = append(table, fmt.Sprintf("| %s | %d | %d |", b.path, one, further))
			if one > b.one || further > b.further {
				t.Errorf("%s: %d calls for one alert (budget %d), %d for each further one (budget %d)", b.path, one, b.one, further, b.further)
			}
			if one < b.one || further < b.further {
				t.Logf("%s is now cheaper: %d/%d (budget %d/%d): lower the budget", b.path, one, further, b.one, b.further)
			}
		})
	}
	t.Logf("| path | calls, a run of one | each further alert |\n|---|---:|---:|\n%s", strings.Join(table, "\n"))
}

func repeat(a state.AlertRecord, n int) []state.AlertRecord {
	out := make([]state.AlertRecord, n)
	for i := range out {
		out[i] = a
	}
	return out
}

func resolvedAlert(key, fp string) state.AlertRecord {
	a := alert(key, fp)
	a.Resolved = true
	return a
}
