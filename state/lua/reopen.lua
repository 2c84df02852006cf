-- reopen: a resolved incident (not a merged one) opens again, within its retention: it is
-- kept again, listed, and takes back those of its keys no other incident took meanwhile; its
-- thread continues. ARGV: id, actor, now. Returns result.
local id, actor, now = ARGV[1], ARGV[2], ARGV[3]
local f = call("HMGET", ik(id), "status", "merged_into", "channel", "first_seen", "key", "root_channel", "root_ts", "severity")
if not f[1] then return result("result", "notfound") end
if f[1] ~= "resolved" then return result("result", f[1]) end
if f[2] then return result("result", "merged") end
call("HSET", ik(id), "status", "open", "all_resolved", "0", "touched_at", now)
call("HDEL", ik(id), "resolved_by", "resolved_at", "note", "ack_by", "ack_at")
persist(id)
call("ZADD", P .. ":open", f[4], id)
open_in(f[6] or f[3], id, f[4], "open", f[8])
local ks = call("SMEMBERS", ik(id, "keys"))
if f[5] then ks[#ks + 1] = f[5] end
local taken = 0
for _, k in ipairs(ks) do
  if call("SET", dedup(k), id, "NX") then taken = taken + 1 end
end
event(id, now, "reopened", actor, {"count", taken})
enqueue(id, "event", "reopened", actor, {"count", taken})
return result("result", "ok")
