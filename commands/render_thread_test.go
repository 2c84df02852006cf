package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

// marked is a Markup that shows where each part went through it, so a test sees that every
// part a sentence did not choose was handed to the renderer to make inert.
type marked struct{}

func (marked) Line(s string, n int) string { return "L[" + s + "]" }
func (marked) Text(s string, n int) string { return "T[" + s + "]" }
func (marked) Code(s string, n int) string { return "C[" + s + "]" }
func (marked) Mention(id string) string {
	if strings.HasPrefix(id, "U") {
		return "@" + id
	}
	return ""
}
func (marked) Channel(id string) string { return "#" + id }

func TestThreadTextHandsEveryForeignPartToMarkup(t *testing.T) {
	ev := func(e state.Event) state.Delivery { return state.Delivery{Kind: state.KindEvent, Event: e} }
	for _, c := range []struct {
		d    state.Delivery
		want string
	}{
		{ev(state.Event{Name: "acknowledged", Actor: "<!channel>"}), "Acknowledged by L[<!channel>]."},
		{ev(state.Event{Name: "resolved", Actor: "ann", Note: "*done*"}), "Resolved by L[ann]. Note: T[*done*]"},
		{ev(state.Event{Name: state.EventAllResolved, Actor: "probe", Detail: "ok"}), "Recovered: T[ok]."},
		{ev(state.Event{Name: "merged_into", Actor: "ann", Other: "INC-2"}), "Merged into L[INC-2] by L[ann]: its alerts and later duplicates go to L[INC-2]'s thread."},
		{ev(state.Event{Name: state.EventUnmergedFrom, Other: "INC-3", Count: 2}), "L[INC-3] was unmerged: its keys, alerts and 2 occurrences went back to it."},
		{ev(state.Event{Name: state.EventAckExpired, After: 30 * time.Minute}), "⏰ Acknowledged, but nobody has touched it for 30m0s: it is unacknowledged again, and escalates."},
		{ev(state.Event{Name: "assigned", Actor: "ann", Owner: "U123"}), "Assigned to @U123 by L[ann]."},
		{ev(state.Event{Name: "assigned", Actor: "ann", Owner: "x<y", OwnerName: "Bob"}), "Assigned to L[Bob] by L[ann]."},
		{state.Delivery{Kind: state.KindEvent, Incident: "INC-1", Event: state.Event{Name: "escalated", After: time.Hour, Mention: []string{"U1", "<!here>"}}},
			"@U1 📣 L[INC-1] is still unacknowledged after L[1h0m0s]. Acknowledge it, or silence it if it is known."},
		{ev(state.Event{Name: "an_event_of_tomorrow", Actor: "bot"}), "L[an_event_of_tomorrow] by L[bot]"},
		{state.Delivery{Kind: state.KindFlush, Incident: "INC-1", Event: state.Event{Name: state.EventNews, Distinct: 2,
			News: []state.News{{Kind: state.NewsJoined, Detail: "disk <full>"}}}}, "• New alert: L[disk <full>]\n… and 1 more (C[incident show INC-1] lists every alert)"},
		{state.Delivery{Kind: state.KindFlush, Event: state.Event{Name: "dup"}}, ""},
	} {
		if got := ThreadText(c.d, marked{}); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.d.Name, got, c.want)
		}
	}
}

func TestRootWordsHandForeignPartsToMarkup(t *testing.T) {
	inc := &state.Incident{ID: "INC-4", Title: "lag <high>", Severity: 2, Status: state.StatusOpen, Count: 3, Key: "k*",
		Pipeline: "orders", Owner: "U9", Previous: "INC-1", SeverityBy: "ann",
		Silence: &state.IncidentSilence{ID: "SIL-1", By: "bob", Reason: "deploy"}}
	if got, want := RootText(inc, marked{}), "🟠 INC-4: L[lag <high>] (SEV2 high, L["; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, ", silenced, 3 occurrences)") {
		t.Errorf("root text %q, want it to start %q and end with its flags and count", got, want)
	}
	var owner string
	for _, f := range RootFields(inc, "the orders stream", marked{}) {
		if f.Name == "Owner" {
			owner = f.Value
		}
		if f.Name == "Pipeline" && f.Value != "L[orders (the orders stream)]" {
			t.Errorf("pipeline field %q", f.Value)
		}
	}
	if owner != "@U9" {
		t.Errorf("owner field %q, want the mention", owner)
	}
	notes := strings.Join(RootNotes(inc, marked{}), "\n")
	for _, want := range []string{"Reopened: previous INC-1", "by L[bob] (L[SIL-1]): L[deploy]", "Severity set by L[ann]", "Key: L[k*]"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestRescueNoteLinksTheChannelItLeft(t *testing.T) {
	if got, want := RescueNote("C1", "C2", "is_archived", marked{}), "Moved here from #C1: that channel is archived. Its thread continues here."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
