package probe

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// probeObject matches the names of the write test's objects, unique per probe.
var probeObject = regexp.MustCompile(`probe-[0-9]+-[0-9a-f]{8}`)

// FailureKey is a failure's class and reason without what changes from probe to probe (the
// write test's object name): two failures with the same key are the same failure.
func FailureKey(class Class, reason string) string {
	return string(class) + ": " + probeObject.ReplaceAllString(reason, "probe-<id>")
}

// Lines renders the result as plain text for a chat reply or a terminal: a heading, one line per
// step (✓ passed, ✗ failed, - skipped) with its timing, the ownership of a local directory, and
// the verdict.
func (r Result) Lines() []string {
	heading := "probe of " + r.Location
	if r.Pipeline != "" {
		heading = fmt.Sprintf("probe of %s at %s", r.Pipeline, r.Location)
	}
	lines := []string{heading}
	for _, s := range r.Steps {
		mark, took := "✓", human(s.Took)
		switch {
		case s.Skipped:
			mark, took = "-", ""
		case !s.OK:
			mark = "✗"
		}
		lines = append(lines, strings.TrimRight(fmt.Sprintf("%s %-13s %7s  %s", mark, s.Name, took, s.Detail), " "))
		if !s.OK && !s.Skipped && s.Err != "" && s.Err != s.Detail {
			lines = append(lines, "    error: "+s.Err)
		}
	}
	if o := r.Owner; o != nil {
		lines = append(lines, o.Line())
	}
	lines = append(lines, r.Access.Lines()...)
	verdict := string(r.Status)
	if r.Class != ClassNone {
		verdict += " " + string(r.Class)
	}
	return append(lines, fmt.Sprintf("%s: %s (took %s)", verdict, r.Reason, human(r.Took)))
}

// Line renders the ownership on one line: "dir /var/lib/spark/checkpoints/sms-replies owner
// spark:spark mode drwxr-xr-x; probe runs as uid 1000 groups [1000]".
func (o Ownership) Line() string {
	s := fmt.Sprintf("dir %s owner %s:%s mode %s; probe runs as uid %d groups %v", o.Dir, o.Owner, o.Group, o.Mode, o.ProcUID, o.ProcGroups)
	if !o.CanWrite {
		s += " (the mode bits do not let it write there)"
	}
	return s
}

// ExitCode is the process exit code of the `streamwatch probe` CLI: 0 OK, 1 FAILED, 2 DEGRADED.
func (r Result) ExitCode() int {
	switch r.Status {
	case StatusOK:
		return 0
	case StatusDegraded:
		return 2
	default:
		return 1
	}
}

// human renders a duration for people: "850µs", "12.3ms", "2.5s", "25m", "1h30m", "3d4h".
func human(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < time.Millisecond:
		s = d.Round(time.Microsecond).String()
	case d < time.Second:
		s = d.Round(100 * time.Microsecond).String()
	case d < time.Minute:
		s = d.Round(100 * time.Millisecond).String()
	case d >= 48*time.Hour:
		d = d.Round(time.Hour)
		days, hours := d/(24*time.Hour), d%(24*time.Hour)/time.Hour
		s = fmt.Sprintf("%dd", days)
		if hours > 0 {
			s += fmt.Sprintf("%dh", hours)
		}
	default:
		s = d.Round(time.Second).String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}
