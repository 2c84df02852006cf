-- lib: what every incident script shares. KEYS[1] is the hash-tagged base "{prefix}": every
-- key a script builds starts with it, so that all of them share one cluster slot. The
-- scripts call Redis through `call` (redis.call; the call-budget test counts through it) and
-- read the limits the Go side declares before this fragment (lua.go).
local P = KEYS[1]
local function ik(id, suffix)
  if suffix then return P .. ":inc:" .. id .. ":" .. suffix end
  return P .. ":inc:" .. id
end
-- Dedup keys can be long (label values): key names hold their SHA-1 (keyHash in Go).
local function dedup_of(h) return P .. ":dedup:" .. h end
local function dedup(k) return dedup_of(redis.sha1hex(k)) end
local function last(k) return P .. ":last:" .. redis.sha1hex(k) end
-- The list indexes: every open incident is in its channel's (where its root is, root_channel,
-- or its channel until the root is posted), its status's and its severity's, each by its first
-- seen time (ms), then its number; incident list and the commands typed without an ID read the
-- narrowest index a list names, never every open incident. index_score is that score, written
-- as digits: Lua would print a number that large with 14 significant ones (state.indexScore
-- is the same).
local function index_score(id, first_seen)
  return first_seen .. string.format("%03d", tonumber(string.match(id, "%d+")) % 1000)
end
local function chan_index(channel) return P .. ":chan:" .. channel end
local function status_index(st) return P .. ":status:" .. st end
local function sev_index(sev) return P .. ":sev:" .. (tonumber(sev) or 0) end
-- open_in indexes incident id as open: in channel, under status and, unless sev is nil (the
-- cache's flush indexes a new incident's severity), under sev; closed_in takes it out of them.
local function open_in(channel, id, first_seen, status, sev)
  local score = index_score(id, first_seen)
  call("ZADD", chan_index(channel), score, id)
  call("ZADD", status_index(status), score, id)
  if sev then call("ZADD", sev_index(sev), score, id) end
end
local function closed_in(channel, id, status, sev)
  if channel and channel ~= "" then call("ZREM", chan_index(channel), id) end
  if status then call("ZREM", status_index(status), id) end
  if sev then call("ZREM", sev_index(sev), id) end
end
-- reindex moves incident id from index from to index to (a status, a severity, a channel).
local function reindex(from, to, id, first_seen)
  if from == to then return end
  call("ZREM", from, id)
  call("ZADD", to, index_score(id, first_seen), id)
end
-- moved lists incident id (status st) in channel to instead of from: its root is there now.
local function moved(id, from, to, st, first_seen)
  if from and from ~= to and (st == "open" or st == "acknowledged") then
    reindex(chan_index(from), chan_index(to), id, first_seen)
  end
end
-- add appends the pair name, value to t unless the value is empty (it then reads as empty).
local function add(t, name, v)
  if v ~= nil and v ~= false and v ~= "" and v ~= 0 and v ~= "0" then
    t[#t + 1] = name
    t[#t + 1] = v
  end
end
-- event appends to an incident's timeline, which keeps its newest max_events events; the
-- hash's "events" counts them all, so that a reader knows how many were dropped. f are the
-- event's fields (name, value, …): Go makes the sentences (state/event.go).
local function event(id, now, ev, actor, f)
  local e = {"at", now, "event", ev, "actor", actor or ""}
  if f then for i = 1, #f, 2 do add(e, f[i], f[i + 1]) end end
  call("XADD", ik(id, "timeline"), "MAXLEN", "~", max_events, "*", unpack(e))
  call("HINCRBY", ik(id), "events", 1)
end
-- enqueue adds a delivery of incident id to the outbox: its kind (root, flush, event,
-- update), the event's name, who caused it and its fields; it takes the incident's next
-- sequence number, and the channel it is in now.
local function enqueue(id, kind, ev, actor, f)
  local seq = call("HINCRBY", ik(id), "seq", 1)
  local ch = call("HMGET", ik(id), "root_channel", "channel")
  local e = {"inc", id, "seq", seq, "kind", kind, "channel", ch[1] or ch[2] or ""}
  add(e, "event", ev)
  add(e, "actor", actor)
  if f then for i = 1, #f, 2 do add(e, f[i], f[i + 1]) end end
  call("XADD", P .. ":outbox", "*", unpack(e))
end
-- result returns named results, which Go decodes in one place (state/results.go): the number
-- of columns, their names, then the values of one row (name, value, … as arguments; a value
-- is never nil).
local function result(...)
  local a = {...}
  local out = {#a / 2}
  for i = 1, #a, 2 do out[#out + 1] = a[i] end
  for i = 2, #a, 2 do out[#out + 1] = a[i] end
  return out
end
