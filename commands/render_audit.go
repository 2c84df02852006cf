package commands

import (
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// auditAction is reading the audit trail of what (a pipeline or an incident; "": all of it),
// as a refusal says it and the audit records it.
func auditAction(what string) string {
	if what == "" {
		return "read the whole audit trail"
	}
	return "read the audit trail of " + what
}

// auditReply lays out the audit entries of what ("": everything), oldest first: when, who,
// the outcome, the action and its target, where it came from and its detail.
func auditReply(what string, entries []state.AuditEntry) Reply {
	if what == "" {
		what = "everything"
	}
	if len(entries) == 0 {
		return Reply{Text: "No audit entries for " + what + "."}
	}
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		where := e.Via
		if e.Channel != "" {
			where += " in " + e.Channel
		}
		line := fmt.Sprintf("%s  %-10s %-8s %s %s", human.Stamp(e.At), e.Actor, e.Outcome, e.Action, e.Target)
		if where != "" {
			line += " (" + strings.TrimSpace(where) + ")"
		}
		if e.Detail != "" {
			line += ": " + clipRunes(e.Detail, 300)
		}
		lines = append(lines, line)
	}
	return Reply{Text: fmt.Sprintf("Audit trail of %s: the newest %d entr%s, oldest first", what, len(entries), map[bool]string{true: "y", false: "ies"}[len(entries) == 1]),
		Sections: []Section{{Lines: lines, Pre: true}}}
}
