-- keep_context: stores the contexts (labels, annotations, links) of the alerts the record
-- script found new or changed, within the incident's alert list's bound, with the incident's
-- TTL; an incident that is gone is left alone. ARGV: id, fingerprint, context (JSON) per alert.
-- Returns kept: how many it stored.
local kept, seen = 0, {}
for i = 1, #ARGV, 3 do
  local id, fp, c = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local s = seen[id]
  if not s then
    s = {ok = call("EXISTS", ik(id)) == 1}
    if s.ok then s.n, s.ttl = call("HLEN", ik(id, "context")), call("PTTL", ik(id)) end
    seen[id] = s
  end
  if c ~= "" and s.ok then
    local k = ik(id, "context")
    if s.n < max_alerts or call("HEXISTS", k, fp) == 1 then
      s.n = s.n + call("HSET", k, fp, c)
      kept = kept + 1
      s.kept = true
    end
  end
end
for id, s in pairs(seen) do
  if s.kept and s.ttl > 0 then call("PEXPIRE", ik(id, "context"), s.ttl) end
end
return result("kept", kept)
