package driverlog

import "testing"

func TestSeverityString(t *testing.T) {
	for s, want := range map[Severity]string{SeverityWarning: "warning", SeverityError: "error", SeverityCritical: "critical", 0: "unknown"} {
		if s.String() != want {
			t.Errorf("%d: %q", s, s.String())
		}
	}
}
