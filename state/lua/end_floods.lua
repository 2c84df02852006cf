-- end_floods: ends the floods whose quiet time is up. ARGV: now. Returns a row per channel
-- whose flood it ended.
local now = tonumber(ARGV[1])
local out = {1, "channel"}
for _, ch in ipairs(call("ZRANGEBYSCORE", P .. ":floods", "-inf", now, "LIMIT", 0, 100)) do
  local f = call("HMGET", fk(ch), "id", "ended", "ends_at")
  if f[1] and f[2] ~= "1" and now >= (tonumber(f[3]) or 0) then
    end_flood(ch, f[1], now)
    out[#out + 1] = ch
  else
    call("ZREM", P .. ":floods", ch)
  end
end
return out
