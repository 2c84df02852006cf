package state

import "github.com/redis/go-redis/v9"

// luaCommon is prepended to every script. KEYS[1] is the hash-tagged base "{prefix}"; every key
// a script builds starts with it, so all of them share one cluster slot.
const luaCommon = `
local P = KEYS[1]
local function ik(id, suffix)
  if suffix then return P .. ":inc:" .. id .. ":" .. suffix end
  return P .. ":inc:" .. id
end
local function enqueue(id, kind, ev, actor, detail, count, since)
  local seq = redis.call("HINCRBY", ik(id), "seq", 1)
  redis.call("XADD", P .. ":outbox", "*", "inc", id, "seq", seq, "kind", kind,
    "event", ev or "", "actor", actor or "", "detail", detail or "",
    "count", count or 0, "since", since or 0)
end
local function event(id, now, ev, actor, detail)
  redis.call("XADD", ik(id, "timeline"), "MAXLEN", "~", 1000, "*",
    "at", now, "event", ev, "actor", actor or "", "detail", detail or "")
end
local function schedule_flush(id, now, window)
  if redis.call("ZSCORE", P .. ":due", id) then return end
  local last = tonumber(redis.call("HGET", ik(id), "last_flush") or "0")
  local due = now
  if last + window > due then due = last + window end
  redis.call("ZADD", P .. ":due", due, id)
end
-- Dedup keys can be long (label values): key names hold their SHA-1.
local function dedup(k) return P .. ":dedup:" .. redis.sha1hex(k) end
local function last(k) return P .. ":last:" .. redis.sha1hex(k) end
local function more_severe(a, b)
  if a == 0 then return b end
  if b == 0 then return a end
  if a < b then return a end
  return b
end
`

// recordScript records one alert atomically: it joins the open incident of its dedup key or
// opens a new one (with a link to the previous incident of that key).
// ARGV: key, fingerprint, status, title, severity, pipeline, channel, now, window, source,
// auto_resolve_ms, detail. Returns {id, outcome, previous}.
var recordScript = redis.NewScript(luaCommon + `
local key, fp, status, title = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local sev, now, window, ar = tonumber(ARGV[5]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[11])
local source, detail = ARGV[10], ARGV[12]
local dk = dedup(key)
local id = redis.call("GET", dk)
if status == "resolved" then
  if not id then return {"", "ignored", ""} end
  redis.call("HSET", ik(id, "alerts"), fp, cjson.encode({status = "resolved", last_seen = now}))
  event(id, now, "alert_resolved", source, fp)
  local all = true
  for _, v in ipairs(redis.call("HVALS", ik(id, "alerts"))) do
    if cjson.decode(v).status ~= "resolved" then all = false break end
  end
  if all and redis.call("HGET", ik(id), "all_resolved") ~= "1" then
    redis.call("HSET", ik(id), "all_resolved", "1")
    local at = 0
    if ar > 0 then
      at = now + ar
      redis.call("ZADD", P .. ":autoresolve", at, id)
    end
    event(id, now, "all_resolved", source, detail)
    enqueue(id, "event", "all_resolved", source, detail, 0, at)
  end
  return {id, "resolved", ""}
end
local outcome = "duplicate"
local previous = ""
if not id then
  id = "INC-" .. redis.call("INCR", P .. ":seq:incident")
  previous = redis.call("GET", last(key)) or ""
  redis.call("HSET", ik(id), "id", id, "key", key, "title", title, "severity", sev,
    "pipeline", ARGV[6], "channel", ARGV[7], "status", "open", "first_seen", now,
    "last_seen", now, "count", 1, "previous", previous, "source", source,
    "seq", 0, "delivered", 0, "pending", 0, "last_flush", 0)
  redis.call("SET", dk, id)
  redis.call("SET", last(key), id)
  redis.call("SADD", ik(id, "keys"), key)
  redis.call("ZADD", P .. ":open", now, id)
  event(id, now, "opened", source, title)
  enqueue(id, "root", "", "", "", 0, 0)
  outcome = "opened"
else
  local cur = tonumber(redis.call("HGET", ik(id), "severity") or "0")
  redis.call("HSET", ik(id), "last_seen", now, "severity", more_severe(cur, sev), "last_detail", detail)
  redis.call("HINCRBY", ik(id), "count", 1)
  if redis.call("HINCRBY", ik(id), "pending", 1) == 1 then
    redis.call("HSET", ik(id), "pending_since", now)
  end
  if redis.call("HGET", ik(id), "all_resolved") == "1" then
    redis.call("HSET", ik(id), "all_resolved", "0")
    redis.call("ZREM", P .. ":autoresolve", id)
  end
  schedule_flush(id, now, window)
end
redis.call("HSET", ik(id, "alerts"), fp, cjson.encode({status = "firing", last_seen = now}))
return {id, outcome, previous}
`)

// pumpScript moves due coalesced updates into the outbox, each with a snapshot of the
// occurrences it reports, so a retried delivery posts the same text. ARGV: now, limit.
var pumpScript = redis.NewScript(luaCommon + `
local now = tonumber(ARGV[1])
local ids = redis.call("ZRANGEBYSCORE", P .. ":due", "-inf", now, "LIMIT", 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  redis.call("ZREM", P .. ":due", id)
  local n = tonumber(redis.call("HGET", ik(id), "pending") or "0")
  local since = redis.call("HGET", ik(id), "pending_since") or "0"
  local detail = redis.call("HGET", ik(id), "last_detail") or ""
  redis.call("HSET", ik(id), "pending", 0, "last_flush", now)
  enqueue(id, "flush", "", "", detail, n, since)
end
return #ids
`)

