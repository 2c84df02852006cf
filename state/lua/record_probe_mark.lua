-- record_probe_mark: appends a probe result to a pipeline's chart marks and drops those older
-- than the window, keeping at most limit. KEYS[1] the list; ARGV: "t,ok", oldest time kept
-- (s), limit, TTL (ms). Returns kept (the marks in the list).
local n = call("RPUSH", KEYS[1], ARGV[1])
local oldest, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
while true do
  local head = call("LINDEX", KEYS[1], 0)
  if not head or tonumber(string.match(head, "^(%d+),")) >= oldest then break end
  call("LPOP", KEYS[1])
  n = n - 1
end
call("LTRIM", KEYS[1], -limit, -1)
call("PEXPIRE", KEYS[1], ARGV[4])
return {1, "kept", math.min(n, limit)}
