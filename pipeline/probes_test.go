package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// TestProbesSpeakOnChange: a probe says something only when health changes: nothing on a
// repeated result; one notice on failure and one on recovery; with probe.open_incident the
// failure opens an incident (its automatic diagnosis queued once), a repeated failure only edits
// its root, a different failure and a failure after a recovery each post one note, and the
// recovery resolves its alert.
func TestProbesSpeakOnChange(t *testing.T) {
	type step struct {
		checkpoint string // ok, missing or empty
		status     probe.Status
		want       []string // what reaches the outbox: "notice CHANNEL: …", "root", "event INCIDENT EVENT: …"
	}
	cases := []struct {
		name     string
		incident bool
		silence  string // a label silence made before the first step
		steps    []step
		opened   int
	}{
		{"notices", false, "", []step{
			{"ok", probe.StatusOK, nil},
			{"ok", probe.StatusOK, nil},
			{"missing", probe.StatusFailed, []string{`notice C0PIPE: failed sms-replies: class=NOT_FOUND status= reason="no_location DIR" failure="" before=""`}},
			{"missing", probe.StatusFailed, nil},
			{"ok", probe.StatusOK, []string{`notice C0PIPE: recovered sms-replies: class= status=OK reason=""`}},
			{"ok", probe.StatusOK, nil},
		}, 0},
		{"an incident", true, "", []step{
			{"missing", probe.StatusFailed, []string{"root"}},
			{"missing", probe.StatusFailed, nil},
			{"empty", probe.StatusFailed, []string{`event INC-1 probe: fails_differently sms-replies: class= status= reason="" ` +
				`failure="NOT_FOUND: no_checkpoint_files DIR" before="NOT_FOUND: no_location DIR" started=true`}},
			{"ok", probe.StatusOK, []string{`event INC-1 all_resolved: ok_again sms-replies: class= status=OK reason="" failure="" before="" started=true`}},
			{"missing", probe.StatusFailed, []string{`event INC-1 probe: failing_again sms-replies: class= status= reason="" ` +
				`failure="NOT_FOUND: no_location DIR" before="" started=true`}},
		}, 1},
		{"a label silence holds the failure", true, "alertname=streamwatch_probe_failed,pipeline=sms-replies", []step{
			{"missing", probe.StatusFailed, nil},
			{"empty", probe.StatusFailed, nil},
			{"ok", probe.StatusOK, nil},
		}, 0},
		{"a silence of another pipeline does not", true, "alertname=streamwatch_probe_failed,pipeline=billing", []step{
			{"missing", probe.StatusFailed, []string{"root"}},
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st, _ := newStore(t)
			dir := filepath.Join(t.TempDir(), "cp")
			ps := &pipeline.Probes{Store: st, Pipelines: []pipeline.ProbeTarget{{Name: "sms-replies", Channel: "C0PIPE", OpenIncident: c.incident,
				Probe: probe.Options{Pipeline: "sms-replies", Location: dir, StaleAfter: time.Hour}}}, Words: probeWords}
			if c.silence != "" {
				ms, err := state.ParseMatchers(c.silence)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.CreateSilence(ctx, ms, time.Now().Add(time.Hour), state.Maker{Name: "alice", ID: "U0ALICE"}, "maintenance"); err != nil {
					t.Fatal(err)
				}
			}
			for i, s := range c.steps {
				os.RemoveAll(dir)
				switch s.checkpoint {
				case "ok":
					if err := sparktest.WriteCheckpoint(dir, sparktest.Spec{Start: time.Now().Add(-5 * time.Minute), LatestBatch: 3, LatestCommit: 3}); err != nil {
						t.Fatal(err)
					}
				case "empty":
					os.MkdirAll(dir, 0o755)
				}
				res, err := ps.Probe(ctx, "sms-replies")
				if err != nil || res.Status != s.status {
					t.Fatalf("step %d: %s %v, want %s", i+1, res.Status, err, s.status)
				}
				got := outbox(t, st)
				for j := range got {
					got[j] = strings.ReplaceAll(got[j], dir, "DIR")
				}
				if len(got) != len(s.want) {
					t.Fatalf("step %d (%s): the outbox got %q, want %q", i+1, s.checkpoint, got, s.want)
				}
				for j := range got {
					if !strings.HasPrefix(got[j], s.want[j]) {
						t.Fatalf("step %d (%s): the outbox got %q, want %q", i+1, s.checkpoint, got, s.want)
					}
				}
			}
			waiting, err := st.ClaimDiagnoses(ctx, 10, time.Minute)
			if err != nil || len(waiting) != c.opened || (c.opened > 0 && waiting[0] != (state.Waiting{Incident: "INC-1", Pipeline: "sms-replies"})) {
				t.Fatalf("the automatic diagnoses waiting are %v (%v), want %d for INC-1 of sms-replies", waiting, err, c.opened)
			}
			if c.opened > 0 {
				inc, err := st.Get(ctx, "INC-1")
				want := `title sms-replies: class= status= reason="no_location ` + dir + `"`
				if err != nil || !strings.HasPrefix(inc.Title, want) {
					t.Fatalf("the incident's title: %v, want %q", inc, want)
				}
			}
			hist, err := ps.History(ctx, "sms-replies", 100)
			if err != nil || len(hist) != len(c.steps) {
				t.Fatalf("history: %d results, %v", len(hist), err)
			}
		})
	}
}

// outbox takes what the outbox holds, as the test names it, leaving out coalesced repeats.
func outbox(t *testing.T, st *state.Store) []string {
	t.Helper()
	ctx := context.Background()
	ds, err := st.ReadOutbox(ctx, "test", false, 100, -1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		switch d.Kind {
		case state.KindNotice:
			out = append(out, "notice "+d.Channel+": "+d.Detail)
		case state.KindRoot:
			out = append(out, "root")
		case state.KindEvent:
			out = append(out, "event "+d.Incident+" "+d.Name+": "+d.Detail)
		}
		if d.Kind == state.KindNotice {
			err = st.Drop(ctx, d)
		} else {
			err = st.Complete(ctx, d, "", "")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// probeWords words a probe's message as its kind and fields, and a probe's reason as its
// codes and paths, for tests to read (the app's words are commands.ProbeMessage's, tested
// there).
func probeWords(m pipeline.ProbeMessage) string {
	if m.Kind == pipeline.ProbeReason {
		var codes []string
		for _, w := range m.Result.Why {
			codes = append(codes, strings.TrimSpace(string(w.Code)+" "+w.Path))
		}
		return strings.Join(codes, "; ")
	}
	return fmt.Sprintf("%s %s: class=%s status=%s reason=%q failure=%q before=%q started=%t",
		m.Kind, m.Pipeline, m.Class, m.Status, m.Reason, m.Failure, m.Before, !m.At.IsZero())
}
