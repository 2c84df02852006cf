package probe

import "regexp"

// probeObject matches the names of the write test's objects, unique per probe.
var probeObject = regexp.MustCompile(`probe-[0-9]+-[0-9a-f]{8}`)

// FailureKey is a failure's class and reason without what changes from probe to probe (the
// write test's object name): two failures with the same key are the same failure.
func FailureKey(class Class, reason string) string {
	return string(class) + ": " + probeObject.ReplaceAllString(reason, "probe-<id>")
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
