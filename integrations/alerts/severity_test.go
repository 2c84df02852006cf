package alerts

import "testing"

func TestParseSeverity(t *testing.T) {
	tests := []struct {
		in   string
		want Severity
		ok   bool
	}{
		{"critical", 1, true}, {"CRIT", 1, true}, {"fatal", 1, true}, {"Emergency", 1, true}, {"page", 1, true},
		{"high", 2, true}, {"error", 2, true}, {"ERR", 2, true}, {"major", 2, true},
		{"warning", 3, true}, {" Warn\t", 3, true}, {"medium", 3, true}, {"minor", 3, true},
		{"low", 4, true}, {"notice", 4, true},
		{"info", 5, true}, {"informational", 5, true}, {"debug", 5, true}, {"none", 5, true}, {"OK", 5, true},
		{"sev1", 1, true}, {"SEV2", 2, true}, {"SEV-2", 2, true}, {"sev_4", 4, true}, {"sev 5", 5, true},
		{"Severity 3", 3, true}, {"severity: 3", 3, true}, {"severity=1", 1, true}, {"SEVERITY-4", 4, true},
		{"P1", 1, true}, {"p5", 5, true}, {"P-3", 3, true}, {"priority 2", 2, true}, {"Priority: 4", 4, true},
		{"1", 1, true}, {"2", 2, true}, {"3", 3, true}, {"4", 4, true}, {" 5 ", 5, true},
		{"SEV0", 1, true}, {"P0", 1, true},
		{"SEV1 critical", 1, true}, {"SEV3 warning", 3, true}, {"SEV5 info", 5, true}, {"P2 - high", 2, true}, {"sev0 critical", 1, true},
		{"sev1 (critical)", 1, true},

		{"", 0, false}, {"   ", 0, false}, {"unknown", 0, false}, {"0", 0, false}, {"6", 0, false},
		{"sev6", 0, false}, {"P9", 0, false}, {"sev", 0, false}, {"p", 0, false}, {"severity", 0, false},
		{"12", 0, false}, {"3 warning", 0, false}, {"sev1 info", 0, false}, {"sev3warning", 0, false},
		{"sev3 bogus", 0, false}, {"1.5", 0, false}, {"-1", 0, false}, {"critical!", 0, false},
		{"pp1", 0, false}, {"sev 1 2", 0, false}, {"critically", 0, false}, {"Ｐ1", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseSeverity(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseSeverity(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSeverityStringRoundTrips(t *testing.T) {
	want := map[Severity]string{
		SeverityUnknown: "unknown", SeverityCritical: "SEV1 critical", SeverityHigh: "SEV2 high",
		SeverityWarning: "SEV3 warning", SeverityLow: "SEV4 low", SeverityInfo: "SEV5 info",
		Severity(6): "unknown", Severity(-1): "unknown",
	}
	for sev, s := range want {
		if got := sev.String(); got != s {
			t.Errorf("Severity(%d).String() = %q, want %q", int(sev), got, s)
		}
		if sev.Known() {
			if back, ok := ParseSeverity(s); !ok || back != sev {
				t.Errorf("ParseSeverity(%q) = %v, %v", s, back, ok)
			}
		}
	}
}

func TestHigher(t *testing.T) {
	tests := []struct{ a, b, want Severity }{
		{1, 3, 1}, {3, 1, 1}, {2, 2, 2}, {5, 4, 4},
		{0, 5, 5}, {5, 0, 5}, {0, 0, 0},
		{9, 4, 4}, {9, 0, 0}, {-1, 0, 0},
	}
	for _, tt := range tests {
		if got := Higher(tt.a, tt.b); got != tt.want {
			t.Errorf("Higher(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if !SeverityCritical.MoreSevereThan(SeverityWarning) || SeverityWarning.MoreSevereThan(SeverityCritical) {
		t.Error("SEV1 must rank above SEV3")
	}
	if !SeverityInfo.MoreSevereThan(SeverityUnknown) || SeverityUnknown.MoreSevereThan(SeverityInfo) {
		t.Error("SEV5 must rank above unknown")
	}
	if SeverityHigh.MoreSevereThan(SeverityHigh) {
		t.Error("a severity must not rank above itself")
	}
}

func TestSeverityFromLabelsAndAnnotations(t *testing.T) {
	tests := []struct {
		name                string
		labels, annotations map[string]string
		want                Severity
	}{
		{"label severity", map[string]string{"severity": "critical", "priority": "P4"}, nil, 1},
		{"label priority", map[string]string{"priority": "P4"}, map[string]string{"severity": "critical"}, 4},
		{"unparsable label falls through", map[string]string{"severity": "bogus", "priority": "P2"}, nil, 2},
		{"annotation severity", map[string]string{"alertname": "A"}, map[string]string{"severity": "low"}, 4},
		{"annotation priority", nil, map[string]string{"priority": "sev-1"}, 1},
		{"none", map[string]string{"alertname": "A"}, map[string]string{"summary": "s"}, 0},
	}
	for _, tt := range tests {
		if got := severityFrom(tt.labels, tt.annotations); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
