package state

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The people's side of an incident's life besides acknowledging and resolving: its severity
// set by hand, its owner, and escalation when nobody acknowledges it. Each change is one
// atomic script: it writes the incident, its timeline and its thread reply (the outbox) at
// once, so that replicas agree.

// setSeverityScript: ARGV id, severity, actor, now. Returns {result}.
var setSeverityScript = redis.NewScript(luaCommon + `
local id, sev, actor, now = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local v = redis.call("HMGET", ik(id), "status", "severity")
if not v[1] then return {"notfound"} end
if v[1] == "resolved" then return {"resolved"} end
local old = tonumber(v[2]) or 0
redis.call("HSET", ik(id), "severity", sev, "severity_by", actor)
event(id, now, "severity", actor, "SEV" .. sev .. " (was SEV" .. old .. ")")
enqueue(id, "event", "severity", actor, tostring(sev), old, 0)
return {"ok"}
`)

// SetSeverity sets an incident's severity (1 most severe … 5) by hand, as actor: alerts no
// longer change it.
func (s *Store) SetSeverity(ctx context.Context, id string, severity int, actor string) error {
	id = NormalizeID(id)
	res, err := setSeverityScript.Run(ctx, s.rdb, []string{s.base}, id, severity, actor, ms(s.now())).StringSlice()
	if err != nil {
		return wrap("set the severity of "+id, err)
	}
	if res[0] != "ok" {
		return &ChangeError{Incident: id, Reason: res[0]}
	}
	return nil
}

// assignScript: ARGV id, owner id ("" to unassign), owner name, actor, now. Returns {result}.
var assignScript = redis.NewScript(luaCommon + `
local id, owner, name, actor, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local st = redis.call("HGET", ik(id), "status")
if not st then return {"notfound"} end
if st == "resolved" then return {"resolved"} end
if owner == "" then
  redis.call("HDEL", ik(id), "owner", "owner_name")
  redis.call("HSET", ik(id), "owner_by", actor)
  event(id, now, "unassigned", actor, "")
else
  redis.call("HSET", ik(id), "owner", owner, "owner_name", name, "owner_by", actor)
  local d = owner
  if name ~= "" then d = name .. " (" .. owner .. ")" end
  event(id, now, "assigned", actor, d)
end
enqueue(id, "event", "assigned", actor, owner .. "\31" .. name, 0, 0)
return {"ok"}
`)

// Assign makes the user ownerID (named ownerName, "" when unknown) the incident's owner, as
// actor; an empty ownerID unassigns it.
func (s *Store) Assign(ctx context.Context, id, ownerID, ownerName, actor string) error {
	id = NormalizeID(id)
	res, err := assignScript.Run(ctx, s.rdb, []string{s.base}, id, ownerID, ownerName, actor, ms(s.now())).StringSlice()
	if err != nil {
		return wrap("assign "+id, err)
	}
	if res[0] != "ok" {
		return &ChangeError{Incident: id, Reason: res[0]}
	}
	return nil
}

// Escalation is when and whom an unacknowledged incident calls (slack.escalation).
type Escalation struct {
	After      time.Duration
	Mention    []string // user and user-group ids
	Severities []int
}

// escalateScript escalates the open (unacknowledged), unsilenced incidents of the severities
// that have been open and unsilenced for at least after (the time a silence held does not
// count), each once. ARGV: now, after ms, severities ("1,2"), mention
// ("S0ONCALL,U0X"), after as text. Returns the ids it escalated.
var escalateScript = redis.NewScript(luaCommon + `
local now, after, mention, after_text = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[4], ARGV[5]
local sevs = {}
for v in string.gmatch(ARGV[3], "%d+") do sevs[tonumber(v)] = true end
local out = {}
local open = redis.call("ZRANGEBYSCORE", P .. ":open", "-inf", now - after, "WITHSCORES")
for i = 1, #open, 2 do
  local id, opened = open[i], tonumber(open[i + 1])
  local f = redis.call("HMGET", ik(id), "status", "severity", "escalated_at", "silenced_until", "silenced_ms", "silenced_since")
  -- The clock counts the time the incident could have escalated: open, not silenced.
  local silenced = (tonumber(f[5]) or 0)
  if f[6] then silenced = silenced + math.max(now - tonumber(f[6]), 0) end
  if f[1] == "open" and not f[3] and sevs[tonumber(f[2]) or 0] and (tonumber(f[4]) or 0) <= now and now - opened - silenced >= after then
    redis.call("HSET", ik(id), "escalated_at", now, "escalated_to", mention)
    event(id, now, "escalated", "streamwatch", "unacknowledged SEV" .. f[2] .. " after " .. after_text .. "; called " .. mention)
    enqueue(id, "event", "escalated", "streamwatch", mention .. "\31" .. after_text, 0, 0)
    out[#out + 1] = id
  end
end
return out
`)

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
	ids, err := escalateScript.Run(ctx, s.rdb, []string{s.base}, ms(s.now()), e.After.Milliseconds(), strings.Join(sevs, ","),
		strings.Join(e.Mention, ","), e.After.String()).StringSlice()
	if err != nil {
		return nil, wrap("escalate", err)
	}
	return ids, nil
}
