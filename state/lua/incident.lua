-- incident: an incident's life beside its alerts: closing (its keys, its flood, its silence),
-- retiring with the retention, severity. Needs lib.

-- closing_keys returns the dedup keys a closing (resolved or merged) incident absorbed, its
-- own and those merged into it, and makes it the incident a new one of its own key links to
-- (for ttl ms when ttl > 0: the link expires with the incident).
local function closing_keys(id, ttl)
  local ks = call("SMEMBERS", ik(id, "keys"))
  local own = call("HGET", ik(id), "key")
  if own then
    ks[#ks + 1] = own
    if ttl > 0 then
      call("SET", last(own), id, "PX", ttl)
    else
      call("SET", last(own), id)
    end
  end
  return ks
end
-- incident_parts are the keys under an incident besides its hash (keys.go lists them).
local incident_parts = {"alerts", "keys", "timeline", "flood:keys", "flood:unlisted", "flood:labels",
  "flood:sources", "flood:severity", "context", "news"}
-- retire makes a closed incident expire ttl ms from now, with everything under it and the
-- lookup of its root message; ttl <= 0 keeps it. Whatever keeps a record in Redis for a
-- retention expires the same way: with a TTL set when it closes, so that no sweep has to find it.
local function retire(id, ttl)
  if ttl <= 0 then return end
  call("PEXPIRE", ik(id), ttl)
  for _, part in ipairs(incident_parts) do call("PEXPIRE", ik(id, part), ttl) end
  local root = call("HMGET", ik(id), "root_channel", "root_ts")
  if root[1] and root[2] then call("PEXPIRE", P .. ":ts:" .. root[1] .. ":" .. root[2], ttl) end
end
-- persist keeps a reopened incident again: what retire set to expire, no longer does.
local function persist(id)
  call("PERSIST", ik(id))
  for _, part in ipairs(incident_parts) do call("PERSIST", ik(id, part)) end
  local root = call("HMGET", ik(id), "root_channel", "root_ts")
  if root[1] and root[2] then call("PERSIST", P .. ":ts:" .. root[1] .. ":" .. root[2]) end
end
-- close_flood ends, without a word, the flood that a closing flood incident stands for: if
-- alerts still pour in, the next new key opens a new flood incident.
local function close_flood(id)
  local f = call("HMGET", ik(id), "flood", "channel")
  if f[1] ~= "1" then return end
  local fk = P .. ":flood:" .. f[2]
  if call("HGET", fk, "id") == id then
    call("HSET", fk, "ended", "1")
    call("ZREM", P .. ":floods", f[2])
  end
end
-- unsilenced adds the time an incident's silence held to its silenced_ms: escalation counts
-- only the time the incident was open, unacknowledged and not silenced.
local function unsilenced(id, now)
  local since = tonumber(call("HGET", ik(id), "silenced_since"))
  if since then
    call("HINCRBY", ik(id), "silenced_ms", math.max(now - since, 0))
    call("HDEL", ik(id), "silenced_since")
  end
end
-- drop_silence ends, without a word, the silence of an incident that closes.
local function drop_silence(id, now)
  local sid = call("HGET", ik(id), "silence_id")
  if not sid then return end
  call("ZREM", P .. ":silences", sid)
  call("HSET", P .. ":silence:" .. sid, "ended", now)
  call("HDEL", ik(id), "silence_id", "silenced_until", "silenced_by", "silence_reason", "silence_count0")
  unsilenced(id, now)
end
-- more_severe is the more severe of two severities (1 most severe; 0 unknown).
local function more_severe(a, b)
  if a == 0 then return b end
  if b == 0 then return a end
  if a < b then return a end
  return b
end
