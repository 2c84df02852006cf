-- ack: acknowledges an open incident. ARGV: id, actor, now. Returns result.
local id, actor, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local st = call("HGET", ik(id), "status")
if not st then return result("result", "notfound") end
if st ~= "open" then return result("result", st) end
call("HSET", ik(id), "status", "acknowledged", "ack_by", actor, "ack_at", now)
event(id, now, "acknowledged", actor)
enqueue(id, "event", "acknowledged", actor)
return result("result", "ok")
