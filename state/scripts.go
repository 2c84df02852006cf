package state

import (
	"strconv"

	"github.com/redis/go-redis/v9"
)

// luaCommon is prepended to every script. KEYS[1] is the hash-tagged base "{prefix}"; every key
// a script builds starts with it, so all of them share one cluster slot.
var luaCommon = `
local P = KEYS[1]
local max_alerts = ` + strconv.Itoa(MaxListedAlerts) + `
local max_flood_keys = ` + strconv.Itoa(MaxListedFloodKeys) + `
local max_events = ` + strconv.Itoa(MaxTimelineEvents) + `
local function ik(id, suffix)
  if suffix then return P .. ":inc:" .. id .. ":" .. suffix end
  return P .. ":inc:" .. id
end
-- enqueue adds a delivery; empty fields are left out (they read as empty).
local function enqueue(id, kind, ev, actor, detail, count, since, distinct)
  local seq = redis.call("HINCRBY", ik(id), "seq", 1)
  local ch = redis.call("HMGET", ik(id), "root_channel", "channel")
  local e = {"inc", id, "seq", seq, "kind", kind, "channel", ch[1] or ch[2] or ""}
  local function add(k, v)
    if v and v ~= "" and v ~= 0 and v ~= "0" then
      e[#e + 1] = k
      e[#e + 1] = v
    end
  end
  add("event", ev)
  add("actor", actor)
  add("detail", detail)
  add("count", count)
  add("since", since)
  add("distinct", distinct)
  redis.call("XADD", P .. ":outbox", "*", unpack(e))
end
-- event appends to an incident's timeline, which keeps its newest max_events events; the
-- hash's "events" counts them all, so that a reader knows how many were dropped.
local function event(id, now, ev, actor, detail)
  redis.call("XADD", ik(id, "timeline"), "MAXLEN", "~", max_events, "*",
    "at", now, "event", ev, "actor", actor or "", "detail", detail or "")
  redis.call("HINCRBY", ik(id), "events", 1)
end
-- Dedup keys can be long (label values): key names hold their SHA-1 (keyHash in Go).
local function dedup(k) return P .. ":dedup:" .. redis.sha1hex(k) end
local function last(k) return P .. ":last:" .. redis.sha1hex(k) end
-- closing_keys returns the dedup keys a closing (resolved or merged) incident absorbed, its
-- own and those merged into it, and makes it the incident a new one of its own key links to
-- (for ttl ms when ttl > 0: the link expires with the incident).
local function closing_keys(id, ttl)
  local ks = redis.call("SMEMBERS", ik(id, "keys"))
  local own = redis.call("HGET", ik(id), "key")
  if own then
    ks[#ks + 1] = own
    if ttl > 0 then
      redis.call("SET", last(own), id, "PX", ttl)
    else
      redis.call("SET", last(own), id)
    end
  end
  return ks
end
-- incident_parts are the keys under an incident besides its hash (keys.go lists them).
local incident_parts = {"alerts", "keys", "timeline", "flood:keys", "flood:unlisted", "flood:labels",
  "flood:sources", "context", "news"}
-- retire makes a closed incident expire ttl ms from now, with everything under it and the
-- lookup of its root message; ttl <= 0 keeps it. Whatever keeps a record in Redis for a
-- retention (incidents here; silences and the like later) expires the same way: with a TTL
-- set when it closes, so that no sweep has to find it.
local function retire(id, ttl)
  if ttl <= 0 then return end
  redis.call("PEXPIRE", ik(id), ttl)
  for _, part in ipairs(incident_parts) do redis.call("PEXPIRE", ik(id, part), ttl) end
  local root = redis.call("HMGET", ik(id), "root_channel", "root_ts")
  if root[1] and root[2] then redis.call("PEXPIRE", P .. ":ts:" .. root[1] .. ":" .. root[2], ttl) end
end
-- close_flood ends, without a word, the flood that a closing flood incident stands for: if
-- alerts still pour in, the next new key opens a new flood incident.
local function close_flood(id)
  local f = redis.call("HMGET", ik(id), "flood", "channel")
  if f[1] ~= "1" then return end
  local fk = P .. ":flood:" .. f[2]
  if redis.call("HGET", fk, "id") == id then
    redis.call("HSET", fk, "ended", "1")
    redis.call("ZREM", P .. ":floods", f[2])
  end
end
-- list_alert sets an alert's state in the incident's alert list; a new alert finds no room in
-- a full list and is counted as unlisted instead (the incident's count has it all the same).
-- (Within a script run a list only grows: once found full it is not counted again.)
local full_lists = {}
local function list_alert(id, fp, v)
  local a = ik(id, "alerts")
  if not full_lists[id] then
    if redis.call("HLEN", a) < max_alerts then
      redis.call("HSET", a, fp, v)
      return
    end
    full_lists[id] = true
  end
  if redis.call("HEXISTS", a, fp) == 1 then
    redis.call("HSET", a, fp, v)
  else
    redis.call("HINCRBY", ik(id), "alerts_unlisted", 1)
  end
end
-- unsilenced adds the time an incident's silence held to its silenced_ms: escalation counts
-- only the time the incident was open, unacknowledged and not silenced.
local function unsilenced(id, now)
  local since = tonumber(redis.call("HGET", ik(id), "silenced_since"))
  if since then
    redis.call("HINCRBY", ik(id), "silenced_ms", math.max(now - since, 0))
    redis.call("HDEL", ik(id), "silenced_since")
  end
end
-- drop_silence ends, without a word, the silence of an incident that closes.
local function drop_silence(id, now)
  local sid = redis.call("HGET", ik(id), "silence_id")
  if not sid then return end
  redis.call("ZREM", P .. ":silences", sid)
  redis.call("HSET", P .. ":silence:" .. sid, "ended", now)
  redis.call("HDEL", ik(id), "silence_id", "silenced_until", "silenced_by", "silence_reason", "silence_count0")
  unsilenced(id, now)
end
local function more_severe(a, b)
  if a == 0 then return b end
  if b == 0 then return a end
  if a < b then return a end
  return b
end
-- on_firing adds to set what a firing alert of severity sev changes in open incident id: its
-- severity cur, unless a person set it (by), and its all_resolved flag ar, with the
-- auto-resolve that flag scheduled.
local function on_firing(set, id, cur, sev, by, ar)
  if not by and more_severe(cur, sev) ~= cur then
    set[#set + 1] = "severity"
    set[#set + 1] = sev
  end
  if ar == "1" then
    set[#set + 1] = "all_resolved"
    set[#set + 1] = "0"
    redis.call("ZREM", P .. ":autoresolve", id)
  end
end
`

