-- note: posts a note into an incident's thread, in sequence with its other messages. With a
-- non-empty once flag, only the first note carrying that flag is posted. The timeline keeps
-- the summary, or the detail's beginning when there is none.
-- ARGV: id, event, actor, detail, now, once, summary. Returns result.
local id, ev, actor, detail, now, once, summary = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[7]
if call("EXISTS", ik(id)) == 0 then return result("result", "notfound") end
if once ~= "" then
  if call("HSETNX", ik(id), "once:" .. once, now) == 0 then return result("result", "skipped") end
end
if summary == "" then summary = detail end
-- A person's note (a remediation, a watch they started) counts as touching the incident:
-- an acknowledgement that expires (escalate.lua) waits from it.
if actor ~= "streamwatch" and actor ~= "" and actor ~= "probe" then call("HSET", ik(id), "touched_at", now) end
event(id, now, ev, actor, {"detail", string.sub(summary, 1, 1000)})
enqueue(id, "event", ev, actor, {"detail", detail})
return result("result", "ok")
