-- record_probe: stores a probe result and returns the previous status. KEYS[1] the base.
-- ARGV: pipeline, status, record (JSON), limit, result time (ms, kept as "since" when the
-- status changes). Returns previous.
local P = KEYS[1]
local h = P .. ":probe:" .. ARGV[1]
local prev = call("HGET", h, "status") or ""
call("HSET", h, "status", ARGV[2], "last", ARGV[3])
if prev ~= ARGV[2] then call("HSET", h, "since", ARGV[5]) end
call("LPUSH", h .. ":history", ARGV[3])
call("LTRIM", h .. ":history", 0, tonumber(ARGV[4]) - 1)
return {1, "previous", prev}
