package commands

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/state"
)

// TestSilencePreviewReply: a preview lists at most 20 incidents and 5 alerts of each, says how
// many it would hold in all, and says so when it would hold none.
func TestSilencePreviewReply(t *testing.T) {
	var hits []state.PreviewHit
	for i := 1; i <= 21; i++ {
		hit := state.PreviewHit{Incident: &state.Incident{ID: fmt.Sprintf("INC-%d", i), Channel: "C0PIPE"}}
		for j := 0; j < 6; j++ {
			hit.Alerts = append(hit.Alerts, state.PreviewAlert{Title: "KafkaLag", Firing: j == 0, Fingerprint: "0123456789abcdef0123"})
		}
		hits = append(hits, hit)
	}
	r := silencePreviewReply("alertname=KafkaLag", hits, 50)
	if want := "Preview: a silence of alertname=KafkaLag would hold alerts of 21 open incidents (20 shown), and every matching alert that arrives while it lasts. Nothing was made."; r.Text != want {
		t.Errorf("text %q, want %q", r.Text, want)
	}
	lines := r.Sections[0].Lines
	if len(lines) != 20*7 || lines[1] != "           firing   KafkaLag [0123456789abcdef]" || lines[2] != "           resolved KafkaLag [0123456789abcdef]" ||
		lines[6] != "           … 1 more" || !strings.HasPrefix(lines[7], "INC-2    C0PIPE") {
		t.Errorf("lines:\n%s", strings.Join(lines, "\n"))
	}
	if r := silencePreviewReply("env=dev", hits[:1], 50); !strings.Contains(r.Text, "alerts of 1 open incident, and every") {
		t.Errorf("one incident: %q", r.Text)
	}
	none := silencePreviewReply("env=dev", nil, 50)
	if want := "Preview: a silence of env=dev would hold none of the 50 newest open incidents' alerts; it would hold alerts that arrive while it lasts. Nothing was made."; none.Text != want || len(none.Sections) != 0 {
		t.Errorf("none: %+v", none)
	}
}
