-- save_detect: writes a pipeline's detection record unless a later round wrote one first (two
-- replicas whose rounds overlap). KEYS[1] the record. ARGV: round, state, observation, publish.
-- Returns written ("1" when it wrote).
local k = KEYS[1]
local round = tonumber(ARGV[1])
if (tonumber(call("HGET", k, "round")) or 0) >= round then return result("written", "0") end
call("HSET", k, "round", ARGV[1], "state", ARGV[2], "obs", ARGV[3], "publish", ARGV[4])
return result("written", "1")
