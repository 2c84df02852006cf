-- assign: makes a user the incident's owner ("" unassigns). ARGV: id, owner id, owner name,
-- actor, now. Returns result.
local id, owner, name, actor, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
local st = call("HGET", ik(id), "status")
if not st then return result("result", "notfound") end
if st == "resolved" then return result("result", "resolved") end
if owner == "" then
  call("HDEL", ik(id), "owner", "owner_name")
  call("HSET", ik(id), "owner_by", actor, "touched_at", now)
  event(id, now, "unassigned", actor)
else
  call("HSET", ik(id), "owner", owner, "owner_name", name, "owner_by", actor, "touched_at", now)
  event(id, now, "assigned", actor, {"owner", owner, "owner_name", name})
end
enqueue(id, "event", "assigned", actor, {"owner", owner, "owner_name", name})
return result("result", "ok")
