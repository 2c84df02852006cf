-- merge: FROM's alerts, keys and count move into INTO; FROM closes. ARGV: from, into, actor,
-- now, retention ms. Returns result and, for notfound or resolved, incident.
local from, into, actor, now, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local now_s, window, recent = ARGV[4], 0, ARGV[4]
--%%
if from == into then return result("result", "same", "incident", from) end
local sf = call("HGET", ik(from), "status")
local si = call("HGET", ik(into), "status")
if not sf then return result("result", "notfound", "incident", from) end
if not si then return result("result", "notfound", "incident", into) end
if sf == "resolved" then return result("result", "resolved", "incident", from) end
if si == "resolved" then return result("result", "resolved", "incident", into) end
local alerts = call("HGETALL", ik(from, "alerts"))
for i = 1, #alerts, 2 do
  local fp, s = alerts[i], alerts[i + 1]
  local st, _, d = alert_state(s)
  -- Merged alerts keep their state; a later re-send of one is news no more than before.
  local prev = call("HGET", ik(into, "alerts"), fp)
  if prev then
    call("HSET", ik(into, "alerts"), fp, s)
    local was = alert_state(prev)
    if was ~= st then
      local delta = 1
      if st == "r" then delta = -1 end
      set(into, "firing", firing_of(into) + delta)
    end
  else
    note_alert(into, fp, st, d, nil, nil, "", "")
  end
end
local contexts = call("HGETALL", ik(from, "context"))
for i = 1, #contexts, 2 do
  if call("HLEN", ik(into, "context")) < max_alerts then call("HSETNX", ik(into, "context"), contexts[i], contexts[i + 1]) end
end
local unlisted = tonumber(call("HGET", ik(from), "alerts_unlisted") or "0")
if unlisted > 0 then set(into, "alerts_unlisted", (tonumber(inc(into).v.alerts_unlisted) or 0) + unlisted) end
for _, k in ipairs(closing_keys(from, ttl)) do
  call("SET", dedup(k), into)
  call("SADD", ik(into, "keys"), k)
end
local n = tonumber(call("HGET", ik(from), "count") or "0")
set(into, "count", (tonumber(inc(into).v.count) or 0) + n)
local sevf = tonumber(call("HGET", ik(from), "severity") or "0")
local sevi = tonumber(inc(into).v.severity) or 0
local from_sev = sevf
-- A severity a person set on INTO stays.
if inc(into).v.severity_by then sevf = sevi end
local mf = call("HGET", ik(into), "merged_from") or ""
if mf ~= "" then mf = mf .. "," end
set(into, "severity", more_severe(sevi, sevf))
set(into, "last_seen", now)
call("HSET", ik(into), "merged_from", mf .. from)
call("HSET", ik(from), "status", "resolved", "merged_into", into, "resolved_by", actor, "resolved_at", now)
call("ZREM", P .. ":open", from)
local fc = call("HMGET", ik(from), "channel", "root_channel")
closed_in(fc[2] or fc[1], from, sf, from_sev)
call("ZREM", P .. ":autoresolve", from)
close_flood(from)
drop_silence(from, now)
flush()
event(from, now, "merged_into", actor, {"incident", into})
event(into, now, "merged_from", actor, {"incident", from, "count", n})
enqueue(from, "event", "merged_into", actor, {"incident", into})
enqueue(into, "event", "merged_from", actor, {"incident", from, "count", n})
retire(from, ttl)
return result("result", "ok", "incident", "")
