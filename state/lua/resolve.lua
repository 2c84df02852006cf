-- resolve: resolves an incident; its keys open new incidents from then on. ARGV: id, actor,
-- note, now, gate ("auto" for the auto-resolve pass), retention ms. Returns result.
local id, actor, note, now, gate = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local ttl = tonumber(ARGV[6])
local cur = call("HMGET", ik(id), "status", "channel", "root_channel", "severity")
local st = cur[1]
if not st then return result("result", "notfound") end
if gate == "auto" then
  if call("ZREM", P .. ":autoresolve", id) == 0 then return result("result", "skipped") end
  if call("HGET", ik(id), "all_resolved") ~= "1" then return result("result", "skipped") end
end
if st == "resolved" then return result("result", "resolved") end
call("HSET", ik(id), "status", "resolved", "resolved_by", actor, "resolved_at", now, "note", note)
for _, k in ipairs(closing_keys(id, ttl)) do
  if call("GET", dedup(k)) == id then call("DEL", dedup(k)) end
end
call("ZREM", P .. ":open", id)
closed_in(cur[3] or cur[2], id, st, cur[4])
call("ZREM", P .. ":autoresolve", id)
close_flood(id)
drop_silence(id, now)
local auto = ""
if gate == "auto" then auto = "1" end
event(id, now, "resolved", actor, {"note", note, "auto", auto})
enqueue(id, "event", "resolved", actor, {"note", note, "auto", auto})
retire(id, ttl)
return result("result", "ok")
