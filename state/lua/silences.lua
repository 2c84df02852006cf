-- silences: label silences hold matching alerts; incident silences hold an incident's updates
-- (state/silences.go). Needs lib, incident.
local function sk(sid) return P .. ":silence:" .. sid end
-- silenced records a firing alert that label silence sid matches, in the silence's list, and
-- returns true; false when no such label silence exists (the alert is recorded as usual).
local function silenced(sid, key, fp, title, now)
  local s = call("HMGET", sk(sid), "kind", "expire_at")
  if s[1] ~= "labels" then return false end
  call("HINCRBY", sk(sid), "hits", 1)
  call("HSET", sk(sid), "last_hit", now)
  local a = sk(sid) .. ":alerts"
  local prev = call("HGET", a, fp)
  if prev or call("HLEN", a) < max_silenced_listed then
    local n = 1
    if prev then n = (tonumber(string.match(prev, '"n":(%d+)')) or 0) + 1 end
    call("HSET", a, fp, cjson.encode({n = n, last = now, key = key, title = title}))
    -- Relative TTLs: the replicas' clocks, which stamped expire_at, need not be Redis's.
    if not prev and (tonumber(s[2]) or 0) > 0 then call("PEXPIRE", a, math.max(tonumber(s[2]) - now, 1)) end
  else
    call("HINCRBY", sk(sid), "unlisted", 1)
  end
  return true
end
-- keep_for makes a silence that ended stay ttl ms (0: for good).
local function keep_for(sid, now, ttl)
  if ttl <= 0 then return end
  call("HSET", sk(sid), "expire_at", now + ttl)
  call("PEXPIRE", sk(sid), ttl)
  call("PEXPIRE", sk(sid) .. ":alerts", ttl)
end
-- end_silence ends active silence sid at now: a label silence stops matching (the version
-- tells every replica); an incident silence lets the incident's updates out again, and its
-- thread says so with what arrived meanwhile. actor is who ended it early, "" when its time
-- ran out. It returns false when sid was not active.
local function end_silence(sid, now, actor, ttl)
  if call("ZREM", P .. ":silences", sid) == 0 then return false end
  local s = call("HMGET", sk(sid), "kind", "incident", "by", "reason")
  call("HSET", sk(sid), "ended", now)
  if actor ~= "" then
    call("HSET", sk(sid), "until", now, "ended_by", actor)
    keep_for(sid, now, ttl)
  end
  if s[1] == "labels" then
    call("INCR", P .. ":silences:version")
  elseif s[1] == "incident" then
    local id = s[2]
    local f = call("HMGET", ik(id), "silence_id", "status", "count", "silence_count0", "pending")
    if f[1] == sid then
      call("HDEL", ik(id), "silence_id", "silenced_until", "silenced_by", "silence_reason", "silence_count0")
      unsilenced(id, now)
      if f[2] and f[2] ~= "resolved" then
        local n = (tonumber(f[3]) or 0) - (tonumber(f[4]) or 0)
        local ev, who = "silence_expired", "streamwatch"
        if actor ~= "" then ev, who = "silence_ended", actor end
        local fields = {"silence", sid, "by", s[3] or "", "reason", s[4] or "", "count", n}
        event(id, now, ev, who, fields)
        enqueue(id, "event", ev, who, fields)
        if (tonumber(f[5]) or 0) > 0 then call("ZADD", P .. ":due", now, id) end
      end
    end
  end
  return true
end
