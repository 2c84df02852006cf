package commands

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
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
	h.Register(&Command{Path: "incident severity", Args: "[ID] SEV1..SEV5",
		Min: 1, Max: 2, Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			id, rest, err := h.target(ctx, req, args, "incident severity")
			if err != nil {
				return Reply{}, err
			}
			if len(rest) != 1 {
				return Reply{}, &UsageError{Msg: "incident severity takes one severity, SEV1 (critical) to SEV5 (info)", Usages: []string{h.find("incident severity").Usage(h.Name)}}
			}
			sev, ok := alerts.ParseSeverity(rest[0])
			if !ok {
				return Reply{}, &UsageError{Msg: fmt.Sprintf("%q is not a severity: SEV1 (critical) to SEV5 (info)", rest[0]),
					Usages: []string{h.find("incident severity").Usage(h.Name)}}
			}
			inc, err := h.incident(ctx, req, id)
			if err != nil {
				return Reply{}, err
			}
			detail := fmt.Sprintf("%s (was %s)", sev, alerts.Severity(inc.Severity))
			if err := l.SetSeverity(ctx, id, int(sev), req.Actor()); err != nil {
				err = notFound(err, id)
				h.record(ctx, req, state.AuditEntry{Action: "set severity", Target: id, Outcome: "failed", Detail: err.Error(), Incident: id, Pipeline: inc.Pipeline})
				return Reply{}, err
			}
			h.record(ctx, req, state.AuditEntry{Action: "set severity", Target: id, Outcome: "done", Detail: detail, Incident: id, Pipeline: inc.Pipeline})
			return Reply{Text: fmt.Sprintf("%s is %s now (was %s); alerts no longer change its severity.", id, sev, alerts.Severity(inc.Severity))}, nil
		}})
	h.Register(&Command{Path: "incident assign", Args: "[ID] @USER|me|nobody",
		Min: 1, Max: 2, Run: func(ctx context.Context, req Request, args []string) (Reply, error) {
			id, rest, err := h.target(ctx, req, args, "incident assign")
			if err != nil {
				return Reply{}, err
			}
			if len(rest) != 1 {
				return Reply{}, &UsageError{Msg: "incident assign takes one person: @someone, me or nobody", Usages: []string{h.find("incident assign").Usage(h.Name)}}
			}
			who, name, err := assignee(req, rest[0])
			if err != nil {
				return Reply{}, &UsageError{Msg: err.Error(), Usages: []string{h.find("incident assign").Usage(h.Name)}}
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
			if who == "" {
				return Reply{Text: id + " is assigned to nobody now."}, nil
			}
			return Reply{Text: fmt.Sprintf("%s is assigned to %s now.", id, or(name, who))}, nil
		}})
}

// userRef is a user as Slack writes one in a message or an escaped slash command:
// <@U0123ABCD> or <@U0123ABCD|alice>.
var userRef = regexp.MustCompile(`^<@([UW][A-Z0-9]{2,20})(?:\|([^>]{0,80}))?>$`)

var bareUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)

// assignee reads the person of `incident assign`: a mention, a user id, "me" or "nobody".
// It returns their user id ("" for nobody) and their name when known.
func assignee(req Request, word string) (id, name string, err error) {
	switch strings.ToLower(word) {
	case "me":
		return req.UserID, req.UserName, nil
	case "nobody", "none":
		return "", "", nil
	}
	if m := userRef.FindStringSubmatch(word); m != nil {
		return m[1], m[2], nil
	}
	if bareUserID.MatchString(word) {
		return word, "", nil
	}
	if strings.HasPrefix(word, "@") {
		return "", "", fmt.Errorf("%q reached streamwatch as plain text, not as a person: pick them from Slack's list as you type @, or give their user id (U…), or say me", word)
	}
	return "", "", fmt.Errorf("%q is not a person: mention them (@…), give their user id (U…), or say me or nobody", word)
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

// listStatus is an incident's status in `incident list`, with its silence and escalation.
func listStatus(inc *state.Incident) string {
	s := inc.Status
	if inc.Silence != nil {
		s += ", silenced"
	} else if !inc.EscalatedAt.IsZero() && inc.Status == state.StatusOpen {
		s += ", escalated"
	}
	return s
}

// ownerName names an incident's owner for text replies, which mention nobody.
func ownerName(inc *state.Incident) string {
	if inc.Owner == "" {
		return ""
	}
	return or(inc.OwnerName, inc.Owner)
}

// lifecycleFacts are incident show's lines about owner, severity, silence and escalation.
func lifecycleFacts(inc *state.Incident) []string {
	var out []string
	if inc.Owner != "" {
		line := "Owner: " + ownerName(inc)
		if inc.OwnerName != "" {
			line += " (" + inc.Owner + ")"
		}
		if inc.OwnerBy != "" {
			line += ", assigned by " + inc.OwnerBy
		}
		out = append(out, line)
	}
	if inc.SeverityBy != "" {
		out = append(out, "Severity set by "+inc.SeverityBy+" (alerts no longer change it)")
	}
	if s := inc.Silence; s != nil {
		line := fmt.Sprintf("Silenced until %s by %s (%s)", human.Stamp(s.Until), s.By, s.ID)
		if s.Reason != "" {
			line += ": " + s.Reason
		}
		out = append(out, line)
	}
	if !inc.EscalatedAt.IsZero() {
		out = append(out, "Escalated at "+human.Stamp(inc.EscalatedAt)+" to "+strings.Join(inc.EscalatedTo, ", ")+" (nobody had acknowledged it)")
	}
	return out
}

// alertContextLines are an alert's labels, annotations and http(s) links, indented under it.
func alertContextLines(c state.AlertContext) []string {
	var out []string
	if c.Title != "" {
		out = append(out, "    title: "+c.Title)
	}
	for _, part := range []struct {
		name string
		m    map[string]string
	}{{"labels", c.Labels}, {"annotations", c.Annotations}, {"links", webLinks(c.Links)}} {
		if len(part.m) == 0 {
			continue
		}
		names := make([]string, 0, len(part.m))
		for k := range part.m {
			names = append(names, k)
		}
		slices.Sort(names)
		kv := make([]string, len(names))
		for i, k := range names {
			kv[i] = k + "=" + strings.Join(strings.Fields(part.m[k]), " ")
		}
		out = append(out, "    "+part.name+": "+strings.Join(kv, ", "))
	}
	return out
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
