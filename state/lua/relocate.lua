-- relocate: the incident's root message is now ts in channel: posted again after a person
-- deleted it, or in slack.default_channel after its channel was archived or the bot removed
-- from it. The new message's lookup key finds the incident with the incident's own expiry, the
-- old message's goes, and an open incident is listed in the new channel instead of the old
-- one. An incident that expired meanwhile is left alone, as complete does.
-- ARGV: id, ts, channel. Returns result.
local id, ts, ch = ARGV[1], ARGV[2], ARGV[3]
local ttl = call("PTTL", ik(id))
if ttl == -2 then return result("result", "notfound") end
local f = call("HMGET", ik(id), "root_channel", "root_ts", "channel", "status", "first_seen")
call("HSET", ik(id), "root_ts", ts, "root_channel", ch)
local new = P .. ":ts:" .. ch .. ":" .. ts
if ttl > 0 then
  call("SET", new, id, "PX", ttl)
else
  call("SET", new, id)
end
if f[1] and f[2] then
  local old = P .. ":ts:" .. f[1] .. ":" .. f[2]
  if old ~= new and call("GET", old) == id then call("DEL", old) end
end
moved(id, f[1] or f[3], ch, f[4], f[5])
return result("result", "ok")
