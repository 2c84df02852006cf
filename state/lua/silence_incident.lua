-- silence_incident: silences an incident, replacing a silence it has. ARGV: id, until, by, by
-- id, reason, now, retention ms. Returns result and silence.
local id, till, by, by_id, reason = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local now, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local st = call("HGET", ik(id), "status")
if not st then return result("result", "notfound", "silence", "") end
if st == "resolved" then return result("result", "resolved", "silence", "") end
local sid = "SIL-" .. call("INCR", P .. ":seq:silence")
local prev = call("HGET", ik(id), "silence_id")
if prev then
  call("ZREM", P .. ":silences", prev)
  call("HSET", sk(prev), "ended", now, "until", now, "ended_by", by, "replaced_by", sid)
  keep_for(prev, now, ttl)
else
  call("HSET", ik(id), "silence_count0", call("HGET", ik(id), "count") or "0", "silenced_since", now)
end
local exp = 0
if ttl > 0 then exp = till + ttl end
call("HSET", sk(sid), "id", sid, "kind", "incident", "incident", id, "by", by, "by_id", by_id,
  "reason", reason, "created", now, "until", till, "expire_at", exp)
if exp > 0 then call("PEXPIRE", sk(sid), math.max(exp - now, 1)) end
call("ZADD", P .. ":silences", till, sid)
call("HSET", ik(id), "silence_id", sid, "silenced_until", till, "silenced_by", by, "silence_reason", reason)
-- What waits for Slack waits for the silence to end (end_silence schedules it).
call("ZREM", P .. ":due", id)
local fields = {"silence", sid, "until", till, "reason", reason}
event(id, now, "silenced", by, fields)
enqueue(id, "event", "silenced", by, fields)
return result("result", "ok", "silence", sid)
