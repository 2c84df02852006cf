package commands

import (
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/state"
)

// The words of `incident severity` and `incident assign` (lifecycle.go), and incident show's
// lines about an incident's owner, severity, silence and escalation.

// The lifecycle commands' paths, as their usages spell them.
const (
	incidentSeverityPath = "incident severity"
	incidentAssignPath   = "incident assign"
)

// setSeverityAction is the audit action of incident severity.
const setSeverityAction = "set severity"

// severityCount and notASeverity are incident severity's usage errors: no or too many
// severities, a word that is none.
func severityCount() string {
	return "incident severity takes one severity, SEV1 (critical) to SEV5 (info)"
}

func notASeverity(word string) string {
	return fmt.Sprintf("%q is not a severity: SEV1 (critical) to SEV5 (info)", word)
}

// severitySet says incident id is sev now, and was before.
func severitySet(id string, sev, was alerts.Severity) Reply {
	return Reply{Text: fmt.Sprintf("%s is %s now (was %s); alerts no longer change its severity.", id, sev, was)}
}

// assignCount and notAPerson are incident assign's usage errors: no or too many people, a
// word that is no person (one typed with @ reached the bot as plain text, not as a mention).
func assignCount() string { return "incident assign takes one person: @someone, me or nobody" }

func notAPerson(word string) string {
	if strings.HasPrefix(word, "@") {
		return fmt.Sprintf("%q reached streamwatch as plain text, not as a person: pick them from Slack's list as you type @, or give their user id (U…), or say me", word)
	}
	return fmt.Sprintf("%q is not a person: mention them (@…), give their user id (U…), or say me or nobody", word)
}

// assigned says who owns incident id now: who ("" for nobody), by name when known.
func assigned(id, who, name string) Reply {
	if who == "" {
		return Reply{Text: id + " is assigned to nobody now."}
	}
	return Reply{Text: fmt.Sprintf("%s is assigned to %s now.", id, or(name, who))}
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
