-- sweep: gives closed incidents that an older streamwatch left without a TTL the TTL they would
-- have had (retention after they closed, at least a minute from now), and so the lookups of
-- their root messages and their keys' links to them, and takes them out of the list indexes
-- should one still hold them. It scans a slice of the keys per run.
-- ARGV: cursor, retention ms, now. Returns cursor: where to go on from ("0": done).
local cursor, ttl, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local pattern = string.gsub(P, "[%*%?%[%]\\]", "\\%0") .. ":*"
local res = call("SCAN", cursor, "MATCH", pattern, "COUNT", 500)
local function ttl_of(id)
  local at = tonumber(call("HGET", ik(id), "resolved_at") or "0") or 0
  return math.max(at + ttl - now, 60000)
end
for _, k in ipairs(res[2]) do
  if call("PTTL", k) == -1 then
    local kind, rest = string.match(string.sub(k, #P + 2), "^(%a+):(.*)$")
    if kind == "inc" and not string.find(rest, ":", 1, true) then
      if call("HGET", k, "status") == "resolved" then
        -- An older streamwatch may have closed it without taking it out of the list indexes.
        local f = call("HMGET", k, "channel", "root_channel", "severity")
        closed_in(f[1], rest, "open", f[3])
        closed_in(f[2], rest, "acknowledged")
        retire(rest, ttl_of(rest))
      end
    elseif kind == "last" then
      local id = call("GET", k)
      local st = call("HGET", ik(id), "status")
      if st ~= "open" and st ~= "acknowledged" then call("PEXPIRE", k, ttl_of(id)) end
    end
  end
end
return result("cursor", res[1])
