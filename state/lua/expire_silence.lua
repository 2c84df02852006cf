-- expire_silence: ends a silence early. ARGV: id, actor, now, retention ms. Returns result,
-- kind and incident.
local sid, actor, now, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local s = call("HMGET", sk(sid), "kind", "incident")
if not s[1] then return result("result", "notfound", "kind", "", "incident", "") end
if not end_silence(sid, now, actor, ttl) then return result("result", "expired", "kind", s[1], "incident", s[2] or "") end
return result("result", "ok", "kind", s[1], "incident", s[2] or "")
