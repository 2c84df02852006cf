-- expire_due_silences: ends the silences whose time has come. ARGV: now, limit, retention ms.
-- Returns a row per silence ended: silence.
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[3])
local out = {1, "silence"}
for _, sid in ipairs(call("ZRANGEBYSCORE", P .. ":silences", "-inf", now, "LIMIT", 0, tonumber(ARGV[2]))) do
  if end_silence(sid, now, "", ttl) then out[#out + 1] = sid end
end
return out
