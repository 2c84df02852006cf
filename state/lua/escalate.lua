-- escalate: calls people into the open incidents of the severities that nobody acknowledged,
-- level by level. Level n fires once the incident has been open, unacknowledged and not
-- silenced for its after (the time a silence or an acknowledgement held does not count), each
-- level once and in order; the highest level fired repeats its mention every repeat (0: once).
-- An acknowledged incident nobody touched for ack_timeout (0: never) is unacknowledged again
-- and escalates to its next level at once (the last level repeats).
-- ARGV: now, severities ("1,2"), ack_timeout ms, then per level: after ms, repeat ms, mention
-- ("S0ONCALL,U0X"). Returns a row per mention made: id, level, repeat ("1" for a repeat).
local now, ack_timeout = tonumber(ARGV[1]), tonumber(ARGV[3])
local sevs = {}
for v in string.gmatch(ARGV[2], "%d+") do sevs[tonumber(v)] = true end
local levels = {}
for i = 4, #ARGV, 3 do
  levels[#levels + 1] = {after = tonumber(ARGV[i]), rep = tonumber(ARGV[i + 1]), mention = ARGV[i + 2]}
end
local out = {3, "id", "level", "repeat"}
-- fire makes level n's mention in incident id (sev its severity).
local function fire(id, sev, n, again)
  local l = levels[n]
  local r = ""
  if again then r = "1" end
  call("HSET", ik(id), "esc_level", n, "esc_at", now, "escalated_to", l.mention)
  call("HSETNX", ik(id), "escalated_at", now)
  local fields = {"severity", sev, "after", l.after, "mention", l.mention, "level", n, "repeat", r}
  event(id, now, "escalated", "streamwatch", fields)
  enqueue(id, "event", "escalated", "streamwatch", fields)
  out[#out + 1] = id
  out[#out + 1] = tostring(n)
  out[#out + 1] = r
end
-- Acknowledged incidents are in :open too: read every one when acknowledgements can expire.
local upto = now - levels[1].after
if ack_timeout > 0 then upto = "+inf" end
local open = call("ZRANGEBYSCORE", P .. ":open", "-inf", upto, "WITHSCORES")
for i = 1, #open, 2 do
  local id, opened = open[i], tonumber(open[i + 1])
  local f = call("HMGET", ik(id), "status", "severity", "esc_level", "silenced_until", "silenced_ms", "silenced_since",
    "acked_ms", "esc_at", "ack_at", "touched_at", "escalated_at")
  local sev = tonumber(f[2]) or 0
  -- An incident an earlier version escalated has escalated_at and no level: level 1 fired.
  local level = tonumber(f[3]) or 0
  if level == 0 and f[11] then level = 1 end
  if sevs[sev] and (tonumber(f[4]) or 0) <= now then
    if f[1] == "acknowledged" and ack_timeout > 0 then
      local ack_at = tonumber(f[9]) or now
      if now - math.max(ack_at, tonumber(f[10]) or 0) >= ack_timeout then
        call("HINCRBY", ik(id), "acked_ms", math.max(now - ack_at, 0))
        call("HSET", ik(id), "status", "open")
        reindex(status_index("acknowledged"), status_index("open"), id, open[i + 1])
        call("HDEL", ik(id), "ack_at")
        event(id, now, "ack_expired", "streamwatch", {"after", ack_timeout})
        enqueue(id, "event", "ack_expired", "streamwatch", {"after", ack_timeout})
        if levels[level + 1] then fire(id, sev, level + 1, false) else fire(id, sev, #levels, true) end
      end
    elseif f[1] == "open" then
      local held = (tonumber(f[5]) or 0) + (tonumber(f[7]) or 0)
      if f[6] then held = held + math.max(now - tonumber(f[6]), 0) end
      local nxt = levels[level + 1]
      if nxt and now - opened - held >= nxt.after then
        fire(id, sev, level + 1, false)
      elseif level > 0 and levels[level] and levels[level].rep > 0 and
          now - (tonumber(f[8]) or tonumber(f[11]) or now) >= levels[level].rep then
        fire(id, sev, level, true)
      end
    end
  end
end
return out
