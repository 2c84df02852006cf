-- unmerge: undoes a merge of FROM into INTO while INTO is open: FROM opens again with its
-- keys, its alerts and its count, in its own thread; INTO gives them back. ARGV: from, actor,
-- now. Returns result and incident (the one a refusal is about).
local from, actor, now = ARGV[1], ARGV[2], ARGV[3]
local f = call("HMGET", ik(from), "status", "merged_into", "channel", "first_seen", "key", "count", "root_channel", "severity")
if not f[1] then return result("result", "notfound", "incident", from) end
local into = f[2]
if not into then return result("result", "not_merged", "incident", from) end
local si = call("HMGET", ik(into), "status", "merged_from", "count")
if not si[1] then return result("result", "notfound", "incident", into) end
if si[1] == "resolved" then return result("result", "resolved", "incident", into) end
-- FROM's keys come back, and its alerts leave INTO's list (INTO counts what fires again).
local ks = call("SMEMBERS", ik(from, "keys"))
if f[5] then ks[#ks + 1] = f[5] end
for _, k in ipairs(ks) do
  if call("GET", dedup(k)) == into then call("SET", dedup(k), from) end
  call("SREM", ik(into, "keys"), k)
end
local fps = call("HKEYS", ik(from, "alerts"))
for i = 1, #fps, 500 do call("HDEL", ik(into, "alerts"), unpack(fps, i, math.min(i + 499, #fps))) end
call("HDEL", ik(into), "firing")
local n = tonumber(f[6]) or 0
call("HSET", ik(into), "count", math.max((tonumber(si[3]) or 0) - n, 0), "last_seen", now)
local rest = {}
for m in string.gmatch(si[2] or "", "[^,]+") do
  if m ~= from then rest[#rest + 1] = m end
end
call("HSET", ik(into), "merged_from", table.concat(rest, ","))
call("HSET", ik(from), "status", "open", "touched_at", now)
call("HDEL", ik(from), "merged_into", "resolved_by", "resolved_at", "note")
persist(from)
call("ZADD", P .. ":open", f[4], from)
open_in(f[7] or f[3], from, f[4], "open", f[8])
event(from, now, "unmerged", actor, {"incident", into})
event(into, now, "unmerged_from", actor, {"incident", from, "count", n})
enqueue(from, "event", "unmerged", actor, {"incident", into})
enqueue(into, "event", "unmerged_from", actor, {"incident", from, "count", n})
return result("result", "ok", "incident", "")
