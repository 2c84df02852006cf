-- severity: sets an incident's severity by hand; alerts no longer change it.
-- ARGV: id, severity, actor, now. Returns result.
local id, sev, actor, now = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local v = call("HMGET", ik(id), "status", "severity", "first_seen")
if not v[1] then return result("result", "notfound") end
if v[1] == "resolved" then return result("result", "resolved") end
local old = tonumber(v[2]) or 0
call("HSET", ik(id), "severity", sev, "severity_by", actor, "touched_at", now)
reindex(sev_index(old), sev_index(sev), id, v[3])
event(id, now, "severity", actor, {"severity", sev, "was", old})
enqueue(id, "event", "severity", actor, {"severity", sev, "was", old})
return result("result", "ok")
