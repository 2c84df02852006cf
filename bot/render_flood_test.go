package bot

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/state"
)

func floodIncident() *state.Incident {
	first := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	return &state.Incident{ID: "INC-21", Title: "Alert flood in C0PIPE", Severity: 2, Channel: "C0PIPE",
		Status: state.StatusOpen, FirstSeen: first, LastSeen: first.Add(time.Minute), Count: 2500, Previous: "INC-3",
		Flood: &state.FloodDetail{Distinct: 2400, Listed: 2400, SourceCount: 2, Limit: 20, QuietFor: 5 * time.Minute,
			Labels:  []state.KeyCount{{Value: "broker=b1", Count: 1900}, {Value: "note=<!channel> `x`", Count: 3}},
			Sources: []state.KeyCount{{Value: "KafkaPartitionLag", Count: 2300}}}}
}

// TestFloodRootSaysWhatTheFloodIs: the root names the channel, the distinct alerts, their
// sources and since when, ranks label values (escaped: a label never mentions anyone), and
// says when the flood is over.
func TestFloodRootSaysWhatTheFloodIs(t *testing.T) {
	inc := floodIncident()
	text := rootText(inc)
	want := "🟠 INC-21: Alert flood in <#C0PIPE>: 2400 distinct alerts from 2 sources since 2026-11-30 10:41:05Z (SEV2 high, open, 2500 occurrences)"
	if text != want {
		t.Fatalf("root text\n%s\nwant\n%s", text, want)
	}
	blocks, _ := json.Marshal(rootBlocks(inc, ""))
	for _, s := range []string{"more than 20 new ones arrived within a minute", "no more than 20 a minute arrive for 5m0s",
		"`broker=b1` 1900", `\u0026lt;!channel\u0026gt;`, "Previous flood: INC-3", "incident_ack", "incident_resolve"} {
		if !strings.Contains(string(blocks), s) {
			t.Errorf("root blocks lack %q: %s", s, blocks)
		}
	}
	// (JSON writes "<" as \u003c.)
	if strings.Contains(string(blocks), `\u003c!channel`) || strings.Contains(string(blocks), "incident_diagnose") {
		t.Errorf("root blocks mention everyone or offer a diagnosis of no pipeline: %s", blocks)
	}
	inc.Flood.Ended = inc.LastSeen.Add(6 * time.Minute)
	inc.Flood.Unlisted = 7
	if text := rootText(inc); !strings.Contains(text, "Alert flood in <#C0PIPE> (over): about 2400 distinct alerts") {
		t.Fatalf("root text after the flood: %s", text)
	}
	blocks, _ = json.Marshal(rootBlocks(inc, ""))
	if !strings.Contains(string(blocks), "The flood ended at 2026-11-30 10:48:05Z: new alerts in this channel open their own incidents again.") {
		t.Fatalf("root blocks after the flood: %s", blocks)
	}
}

func TestFloodThreadReplies(t *testing.T) {
	since := time.Date(2026, 11, 30, 10, 41, 15, 0, time.UTC)
	got := threadText(state.Delivery{Kind: state.KindFlush, Event: state.Event{Name: "flood", Count: 37, Distinct: 35, Since: since,
		Keys: []string{"lag-p0042", "<@U1>"}}})
	if want := "37 more alerts since 10:41:15, 35 with a new key; newest: `lag-p0042`, `&lt;@U1&gt;`"; got != want {
		t.Fatalf("flood update %q, want %q", got, want)
	}
	got = threadText(state.Delivery{Kind: state.KindEvent, Event: state.Event{Name: "flood_over", Limit: 20, Quiet: 5 * time.Minute, Since: since}})
	if !strings.HasPrefix(got, "The flood is over: at most 20 new alerts a minute for 5m0s (since 10:41:15). New alerts in this channel open their own incidents again") {
		t.Fatalf("flood over %q", got)
	}
}
