package probe

import (
	"testing"
	"time"
)

func TestHuman(t *testing.T) {
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
		if got := human(d); got != want {
			t.Errorf("human(%v) = %q, want %q", d, got, want)
		}
	}
}
