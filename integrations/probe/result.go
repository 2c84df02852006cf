package probe

import (
	"fmt"
	"regexp"
)

// probeObject matches the names of the write test's objects, unique per probe.
var probeObject = regexp.MustCompile(`probe-[0-9]+-[0-9a-f]{8}`)

// FailureKey is a failure's class and reason without what changes from probe to probe (the
// write test's object name): two failures with the same key are the same failure.
func FailureKey(class Class, reason string) string {
	return string(class) + ": " + probeObject.ReplaceAllString(reason, "probe-<id>")
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
