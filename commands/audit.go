package commands

import (
	"context"
	"strings"

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
	h.Register(&Command{Path: "audit", Args: "[PIPELINE|ID]", Summary: "who did what: the audit trail of a pipeline or an incident, or all (remediators only)",
		Max: 1, Example: "audit sms-replies", Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			var g Guard
			var match func(state.AuditEntry) bool
			var what string // "": everything
			switch {
			case len(args) == 0:
				g = Guard{Action: auditAction(""), Access: AccessRemediator}
				match = func(state.AuditEntry) bool { return true }
			case idPattern.MatchString(args[0]):
				id := state.NormalizeID(args[0])
				inc, err := h.incident(ctx, req, id)
				if err != nil {
					return Reply{}, err
				}
				g = Guard{Action: auditAction(id), Access: AccessRemediator, Pipelines: pipelinesOf(inc), Target: id, Incident: id}
				match = func(e state.AuditEntry) bool {
					return e.Incident == id || e.Target == id || strings.HasPrefix(e.Target, id+" ") || strings.HasSuffix(e.Target, " "+id)
				}
				what = id
			default:
				p := args[0]
				g = Guard{Action: auditAction(p), Access: AccessRemediator, Pipelines: []string{p}, Target: p}
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
			return auditReply(what, entries), nil
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
