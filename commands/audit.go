package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// AuditTrail reads the audit stream.
type AuditTrail interface {
	AuditTrail(ctx context.Context, match func(state.AuditEntry) bool, n, scan int) ([]state.AuditEntry, error)
}

// auditShown and auditScanned bound the `audit` command: the newest entries shown, and how far
// back it looks for them.
const (
	auditShown   = 40
	auditScanned = 100000
)

// RegisterAudit adds `audit`.
func (h *Handler) RegisterAudit(trail AuditTrail) {
	h.Register(&Command{Path: "audit", Args: "[PIPELINE|ID]",
		Max: 1, Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			var g Guard
			var match func(state.AuditEntry) bool
			what := "everything"
			switch {
			case len(args) == 0:
				g = Guard{Action: "read the whole audit trail", Access: AccessRemediator}
				match = func(state.AuditEntry) bool { return true }
			case idPattern.MatchString(args[0]):
				id := state.NormalizeID(args[0])
				inc, err := h.incident(ctx, req, id)
				if err != nil {
					return Reply{}, err
				}
				g = Guard{Action: "read the audit trail of " + id, Access: AccessRemediator, Pipelines: pipelinesOf(inc), Target: id, Incident: id}
				match = func(e state.AuditEntry) bool {
					return e.Incident == id || e.Target == id || strings.HasPrefix(e.Target, id+" ") || strings.HasSuffix(e.Target, " "+id)
				}
				what = id
			default:
				p := args[0]
				g = Guard{Action: "read the audit trail of " + p, Access: AccessRemediator, Pipelines: []string{p}, Target: p}
				match = func(e state.AuditEntry) bool { return e.Pipeline == p }
				what = p
			}
			if err := h.guard(ctx, req, g); err != nil {
				return Reply{}, err
			}
			entries, err := trail.AuditTrail(ctx, match, auditShown, auditScanned)
			if err != nil {
				return Reply{}, err
			}
			if len(entries) == 0 {
				return Reply{Text: "No audit entries for " + what + "."}, nil
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
				Sections: []Section{{Lines: lines, Pre: true}}}, nil
		}})
}

// clipRunes cuts s to at most n runes, with an ellipsis.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
