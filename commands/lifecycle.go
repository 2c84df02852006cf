package commands

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/state"
)

// Lifecycle is what `incident severity` and `incident assign` change.
type Lifecycle interface {
	SetSeverity(ctx context.Context, id string, severity int, actor string) error
	Assign(ctx context.Context, id, ownerID, ownerName, actor string) error
}

// RegisterLifecycle adds `incident severity` and `incident assign`. Both are for anyone who
// may use commands in the incident's channel (as `incident ack` is), and audited.
func (h *Handler) RegisterLifecycle(l Lifecycle) {
	h.Register(&Command{Path: incidentSeverityPath, Args: "[ID] SEV1..SEV5",
		Min: 1, Max: 2, Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			id, rest, err := h.target(ctx, req, args, incidentSeverityPath)
			if err != nil {
				return Reply{}, err
			}
			if len(rest) != 1 {
				return Reply{}, &UsageError{Msg: severityCount(), Usages: []string{h.find(incidentSeverityPath).Usage(h.Name)}}
			}
			sev, ok := alerts.ParseSeverity(rest[0])
			if !ok {
				return Reply{}, &UsageError{Msg: notASeverity(rest[0]),
					Usages: []string{h.find(incidentSeverityPath).Usage(h.Name)}}
			}
			inc, err := h.incident(ctx, req, id)
			if err != nil {
				return Reply{}, err
			}
			detail := fmt.Sprintf("%s (was %s)", sev, alerts.Severity(inc.Severity))
			if err := l.SetSeverity(ctx, id, int(sev), req.Actor()); err != nil {
				err = notFound(err, id)
				h.record(ctx, req, state.AuditEntry{Action: setSeverityAction, Target: id, Outcome: "failed", Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
				return Reply{}, err
			}
			h.record(ctx, req, state.AuditEntry{Action: setSeverityAction, Target: id, Outcome: "done", Detail: detail, Incident: id, Pipeline: inc.Pipeline})
			return severitySet(id, sev, alerts.Severity(inc.Severity)), nil
		}})
	h.Register(&Command{Path: incidentAssignPath, Args: "[ID] @USER|me|nobody",
		Min: 1, Max: 2, Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			id, rest, err := h.target(ctx, req, args, incidentAssignPath)
			if err != nil {
				return Reply{}, err
			}
			if len(rest) != 1 {
				return Reply{}, &UsageError{Msg: assignCount(), Usages: []string{h.find(incidentAssignPath).Usage(h.Name)}}
			}
			who, name, ok := assignee(req, rest[0])
			if !ok {
				return Reply{}, &UsageError{Msg: notAPerson(rest[0]), Usages: []string{h.find(incidentAssignPath).Usage(h.Name)}}
			}
			inc, err := h.incident(ctx, req, id)
			if err != nil {
				return Reply{}, err
			}
			target := "nobody"
			if who != "" {
				target = or(name, who) + " (" + who + ")"
			}
			if err := l.Assign(ctx, id, who, name, req.Actor()); err != nil {
				err = notFound(err, id)
				h.record(ctx, req, state.AuditEntry{Action: "assign", Target: id, Outcome: "failed", Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
				return Reply{}, err
			}
			h.record(ctx, req, state.AuditEntry{Action: "assign", Target: id, Outcome: "done", Detail: "to " + target, Incident: id, Pipeline: inc.Pipeline})
			return assigned(id, who, name), nil
		}})
}

// userRef is a user as Slack writes one in a message or an escaped slash command:
// <@U0123ABCD> or <@U0123ABCD|alice>.
var userRef = regexp.MustCompile(`^<@([UW][A-Z0-9]{2,20})(?:\|([^>]{0,80}))?>$`)

var bareUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)

// assignee reads the person of `incident assign`: a mention, a user id, "me" or "nobody".
// It returns their user id ("" for nobody) and their name when known; ok is false for a word
// that is none of these.
func assignee(req Request, word string) (id, name string, ok bool) {
	switch strings.ToLower(word) {
	case "me":
		return req.UserID, req.UserName, true
	case "nobody", "none":
		return "", "", true
	}
	if m := userRef.FindStringSubmatch(word); m != nil {
		return m[1], m[2], true
	}
	if bareUserID.MatchString(word) {
		return word, "", true
	}
	return "", "", false
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// AlertContexts gives incident show each alert's labels, annotations and links, when the
// incident store keeps them.
type AlertContexts interface {
	AlertContexts(ctx context.Context, id string) (map[string]state.AlertContext, error)
}

// ownerName names an incident's owner for text replies, which mention nobody.
func ownerName(inc *state.Incident) string {
	if inc.Owner == "" {
		return ""
	}
	return or(inc.OwnerName, inc.Owner)
}

// webLinks keeps the links alerts.SafeURL keeps.
func webLinks(links map[string]string) map[string]string {
	out := map[string]string{}
	for k, u := range links {
		if safe := alerts.SafeURL(u); safe != "" {
			out[k] = safe
		}
	}
	return out
}
