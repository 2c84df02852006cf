package alerts

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Severity ranks an alert from SEV1 (critical) to SEV5 (info). The zero value
// is unknown, and ranks below every known severity.
type Severity int

// Severities.
const (
	SeverityUnknown  Severity = 0
	SeverityCritical Severity = 1
	SeverityHigh     Severity = 2
	SeverityWarning  Severity = 3
	SeverityLow      Severity = 4
	SeverityInfo     Severity = 5
)

var severityNames = [...]string{"unknown", "critical", "high", "warning", "low", "info"}

// Known reports whether s is one of SEV1 to SEV5.
func (s Severity) Known() bool { return s >= SeverityCritical && s <= SeverityInfo }

// String returns "SEV1 critical" … "SEV5 info", or "unknown".
func (s Severity) String() string {
	if !s.Known() {
		return "unknown"
	}
	return "SEV" + strconv.Itoa(int(s)) + " " + severityNames[s]
}

// MoreSevereThan reports whether s ranks above t: SEV1 above SEV3, and any
// known severity above an unknown one.
func (s Severity) MoreSevereThan(t Severity) bool { return s.rank() > t.rank() }

// Higher returns the more severe of a and b.
func Higher(a, b Severity) Severity {
	if b.MoreSevereThan(a) {
		return b
	}
	if !a.Known() {
		return SeverityUnknown
	}
	return a
}

func (s Severity) rank() int {
	if !s.Known() {
		return 0
	}
	return 6 - int(s)
}

var severityWords = map[string]Severity{
	"critical": SeverityCritical, "crit": SeverityCritical, "fatal": SeverityCritical,
	"emergency": SeverityCritical, "emerg": SeverityCritical, "page": SeverityCritical,
	"high": SeverityHigh, "error": SeverityHigh, "err": SeverityHigh, "major": SeverityHigh,
	"warning": SeverityWarning, "warn": SeverityWarning, "medium": SeverityWarning, "minor": SeverityWarning,
	"low": SeverityLow, "notice": SeverityLow,
	"info": SeverityInfo, "informational": SeverityInfo, "information": SeverityInfo,
	"debug": SeverityInfo, "none": SeverityInfo, "ok": SeverityInfo,
}

// ParseSeverity normalizes the severities senders use, trimmed and in any
// case: words (critical, crit, fatal, emergency, page; high, error, major;
// warning, warn, medium, minor; low, notice; info, debug, none, ok), levels
// with a prefix (sev2, SEV-2, "Severity 3", "severity: 3", "priority 2", P1) and bare
// numbers 1 to 5. A prefixed level may be followed by a word of the same
// level, so String's output parses back ("SEV3 warning"). SEV0 and P0, which
// some teams rank above SEV1, read as SEV1; a bare 0 is not understood.
// It returns SeverityUnknown and false for anything else.
func ParseSeverity(s string) (Severity, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if sev, ok := severityWords[s]; ok {
		return sev, true
	}
	rest, prefixed := s, false
	for _, p := range []string{"severity", "sev", "priority", "p"} {
		if r, ok := strings.CutPrefix(s, p); ok {
			rest, prefixed = strings.TrimLeft(r, " \t-_:=#"), true
			break
		}
	}
	if rest == "" || rest[0] < '0' || rest[0] > '5' {
		return SeverityUnknown, false
	}
	sev := Severity(rest[0] - '0')
	if tail := rest[1:]; tail != "" {
		word := strings.TrimRight(strings.TrimLeft(tail, " \t-_:=(/"), " \t)")
		if !prefixed || tail == word || severityWords[word] != max(sev, SeverityCritical) {
			return SeverityUnknown, false
		}
	}
	if sev == SeverityUnknown {
		if !prefixed {
			return SeverityUnknown, false
		}
		sev = SeverityCritical
	}
	return sev, true
}

// severityFromNumber accepts the whole numbers 1 to 5.
func severityFromNumber(n json.Number) (Severity, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f > 5 {
		return SeverityUnknown, false
	}
	return Severity(f), true
}

// severityFrom finds an alert's severity: the first of the labels severity
// and priority, then the annotations of the same names, that ParseSeverity
// understands.
func severityFrom(labels, annotations map[string]string) Severity {
	for _, m := range []map[string]string{labels, annotations} {
		for _, key := range []string{"severity", "priority"} {
			if v, ok := m[key]; ok {
				if sev, ok := ParseSeverity(v); ok {
					return sev
				}
			}
		}
	}
	return SeverityUnknown
}
