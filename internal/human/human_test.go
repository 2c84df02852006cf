package human_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/internal/human"
)

func TestAgeAndDigits(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45s", 7 * time.Minute: "7m", 7*time.Minute + 30*time.Second: "7m30s", 16*time.Minute + 55*time.Second: "16m",
		65 * time.Minute: "1h5m", 2 * time.Hour: "2h", 51 * time.Hour: "2d3h", 72 * time.Hour: "3d", -time.Second: "0s",
	} {
		if got := human.Age(d); got != want {
			t.Errorf("human.Age(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := human.Digits(n); got != want {
			t.Errorf("human.Digits(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int]string{1: "1 partition", 0: "0 partitions", 1234: "1,234 partitions"} {
		if got := human.Count(n, "partition"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int]string{1: "1 batch", 2: "2 batches", 1500: "1,500 batches"} {
		if got := human.Count(n, "batch"); got != want {
			t.Errorf("Count(%d, batch) = %q, want %q", n, got, want)
		}
	}
	for d, want := range map[time.Duration]string{45 * time.Second: "45s", 12*time.Minute + 5*time.Second: "12m5s", 3*time.Hour + 4*time.Minute: "3h4m",
		51 * time.Hour: "2d3h", -45 * time.Second: "-45s"} {
		if got := human.Elapsed(d); got != want {
			t.Errorf("Elapsed(%v) = %q, want %q", d, got, want)
		}
	}
	if got := human.Time(time.Date(2026, 11, 30, 11, 41, 5, 0, time.FixedZone("CET", 3600))); got != "2026-11-30 10:41:05 UTC" {
		t.Errorf("Time = %q", got)
	}
}

func TestTook(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                     "0s",
		850 * time.Microsecond:                "850µs",
		12345 * time.Microsecond:              "12.3ms",
		2500 * time.Millisecond:               "2.5s",
		25 * time.Minute:                      "25m",
		90 * time.Minute:                      "1h30m",
		2 * time.Hour:                         "2h",
		90*time.Second + 400*time.Millisecond: "1m30s",
		-30 * time.Second:                     "-30s",
		76 * time.Hour:                        "3d4h",
		72 * time.Hour:                        "3d",
	} {
		if got := human.Took(d); got != want {
			t.Errorf("Took(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestZone: times people read follow SetZone (slack.time_zone); UTC keeps its short forms.
func TestZone(t *testing.T) {
	t.Cleanup(func() { human.SetZone(nil) })
	at := time.Date(2026, 11, 30, 10, 41, 5, 123456789, time.UTC)
	check := func(want ...string) {
		t.Helper()
		got := []string{human.Stamp(at), human.Clock(at), human.Minute(at), human.Time(at), human.StampMilli(at)}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("in %s: got %q, want %q", human.Zone(), got, want)
				return
			}
		}
	}
	check("2026-11-30 10:41:05Z", "10:41:05Z", "2026-11-30 10:41Z", "2026-11-30 10:41:05 UTC", "2026-11-30 10:41:05.123Z")
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	human.SetZone(paris)
	check("2026-11-30 11:41:05 CET", "11:41:05 CET", "2026-11-30 11:41 CET", "2026-11-30 11:41:05 CET", "2026-11-30 11:41:05.123 CET")
	human.SetZone(time.FixedZone("UTC", 0)) // a zone named UTC is UTC
	check("2026-11-30 10:41:05Z")
	if human.Stamp(time.Time{}) != "-" || human.Clock(time.Time{}) != "-" || human.StampMilli(time.Time{}) != "-" {
		t.Error("no time is not written as -")
	}
}

// TestPlural: the suffix of a noun written in a format, for int and int64 counts.
func TestPlural(t *testing.T) {
	if got := fmt.Sprintf("%d alert%s, %d alert%s, %d alert%s", 0, human.Plural(0), 1, human.Plural(1), int64(2), human.Plural(int64(2))); got != "0 alerts, 1 alert, 2 alerts" {
		t.Errorf("got %q", got)
	}
}
