-- claim_diagnoses: hands out the incidents waiting for their automatic diagnosis (record.lua's
-- new_key queues each incident it opens for a pipeline). A claim holds an incident for lease
-- ms: the replica that claimed it diagnoses it and calls done (ZREM); one that dies leaves it
-- to be claimed again when the lease ends. An incident that is gone is dropped.
-- ARGV: now, lease ms, at most. Returns rows of incident, pipeline.
local now, lease, most = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local q = P .. ":diagnose"
local due = call("ZRANGEBYSCORE", q, "-inf", now, "LIMIT", 0, most)
local out = {2, "incident", "pipeline"}
for _, id in ipairs(due) do
  local pipeline = call("HGET", ik(id), "pipeline")
  if pipeline and pipeline ~= "" then
    call("ZADD", q, now + lease, id)
    out[#out + 1] = id
    out[#out + 1] = pipeline
  else
    call("ZREM", q, id)
  end
end
return out
