-- relocate: moves an incident's root message to ts in channel: root_ts and root_channel name
-- the new one, the new message's lookup key (P:ts:<channel>:<ts>) finds the incident with the
-- incident's own expiry, and the old message's lookup key goes. An incident that expired
-- meanwhile is left alone, as complete does. ARGV: incident id, ts, channel.
-- Returns moved ("1" unless the incident no longer exists).
local id, ts, ch = ARGV[1], ARGV[2], ARGV[3]
local ttl = call("PTTL", ik(id))
if ttl == -2 then return result("moved", 0) end
local old = call("HMGET", ik(id), "root_channel", "root_ts")
call("HSET", ik(id), "root_ts", ts, "root_channel", ch)
local key = P .. ":ts:" .. ch .. ":" .. ts
if ttl > 0 then
  call("SET", key, id, "PX", ttl)
else
  call("SET", key, id)
end
if old[1] and old[2] and old[2] ~= "" then
  local was = P .. ":ts:" .. old[1] .. ":" .. old[2]
  if was ~= key and call("GET", was) == id then call("DEL", was) end
end
return result("moved", 1)
