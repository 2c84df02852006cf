-- recover_detect: marks detection's alert of an incident resolved, posts the recovery once in
-- the thread (with what still fires) and, when the incident may close, queues its resolution.
-- ARGV: id, fingerprint, note, now. Returns status, merged_into, resolves, firing, names (JSON).
local id, fp, note, now_s = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, window, recent = tonumber(now_s), 0, now_s
--%%
local v = call("HMGET", ik(id), "status", "merged_into", "alerts_unlisted")
if not v[1] then return result("status", "", "merged_into", "", "resolves", "0", "firing", 0, "names", "[]") end
if v[1] == "resolved" then return result("status", "resolved", "merged_into", v[2] or "", "resolves", "0", "firing", 0, "names", "[]") end
local prev = call("HGET", ik(id, "alerts"), fp)
if prev then note_alert(id, fp, "r", "", prev, alert_state(prev)) end
set(id, "detect_state", "recovered")
call("HSET", ik(id), "detect", note)
local firing = firing_of(id)
if (tonumber(v[3]) or 0) > 0 then firing = firing + 1 end -- alerts beyond the list: nobody knows; a person decides
-- The titles of the alerts that joined by correlation and still fire.
local names, h = {}, call("HGETALL", ik(id))
for i = 1, #h, 2 do
  local jfp = string.match(h[i], "^jt:(.*)$")
  if jfp and alert_state(call("HGET", ik(id, "alerts"), jfp)) == "f" then names[#names + 1] = h[i + 1] end
end
table.sort(names)
local fields = {"detail", note, "firing", firing, "names", cjson.encode(names)}
event(id, now_s, "recovered", "streamwatch", {"detail", string.sub(note, 1, 1000), "firing", firing, "names", cjson.encode(names)})
detect_post(id, "recovered", "streamwatch", fields)
local resolves = "0"
if firing == 0 and detect_done(id) then
  set(id, "all_resolved", "1")
  call("ZADD", P .. ":autoresolve", now, id)
  resolves = "1"
end
flush()
return result("status", v[1], "merged_into", "", "resolves", resolves, "firing", firing, "names", cjson.encode(names))
