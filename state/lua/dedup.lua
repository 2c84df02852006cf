-- dedup: an alert joins the open incident of its key or opens one; duplicates count; the
-- alerts an incident lists, their states and how many of them fire (the firing count, kept
-- as they change, so that nobody scans the list). Needs lib, incident, cache, and the
-- script's now, now_s and window.

-- An alert's stored state is "<status>:<last seen, ms>:<digest>", status f(iring) or
-- r(esolved). alert_state reads it (and the JSON of earlier versions): status, last seen (the
-- digits as stored: comparing them as strings spares Lua a number conversion each alert),
-- digest ("" when stored without one); nil for an alert not listed.
local function alert_state(s)
  if not s then return nil, "", "" end
  if string.byte(s, 1) == 123 then
    local st = "f"
    if string.find(s, '"resolved"', 1, true) then st = "r" end
    return st, string.match(s, '"last_seen":(%d+)') or "", string.match(s, '"d":"(%x*)"') or ""
  end
  local i = string.find(s, ":", 3, true)
  if not i then return string.sub(s, 1, 1), "", "" end
  return string.sub(s, 1, 1), string.sub(s, 3, i - 1), string.sub(s, i + 1)
end
-- firing_of is how many of the alerts incident id lists fire. An incident an earlier version
-- recorded has no count yet: its list is read once, and the count kept from then on.
local function firing_of(id)
  local c = inc(id)
  local n = c.v.firing
  if n then return n end
  n = 0
  for _, s in ipairs(call("HVALS", c.alerts)) do
    if alert_state(s) ~= "r" then n = n + 1 end
  end
  set(id, "firing", n)
  return n
end
-- listed is how many alerts incident id lists, read once a run.
local function listed(id)
  local c = inc(id)
  if not c.n then c.n = call("HLEN", c.alerts) end
  return c.n
end
-- note_alert records that alert fp of incident id is in state st ("f" or "r") with digest, as
-- of now; prev is what the list held (nil: not listed), pst, seen and d its parts. It writes
-- only a change, or a last seen older than a window (recent: now minus the window, as digits;
-- incident show says when each alert was last seen, to the window), and keeps the firing
-- count. A new alert finds no room in a full list and is counted as unlisted instead (the
-- incident's count has it all the same); it returns false then.
local function note_alert(id, fp, st, digest, prev, pst, seen, d)
  if prev and pst == st and d == digest and #seen == #recent and seen > recent then return true end
  if prev then
    call("HSET", ik(id, "alerts"), fp, st .. ":" .. now_s .. ":" .. digest)
    if pst ~= st then
      local delta = 1
      if st == "r" then delta = -1 end
      set(id, "firing", firing_of(id) + delta)
    end
    return true
  end
  local c = inc(id)
  if listed(id) >= max_alerts then
    set(id, "alerts_unlisted", (c.v.alerts_unlisted or 0) + 1)
    return false
  end
  call("HSET", c.alerts, fp, st .. ":" .. now_s .. ":" .. digest)
  c.n = c.n + 1
  if st == "f" then set(id, "firing", firing_of(id) + 1) end
  return true
end
-- on_firing is what a firing alert of severity sev changes in open incident id: its severity,
-- unless a person set it, and its all_resolved flag, with the auto-resolve that flag scheduled.
local function on_firing(id, sev)
  local v = inc(id).v
  local cur = v.severity or 0
  if not v.severity_by and more_severe(cur, sev) ~= cur then set(id, "severity", sev) end
  if v.all_resolved == "1" then
    set(id, "all_resolved", "0")
    call("ZREM", P .. ":autoresolve", id)
  end
end
-- duplicate counts an occurrence of open incident id. The first occurrence since the
-- incident's last update schedules the next one, a window after the last (pending > 0 exactly
-- while the incident is in due, or silenced: the pump clears both; the end of the silence
-- schedules what waits).
local function duplicate(id, sev, detail)
  local v = inc(id).v
  local pending = v.pending or 0
  set(id, "last_seen", now_s)
  set(id, "last_detail", detail)
  set(id, "count", (v.count or 0) + 1)
  set(id, "pending", pending + 1)
  on_firing(id, sev)
  if pending == 0 then
    set(id, "pending_since", now_s)
    if (v.silenced_until or 0) <= now then
      local due = (v.last_flush or 0) + window
      if due < now then due = now end
      call("ZADD", P .. ":due", "NX", due, id)
    end
  end
end
-- open opens the incident of a key (linked to the previous incident of that key) and queues
-- its root (delivery 1). The timeline's "opened" event is read from first_seen, source and title.
local function open(key, h, title, sev, pipeline, channel, source, links)
  local seq = call("INCR", P .. ":seq:incident")
  local id = "INC-" .. seq
  local previous = call("GET", P .. ":last:" .. h) or ""
  local f = {"id", id, "key", key, "title", title, "severity", sev, "pipeline", pipeline, "channel", channel,
    "status", "open", "first_seen", now_s, "last_seen", now_s, "count", 1, "previous", previous, "source", source,
    "seq", "1", "delivered", "0", "pending", 0, "last_flush", 0, "firing", 0}
  if links ~= "" then
    f[#f + 1] = "links"
    f[#f + 1] = links
  end
  call("HSET", ik(id), unpack(f))
  call("SET", dedup_of(h), id)
  call("ZADD", P .. ":open", now_s, id)
  open_in(channel, id, now_s, "open")
  call("XADD", P .. ":outbox", "*", "inc", id, "seq", "1", "kind", "root", "channel", channel)
  cache_new(id, f)
  cache[id].n = 0
  return id, previous
end
-- An identical re-send (the alert listed, firing, with the same digest) of an incident the run
-- has not read is only counted: no news, no severity to raise (it was raised when the alert
-- first came), no all-resolved to clear (a listed firing alert keeps it clear). quick keeps
-- them, and flush_quick writes each incident's count once, after flush (whose HSET of a count
-- the increments add to): a storm's re-sends cost a lookup and a counter.
local quick = {}
local function quick_dup(id, detail)
  local q = quick[id]
  if not q then
    q = {n = 0}
    quick[id] = q
  end
  q.n = q.n + 1
  q.detail = detail
end
local function flush_quick()
  for id, q in pairs(quick) do
    local k = ik(id)
    call("HINCRBY", k, "count", q.n)
    if call("HINCRBY", k, "pending", q.n) == q.n then
      -- The first occurrence since the last update: schedule the next one (as duplicate does).
      call("HSET", k, "last_seen", now_s, "last_detail", q.detail, "pending_since", now_s)
      local v = call("HMGET", k, "last_flush", "silenced_until")
      if (tonumber(v[2]) or 0) <= now then
        local due = (tonumber(v[1]) or 0) + window
        if due < now then due = now end
        call("ZADD", P .. ":due", "NX", due, id)
      end
    else
      call("HSET", k, "last_seen", now_s, "last_detail", q.detail)
    end
  end
  quick = {}
end
