package commands_test

import (
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/commands"
)

func TestNextWorkingMorning(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, berlin)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct{ now, want string }{
		{"2026-12-01 07:30", "2026-12-01 09:00"}, // a Tuesday before nine: this morning
		{"2026-12-01 09:00", "2026-12-02 09:00"},
		{"2026-12-01 23:10", "2026-12-02 09:00"},
		{"2026-12-04 18:00", "2026-12-07 09:00"}, // Friday evening: Monday
		{"2026-12-05 10:00", "2026-12-07 09:00"}, // Saturday
	} {
		if got := commands.NextWorkingMorning(at(tc.now), berlin); !got.Equal(at(tc.want)) {
			t.Errorf("after %s: %s, want %s", tc.now, got.In(berlin).Format("2006-01-02 15:04"), tc.want)
		}
	}
}
