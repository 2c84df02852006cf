-- escalate: escalates, each once, the open (unacknowledged) incidents of the severities that
-- have been open and not silenced for at least after (the time a silence held does not count).
-- ARGV: now, after ms, severities ("1,2"), mention ("S0ONCALL,U0X"). Returns a row per
-- incident escalated: id.
local now, after, mention = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[4]
local sevs = {}
for v in string.gmatch(ARGV[3], "%d+") do sevs[tonumber(v)] = true end
local out = {1, "id"}
local open = call("ZRANGEBYSCORE", P .. ":open", "-inf", now - after, "WITHSCORES")
for i = 1, #open, 2 do
  local id, opened = open[i], tonumber(open[i + 1])
  local f = call("HMGET", ik(id), "status", "severity", "escalated_at", "silenced_until", "silenced_ms", "silenced_since")
  local silenced = tonumber(f[5]) or 0
  if f[6] then silenced = silenced + math.max(now - tonumber(f[6]), 0) end
  if f[1] == "open" and not f[3] and sevs[tonumber(f[2]) or 0] and (tonumber(f[4]) or 0) <= now and now - opened - silenced >= after then
    call("HSET", ik(id), "escalated_at", now, "escalated_to", mention)
    local fields = {"severity", f[2], "after", after, "mention", mention}
    event(id, now, "escalated", "streamwatch", fields)
    enqueue(id, "event", "escalated", "streamwatch", fields)
    out[#out + 1] = id
  end
end
return out