// ackScript: ARGV id, actor, now. Returns {result}.
var ackScript = redis.NewScript(luaCommon + `
local id, actor, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local st = redis.call("HGET", ik(id), "status")
if not st then return {"notfound"} end
if st ~= "open" then return {st} end
redis.call("HSET", ik(id), "status", "acknowledged", "ack_by", actor, "ack_at", now)
event(id, now, "acknowledged", actor, "")
enqueue(id, "event", "acknowledged", actor, "", 0, 0)
return {"ok"}
`)

// resolveScript: ARGV id, actor, note, now, gate ("auto" for auto-resolve). Returns {result}.
var resolveScript = redis.NewScript(luaCommon + `
local id, actor, note, now, gate = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local st = redis.call("HGET", ik(id), "status")
if not st then return {"notfound"} end
if gate == "auto" then
  if redis.call("ZREM", P .. ":autoresolve", id) == 0 then return {"skipped"} end
  if redis.call("HGET", ik(id), "all_resolved") ~= "1" then return {"skipped"} end
end
if st == "resolved" then return {"resolved"} end
redis.call("HSET", ik(id), "status", "resolved", "resolved_by", actor, "resolved_at", now, "note", note)
for _, k in ipairs(redis.call("SMEMBERS", ik(id, "keys"))) do
  if redis.call("GET", dedup(k)) == id then redis.call("DEL", dedup(k)) end
end
redis.call("ZREM", P .. ":open", id)
redis.call("ZREM", P .. ":autoresolve", id)
event(id, now, "resolved", actor, note)
enqueue(id, "event", "resolved", actor, note, 0, 0)
return {"ok"}
`)

// mergeScript: ARGV from, into, actor, now. Returns {result}.
var mergeScript = redis.NewScript(luaCommon + `
local from, into, actor, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
if from == into then return {"same"} end
local sf = redis.call("HGET", ik(from), "status")
local si = redis.call("HGET", ik(into), "status")
if not sf then return {"notfound", from} end
if not si then return {"notfound", into} end
if sf == "resolved" then return {"resolved", from} end
if si == "resolved" then return {"resolved", into} end
local alerts = redis.call("HGETALL", ik(from, "alerts"))
if #alerts > 0 then redis.call("HSET", ik(into, "alerts"), unpack(alerts)) end
for _, k in ipairs(redis.call("SMEMBERS", ik(from, "keys"))) do
  redis.call("SET", dedup(k), into)
  redis.call("SADD", ik(into, "keys"), k)
end
local n = tonumber(redis.call("HGET", ik(from), "count") or "0")
redis.call("HINCRBY", ik(into), "count", n)
local sevf = tonumber(redis.call("HGET", ik(from), "severity") or "0")
local sevi = tonumber(redis.call("HGET", ik(into), "severity") or "0")
local mf = redis.call("HGET", ik(into), "merged_from") or ""
if mf ~= "" then mf = mf .. "," end
redis.call("HSET", ik(into), "severity", more_severe(sevi, sevf), "merged_from", mf .. from, "last_seen", now)
redis.call("HSET", ik(from), "status", "resolved", "merged_into", into, "resolved_by", actor, "resolved_at", now)
redis.call("ZREM", P .. ":open", from)
redis.call("ZREM", P .. ":autoresolve", from)
event(from, now, "merged_into", actor, into)
event(into, now, "merged_from", actor, from)
enqueue(from, "event", "merged_into", actor, into, 0, 0)
enqueue(into, "event", "merged_from", actor, from, n, 0)
return {"ok"}
`)

// noteScript posts a note into an incident's thread (in sequence with its other messages).
// With a non-empty once flag, only the first note carrying that flag is posted.
// ARGV: id, event, actor, detail, now, once. Returns {result}.
var noteScript = redis.NewScript(luaCommon + `
local id, ev, actor, detail, now, once = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
if redis.call("EXISTS", ik(id)) == 0 then return {"notfound"} end
if once ~= "" then
  if redis.call("HSETNX", ik(id), "once:" .. once, now) == 0 then return {"skipped"} end
end
event(id, now, ev, actor, string.sub(detail, 1, 200))
enqueue(id, "event", ev, actor, detail, 0, 0)
return {"ok"}
`)

// completeScript records a delivered outbox entry: the incident's delivered sequence, the root
// message's ts and its lookup key, then acks and deletes the entry.
// ARGV: stream id, incident id, seq, root ts ("" unless a root was posted), channel.
var completeScript = redis.NewScript(luaCommon + `
local sid, id, seq, ts, ch = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local done = tonumber(redis.call("HGET", ik(id), "delivered") or "0")
if seq > done then redis.call("HSET", ik(id), "delivered", seq) end
if ts ~= "" then
  redis.call("HSET", ik(id), "root_ts", ts, "root_channel", ch)
  redis.call("SET", P .. ":ts:" .. ch .. ":" .. ts, id)
end
redis.call("XACK", P .. ":outbox", "deliver", sid)
redis.call("XDEL", P .. ":outbox", sid)
return 1
`)
