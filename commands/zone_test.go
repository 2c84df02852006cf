package commands_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// TestIncidentShowInTheReadersZone: incident show writes its times in slack.time_zone
// (human.Stamp), as the root message does, not always in UTC.
func TestIncidentShowInTheReadersZone(t *testing.T) {
	h, st := newHandler(t)
	ctx := context.Background()
	if _, err := st.RecordAlert(ctx, state.AlertRecord{Key: "a", Fingerprint: "a", Title: "t a", Severity: 2, Channel: "C1"}); err != nil {
		t.Fatal(err)
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	human.SetZone(paris)
	t.Cleanup(func() { human.SetZone(nil) })
	r := h.Handle(ctx, commands.Request{ChannelID: "C1", Text: "incident show INC-1"})
	all := r.Text
	for _, s := range r.Sections {
		all += "\n" + strings.Join(s.Lines, "\n")
	}
	stamp := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T`
	if !regexp.MustCompile(`First seen: ` + stamp + `   Last seen: ` + stamp).MatchString(all) {
		t.Fatalf("incident show in Europe/Paris:\n%s", all)
	}
	if strings.Contains(all, "Z ") || strings.HasSuffix(all, "Z") {
		t.Errorf("a UTC stamp in Europe/Paris:\n%s", all)
	}
}
