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

// Escalation is when and whom an unacknowledged incident calls (slack.escalation): level by
// level, each once its After has passed unacknowledged, the highest one fired again every
// Repeat; an acknowledgement nobody followed up for AckTimeout expires.
type Escalation struct {
	Levels     []EscalationLevel
	Severities []int
	AckTimeout time.Duration
}

// EscalationLevel is one level of an escalation.
type EscalationLevel struct {
	After   time.Duration
	Mention []string // user and user-group ids
	Repeat  time.Duration
}

// Escalated is one mention an escalation made.
type Escalated struct {
	Incident string
	Level    int
	Repeat   bool
}

// Escalate makes the mentions that are due: an incident's next level once it has been open,
// unacknowledged and not silenced for that level's After; the last level fired again every
// Repeat; an acknowledged incident nobody touched for AckTimeout back to open, one level up.
// Each is a thread reply, and the root says so. It is safe on every replica at once.
func (s *Store) Escalate(ctx context.Context, e Escalation) ([]Escalated, error) {
	if len(e.Levels) == 0 || e.Levels[0].After <= 0 || len(e.Severities) == 0 {
		return nil, nil
	}
	sevs := make([]string, len(e.Severities))
	for i, v := range e.Severities {
		sevs[i] = strconv.Itoa(v)
	}
	args := []any{ms(s.now()), strings.Join(sevs, ","), max(e.AckTimeout, 0).Milliseconds()}
	for _, l := range e.Levels {
		args = append(args, l.After.Milliseconds(), max(l.Repeat, 0).Milliseconds(), strings.Join(l.Mention, ","))
	}
	res, err := s.one(s.run(ctx, escalateScript, []string{s.base}, args...).Result())
	if err != nil {
		return nil, wrap("escalate", err)
	}
	var out []Escalated
	for i := range res.len() {
		out = append(out, Escalated{Incident: res.str(i, "id"), Level: int(res.int(i, "level")), Repeat: res.str(i, "repeat") == "1"})
	}
	return out, nil
}
