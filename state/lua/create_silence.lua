-- create_silence: makes a label silence. ARGV: matchers, until, by, by id, reason, now,
-- retention ms, starts (0: now; the replicas match it only from then). Returns silence: its id.
local m, till, by, by_id, reason = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local now, ttl, starts = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8]) or 0
local sid = "SIL-" .. call("INCR", P .. ":seq:silence")
local exp = 0
if ttl > 0 then exp = till + ttl end
call("HSET", sk(sid), "id", sid, "kind", "labels", "matchers", m, "by", by, "by_id", by_id,
  "reason", reason, "created", now, "until", till, "expire_at", exp, "hits", 0)
if starts > now then call("HSET", sk(sid), "starts", starts) end
if exp > 0 then call("PEXPIRE", sk(sid), math.max(exp - now, 1)) end
call("ZADD", P .. ":silences", till, sid)
call("INCR", P .. ":silences:version")
return result("silence", sid)
