-- flood_end: a flood ends when the rate of new keys has stayed at or below the limit for its
-- quiet time (state/flood.go). Needs lib.
local function fk(channel) return P .. ":flood:" .. channel end
-- end_flood ends channel's flood fid at now: its thread says so, and new keys open incidents again.
local function end_flood(channel, fid, now)
  local hot = call("HGET", fk(channel), "hot_until")
  call("HSET", fk(channel), "ended", "1")
  call("ZREM", P .. ":floods", channel)
  if call("EXISTS", ik(fid)) == 0 then return end
  local f = call("HMGET", ik(fid), "flood_limit", "flood_quiet")
  call("HSET", ik(fid), "flood_ended", now)
  local fields = {"limit", f[1] or "", "quiet", f[2] or ""}
  event(fid, now, "flood_over", "streamwatch", fields)
  fields[#fields + 1] = "since"
  fields[#fields + 1] = hot or ""
  enqueue(fid, "event", "flood_over", "streamwatch", fields)
end
