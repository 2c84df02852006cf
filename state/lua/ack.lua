-- ack: acknowledges an open incident. ARGV: id, actor, now. Returns result.
local id, actor, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local f = call("HMGET", ik(id), "status", "first_seen")
local st = f[1]
if not st then return result("result", "notfound") end
if st ~= "open" then return result("result", st) end
call("HSET", ik(id), "status", "acknowledged", "ack_by", actor, "ack_at", now)
reindex(status_index("open"), status_index("acknowledged"), id, f[2])
event(id, now, "acknowledged", actor)
enqueue(id, "event", "acknowledged", actor)
return result("result", "ok")