// recordScript records a webhook's alerts, each as if alone: it joins the open incident of
// its dedup key or opens a new one (linked to the previous incident of that key); when too
// many new incidents open in its channel, a new key joins the channel's flood incident instead
// (luaFlood); with correlation on (alerts.correlate_pipeline), a new key of a pipeline joins
// the pipeline's open incident instead (luaCorrelate, state/detect.go); an alert a label silence matches is recorded in the silence's list and nowhere
// else (luaSilenced). An alert joining an incident is news for its thread only when it is new
// there, changed, fires again or resolves (luaNews); an identical re-send only counts. The
// whole batch runs as one script: a storm sends thousands of alerts a second, and Redis spends
// more on starting a script than on the few commands an alert needs.
// ARGV: now, window, auto_resolve_ms, flood limit (new incidents a minute per channel; 0: off),
// flood quiet_for ms, quiet_for as text, the silences' version the caller matched against,
// correlate ("1": alerts.correlate_pipeline), then recordArgs values per alert: key, sha1(key), fingerprint, status, title, severity,
// pipeline, channel, source, detail, labels (name=value, separated by "\31"), digest (hex:
// labels, then title and annotations), links (JSON, for the root), silence id (a label silence
// that matches it, or ""). Returns id, outcome, previous, keep per alert; outcomes are opened,
// duplicate, resolved, ignored, flooded (joined a flood as a new key), flood_opened (opened the
// flood), silenced (previous is then the silence) and correlated (joined the pipeline's open
// incident); keep is "1" when the alert is new to its
// incident or changed, and its context (labels, annotations) is to be kept. When the silences
// changed since the caller read them, it returns {"stale"} and records nothing.
var recordScript = redis.NewScript(luaCommon + `
local now_s = ARGV[1]
local now, window, ar = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local flood_limit, flood_quiet, quiet_text = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
if (redis.call("GET", P .. ":silences:version") or "0") ~= ARGV[7] then return {"stale"} end
local correlate = ARGV[8] == "1" -- alerts.correlate_pipeline
local function alert_json(status, digest)
  return '{"status":"' .. status .. '","last_seen":' .. now_s .. ',"d":"' .. digest .. '"}'
end
` + luaNews + luaSilenced + luaCorrelate + `
local function resolved(id, fp, source, detail, digest)
  local alerts = ik(id, "alerts")
  local prev = redis.call("HGET", alerts, fp)
  list_alert(id, fp, alert_json("resolved", digest))
  -- Alertmanager repeats resolved alerts in a group's notifications: only the first is news.
  if prev and string.find(prev, '"resolved"', 1, true) then return end
  event(id, now_s, "alert_resolved", source, news_detail(fp, detail))
  local st = redis.call("HMGET", ik(id), "all_resolved", "alerts_unlisted", "silenced_until")
  -- With alerts left out of a full list, nobody knows whether all resolved: a person decides.
  local all = st[1] ~= "1" and not st[2]
  if all then
    for _, v in ipairs(redis.call("HVALS", alerts)) do
      if not string.find(v, '"resolved"', 1, true) then
        all = false
        break
      end
    end
  end
  if not all then
    if st[1] ~= "1" and makes_news(id) then
      add_news(id, "resolved", detail)
      schedule(id)
    end
    return
  end
  redis.call("HSET", ik(id), "all_resolved", "1")
  local at = 0
  if detect_done(id) then
    -- streamwatch opened it, its symptom recovered, nobody acknowledged it: it
    -- resolves now (the deliverer's auto-resolve pass), not auto_resolve_after from now.
    at = now
    redis.call("ZADD", P .. ":autoresolve", at, id)
  elseif ar > 0 then
    at = now + ar
    redis.call("ZADD", P .. ":autoresolve", at, id)
  end
  event(id, now_s, "all_resolved", source, detail)
  if (tonumber(st[3]) or 0) > now then
    -- Silenced: the thread hears of it when the silence ends.
    add_news(id, "all_resolved", detail)
    schedule(id)
  else
    enqueue(id, "event", "all_resolved", source, detail, 0, at)
  end
end

local function open(key, h, title, sev, pipeline, channel, source, links)
  local id = "INC-" .. redis.call("INCR", P .. ":seq:incident")
  local previous = redis.call("GET", P .. ":last:" .. h) or ""
  -- The timeline's "opened" event is read from first_seen, source and title; the root is
  -- delivery 1 (see enqueue).
  redis.call("HSET", ik(id), "id", id, "key", key, "title", title, "severity", sev,
    "pipeline", pipeline, "channel", channel, "status", "open", "first_seen", now_s,
    "last_seen", now_s, "count", "1", "previous", previous, "source", source,
    "seq", "1", "delivered", "0", "pending", "0", "last_flush", "0")
  if links ~= "" then redis.call("HSET", ik(id), "links", links) end
  redis.call("SET", P .. ":dedup:" .. h, id)
  redis.call("ZADD", P .. ":open", now_s, id)
  redis.call("XADD", P .. ":outbox", "*", "inc", id, "seq", "1", "kind", "root", "channel", channel)
  return id, previous
end

-- dup_fields are the fields of an incident duplicate() reads, in the order it reads them.
local dup_fields = {"severity", "count", "pending", "all_resolved", "last_flush", "severity_by",
  "silenced_until", "flood", "quiet", "first_seen"}
-- duplicate counts an occurrence of open incident id; it returns what news_of needs to know of
-- the incident (one read serves both). v is dup_fields' values when the caller read them along
-- with its own; extra are field-value pairs the caller sets with duplicate()'s (one HSET).
local function duplicate(id, sev, detail, v, extra)
  v = v or redis.call("HMGET", ik(id), unpack(dup_fields))
  local pending = tonumber(v[3] or "0") or 0
  local set = {"last_seen", now_s, "last_detail", detail, "count", (tonumber(v[2] or "0") or 0) + 1,
    "pending", pending + 1}
  -- A severity a person set stays: alerts no longer change it.
  on_firing(set, id, tonumber(v[1] or "0") or 0, sev, v[6], v[4])
  if pending == 0 then
    -- The first occurrence since the last update: schedule the next one, a window after the
    -- last (pending > 0 exactly while the incident is in due, or silenced: the pump clears
    -- both; the end of the silence schedules what waits).
    set[#set + 1] = "pending_since"
    set[#set + 1] = now_s
    if (tonumber(v[7]) or 0) <= now then
      local due = (tonumber(v[5] or "0") or 0) + window
      if due < now then due = now end
      redis.call("ZADD", P .. ":due", "NX", due, id)
    end
  end
  if extra then
    for _, x in ipairs(extra) do set[#set + 1] = x end
  end
  redis.call("HSET", ik(id), unpack(set))
  return v[8], v[9], v[10]
end
` + luaFlood + `
-- new_key records a firing alert whose key has no open incident: it opens the key's own
-- incident, or joins the channel's flood.
-- floods is each channel's flood as this run knows it ({id, ends}, or false for none): within a
-- run now stands still, so only this run's own alerts change it, and a storm's batch reads it
-- once, not once per alert.
local floods = {}
local function flood_of(channel)
  local f = floods[channel]
  if f == nil then
    local id, ends = active_flood(channel)
    f = id and {id, ends} or false
    floods[channel] = f
  end
  if f then return f[1], f[2] end
  return nil
end
local function new_key(key, h, title, sev, pipeline, channel, source, detail, labels, links)
  -- streamwatch's own symptoms (one per pipeline) neither count nor join a flood.
  if flood_limit > 0 and not own_source(source) then
    local fid, ends = flood_of(channel)
    if fid then
      if flood_join(fid, key, title, sev, detail, labels) then
        local _, moved = count_new(channel, ends)
        if moved then floods[channel][2] = moved end
        return fid, "flooded", ""
      end
      return fid, "duplicate", ""
    end
    local hot, moved = count_new(channel, 0)
    if hot then
      local previous
      fid, previous = flood_open(channel)
      floods[channel] = {fid, moved or 0}
      flood_join(fid, key, title, sev, detail, labels)
      return fid, "flood_opened", previous
    end
  end
  local id, previous = open(key, h, title, sev, pipeline, channel, source, links)
  return id, "opened", previous
end

local out, keeps, kept = {}, {}, 0
for o = 9, #ARGV, ` + strconv.Itoa(recordArgs) + ` do
  local key, h, fp, status, title = ARGV[o], ARGV[o + 1], ARGV[o + 2], ARGV[o + 3], ARGV[o + 4]
  local sev, channel, source, detail = ARGV[o + 5], ARGV[o + 7], ARGV[o + 8], ARGV[o + 9]
  local digest, links, silence = ARGV[o + 11], ARGV[o + 12], ARGV[o + 13]
  local id = redis.call("GET", P .. ":dedup:" .. h)
  local outcome, previous = "duplicate", ""
  if status == "resolved" then
    id = id or flood_member(channel, key)
    if id then
      resolved(id, fp, source, detail, digest)
      outcome = "resolved"
    else
      id, outcome = "", "ignored"
    end
  elseif silence ~= "" and silenced(silence, key, fp, title) then
    id, outcome, previous = "", "silenced", silence
  else
    local news, keep, known = false, false, false
    if id then
      news, keep, known = news_of(id, fp, digest, duplicate(id, tonumber(sev), detail))
      if news then alert_news(id, news, fp, source, detail, links) end
    else
      -- one incident per pipeline symptom (luaCorrelate).
      local cid = correlate and correlate_target(ARGV[o + 6], source)
      if cid then
        correlate_join(cid, key, h, fp, title, tonumber(sev), source, ARGV[o + 6])
        id, outcome = cid, "correlated"
      else
        id, outcome, previous = new_key(key, h, title, tonumber(sev), ARGV[o + 6], channel, source, detail, ARGV[o + 10], links)
        if correlate and outcome == "opened" then pipe_index(ARGV[o + 6], source, id) end
      end
      keep = outcome == "opened" or outcome == "correlated"
    end
    if known then
      redis.call("HSET", ik(id, "alerts"), fp, alert_json("firing", digest))
    else
      list_alert(id, fp, alert_json("firing", digest))
    end
    if keep then kept = kept + 1 end
    keeps[#keeps + 1] = keep and "1" or ""
  end
  out[#out + 1] = id
  out[#out + 1] = outcome
  out[#out + 1] = previous
  out[#out + 1] = ""
end
-- Which alerts' contexts the caller is to keep (keepContextScript): few, so only those few are
-- encoded and sent.
if kept > 0 then
  local k = 0
  for i = 4, #out, 4 do
    k = k + 1
    out[i] = keeps[k] or ""
  end
end
return out
`)

