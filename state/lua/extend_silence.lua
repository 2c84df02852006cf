-- extend_silence: moves the end of an active silence later. ARGV: sid, by ms, actor, now,
-- retention ms. Returns result and until (the new end).
local sid, by, actor, now, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local s = call("HMGET", sk(sid), "kind", "until", "incident")
if not s[1] then return result("result", "notfound", "until", 0) end
if not call("ZSCORE", P .. ":silences", sid) then return result("result", "expired", "until", 0) end
local till = tonumber(s[2]) + by
call("HSET", sk(sid), "until", till, "extended_by", actor)
if ttl > 0 then
  call("HSET", sk(sid), "expire_at", till + ttl)
  call("PEXPIRE", sk(sid), math.max(till + ttl - now, 1))
end
call("ZADD", P .. ":silences", till, sid)
if s[1] == "labels" then
  call("INCR", P .. ":silences:version")
elseif s[1] == "incident" and s[3] then
  local id = s[3]
  if call("HGET", ik(id), "silence_id") == sid then
    call("HSET", ik(id), "silenced_until", till)
    local fields = {"silence", sid, "until", till, "reason", "extended"}
    event(id, now, "silenced", actor, fields)
    enqueue(id, "event", "silenced", actor, fields)
  end
end
return result("result", "ok", "until", till)
