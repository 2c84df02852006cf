package state

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// The people's side of an incident's life besides acknowledging and resolving: its severity
// set by hand, its owner, and escalation when nobody acknowledges it. Each change is one
// atomic script: it writes the incident, its timeline and its thread reply (the outbox) at
// once, so that replicas agree.

// SetSeverity sets an incident's severity (1 most severe … 5) by hand, as actor: alerts no
// longer change it.
func (s *Store) SetSeverity(ctx context.Context, id string, severity int, actor string) error {
	id = NormalizeID(id)
	res, err := s.one(s.run(ctx, setSeverityScript, []string{s.base}, id, severity, actor, ms(s.now())).Result())
	if err != nil {
		return wrap("set the severity of "+id, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return &ChangeError{Incident: id, Reason: r}
	}
	return nil
}

// Assign makes the user ownerID (named ownerName, "" when unknown) the incident's owner, as
// actor; an empty ownerID unassigns it.
func (s *Store) Assign(ctx context.Context, id, ownerID, ownerName, actor string) error {
	id = NormalizeID(id)
	res, err := s.one(s.run(ctx, assignScript, []string{s.base}, id, ownerID, ownerName, actor, ms(s.now())).Result())
	if err != nil {
		return wrap("assign "+id, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return &ChangeError{Incident: id, Reason: r}
	}
	return nil
}

// Escalation is when and whom an unacknowledged incident calls (slack.escalation).
type Escalation struct {
	After      time.Duration
	Mention    []string // user and user-group ids
	Severities []int
}

// Escalate escalates, once each, the incidents e names that nobody acknowledged within
// e.After: a thread reply mentions e.Mention and the root says so. It is safe on every
// replica at once. It returns the incidents it escalated.
func (s *Store) Escalate(ctx context.Context, e Escalation) ([]string, error) {
	if e.After <= 0 || len(e.Mention) == 0 || len(e.Severities) == 0 {
		return nil, nil
	}
	sevs := make([]string, len(e.Severities))
	for i, v := range e.Severities {
		sevs[i] = strconv.Itoa(v)
	}
	res, err := s.one(s.run(ctx, escalateScript, []string{s.base}, ms(s.now()), e.After.Milliseconds(), strings.Join(sevs, ","),
		strings.Join(e.Mention, ",")).Result())
	if err != nil {
		return nil, wrap("escalate", err)
	}
	ids := res.column("id")
	return ids, nil
}