// recordArgs is how many ARGV values recordScript takes per alert.
const recordArgs = 14

// pumpScript moves due coalesced updates into the outbox, each with a snapshot of what it
// reports, so a retried delivery posts the same text: a flood's newest keys, or an incident's
// news (without news the update only edits the root). A silenced incident's update waits for
// the silence's end. ARGV: now, limit.
var pumpScript = redis.NewScript(luaCommon + `
local now = tonumber(ARGV[1])
local ids = redis.call("ZRANGEBYSCORE", P .. ":due", "-inf", now, "LIMIT", 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  redis.call("ZREM", P .. ":due", id)
  local v = redis.call("HMGET", ik(id), "pending", "pending_since", "last_detail", "flood", "pending_new", "id", "distinct",
    "silenced_until", "news")
  local n, since, detail = tonumber(v[1] or "0"), v[2] or "0", v[3] or ""
  -- (An incident that expired meanwhile has nothing to tell: writing would bring it back.)
  if v[6] and (tonumber(v[8]) or 0) <= now then
    redis.call("HSET", ik(id), "pending", 0, "last_flush", now)
    if v[4] == "1" then
      -- A flood's update names the newest keys that joined it (flood_join's rotating fields).
      local fresh, d, names = tonumber(v[5] or "0"), tonumber(v[7] or "0"), {}
      for i = 0, math.min(fresh, 5) - 1 do names[#names + 1] = "newest" .. ((d - i) % 5) end
      local newest = {}
      if #names > 0 then newest = redis.call("HMGET", ik(id), unpack(names)) end
      redis.call("HSET", ik(id), "pending_new", 0)
      enqueue(id, "flush", "flood", "", table.concat(newest, "\n"), n, since, fresh)
    elseif (tonumber(v[9]) or 0) > 0 then
      local news = redis.call("LRANGE", ik(id, "news"), 0, -1)
      redis.call("DEL", ik(id, "news"))
      redis.call("HSET", ik(id), "news", 0)
      enqueue(id, "flush", "news", "", table.concat(news, "\n"), n, since, tonumber(v[9]))
    else
      enqueue(id, "flush", "", "", detail, n, since)
    end
  end
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

// resolveScript: ARGV id, actor, note, now, gate ("auto" for auto-resolve), retention ms.
// Returns {result}.
var resolveScript = redis.NewScript(luaCommon + `
local id, actor, note, now, gate = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local ttl = tonumber(ARGV[6])
local st = redis.call("HGET", ik(id), "status")
if not st then return {"notfound"} end
if gate == "auto" then
  if redis.call("ZREM", P .. ":autoresolve", id) == 0 then return {"skipped"} end
  if redis.call("HGET", ik(id), "all_resolved") ~= "1" then return {"skipped"} end
end
if st == "resolved" then return {"resolved"} end
redis.call("HSET", ik(id), "status", "resolved", "resolved_by", actor, "resolved_at", now, "note", note)
for _, k in ipairs(closing_keys(id, ttl)) do
  if redis.call("GET", dedup(k)) == id then redis.call("DEL", dedup(k)) end
end
redis.call("ZREM", P .. ":open", id)
redis.call("ZREM", P .. ":autoresolve", id)
close_flood(id)
drop_silence(id, now)
event(id, now, "resolved", actor, note)
enqueue(id, "event", "resolved", actor, note, 0, 0)
retire(id, ttl)
return {"ok"}
`)

// mergeScript: ARGV from, into, actor, now, retention ms. Returns {result}.
var mergeScript = redis.NewScript(luaCommon + `
local from, into, actor, now, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
if from == into then return {"same"} end
local sf = redis.call("HGET", ik(from), "status")
local si = redis.call("HGET", ik(into), "status")
if not sf then return {"notfound", from} end
if not si then return {"notfound", into} end
if sf == "resolved" then return {"resolved", from} end
if si == "resolved" then return {"resolved", into} end
local alerts = redis.call("HGETALL", ik(from, "alerts"))
for i = 1, #alerts, 2 do list_alert(into, alerts[i], alerts[i + 1]) end
local contexts = redis.call("HGETALL", ik(from, "context"))
for i = 1, #contexts, 2 do
  if redis.call("HLEN", ik(into, "context")) < max_alerts then redis.call("HSETNX", ik(into, "context"), contexts[i], contexts[i + 1]) end
end
local unlisted = tonumber(redis.call("HGET", ik(from), "alerts_unlisted") or "0")
if unlisted > 0 then redis.call("HINCRBY", ik(into), "alerts_unlisted", unlisted) end
for _, k in ipairs(closing_keys(from, ttl)) do
  redis.call("SET", dedup(k), into)
  redis.call("SADD", ik(into, "keys"), k)
end
local n = tonumber(redis.call("HGET", ik(from), "count") or "0")
redis.call("HINCRBY", ik(into), "count", n)
local sevf = tonumber(redis.call("HGET", ik(from), "severity") or "0")
local sevi = tonumber(redis.call("HGET", ik(into), "severity") or "0")
-- A severity a person set on INTO stays.
if redis.call("HEXISTS", ik(into), "severity_by") == 1 then sevf = sevi end
local mf = redis.call("HGET", ik(into), "merged_from") or ""
if mf ~= "" then mf = mf .. "," end
redis.call("HSET", ik(into), "severity", more_severe(sevi, sevf), "merged_from", mf .. from, "last_seen", now)
redis.call("HSET", ik(from), "status", "resolved", "merged_into", into, "resolved_by", actor, "resolved_at", now)
redis.call("ZREM", P .. ":open", from)
redis.call("ZREM", P .. ":autoresolve", from)
close_flood(from)
drop_silence(from, now)
event(from, now, "merged_into", actor, into)
event(into, now, "merged_from", actor, from)
enqueue(from, "event", "merged_into", actor, into, 0, 0)
enqueue(into, "event", "merged_from", actor, from, n, 0)
retire(from, ttl)
return {"ok"}
`)

// noteScript posts a note into an incident's thread (in sequence with its other messages).
// With a non-empty once flag, only the first note carrying that flag is posted. The timeline
// keeps the summary, or the detail's beginning when there is none.
// ARGV: id, event, actor, detail, now, once, summary. Returns {result}.
var noteScript = redis.NewScript(luaCommon + `
local id, ev, actor, detail, now, once, summary = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[7]
if redis.call("EXISTS", ik(id)) == 0 then return {"notfound"} end
if once ~= "" then
  if redis.call("HSETNX", ik(id), "once:" .. once, now) == 0 then return {"skipped"} end
end
if summary == "" then summary = detail end
event(id, now, ev, actor, string.sub(summary, 1, 1000))
enqueue(id, "event", ev, actor, detail, 0, 0)
return {"ok"}
`)

// completeScript records a delivered outbox entry: the incident's delivered sequence, the root
// message's ts and its lookup key, then acks and deletes the entry.
// ARGV: stream id, incident id, seq, root ts ("" unless a root was posted), channel.
// An incident that expired meanwhile is left alone (a write would bring back a part of it that
// never expires); a closed one's root lookup expires with it.
var completeScript = redis.NewScript(luaCommon + `
local sid, id, seq, ts, ch = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local ttl = redis.call("PTTL", ik(id))
if ttl ~= -2 then
  local done = tonumber(redis.call("HGET", ik(id), "delivered") or "0")
  if seq > done then redis.call("HSET", ik(id), "delivered", seq) end
  if ts ~= "" then
    redis.call("HSET", ik(id), "root_ts", ts, "root_channel", ch)
    if ttl > 0 then
      redis.call("SET", P .. ":ts:" .. ch .. ":" .. ts, id, "PX", ttl)
    else
      redis.call("SET", P .. ":ts:" .. ch .. ":" .. ts, id)
    end
  end
end
redis.call("XACK", P .. ":outbox", "deliver", sid)
redis.call("XDEL", P .. ":outbox", sid)
return 1
`)
