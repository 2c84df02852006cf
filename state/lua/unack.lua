-- unack: takes an acknowledgement back: the incident is open again and escalation resumes at
-- its next level (the time it was acknowledged does not count towards it). ARGV: id, actor,
-- now. Returns result.
local id, actor, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local f = call("HMGET", ik(id), "status", "ack_at", "first_seen")
if not f[1] then return result("result", "notfound") end
if f[1] ~= "acknowledged" then return result("result", f[1]) end
call("HINCRBY", ik(id), "acked_ms", math.max(now - (tonumber(f[2]) or now), 0))
call("HSET", ik(id), "status", "open", "touched_at", now)
reindex(status_index("acknowledged"), status_index("open"), id, f[3])
call("HDEL", ik(id), "ack_by", "ack_at")
event(id, now, "unacknowledged", actor)
enqueue(id, "event", "unacknowledged", actor)
return result("result", "ok")
