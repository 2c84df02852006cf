-- update_detect: sets the symptom an incident's root shows and queues a root edit when it
-- changed; with a title, the incident's title too (the incidents detection opened).
-- ARGV: id, line, title ("": keep), now. Returns status, merged_into, edited.
local id, line, title, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local v = call("HMGET", ik(id), "status", "merged_into", "detect", "title", "detect_state", "silenced_until", "pending")
if not v[1] then return result("status", "", "merged_into", "", "edited", "0") end
if v[1] == "resolved" then return result("status", "resolved", "merged_into", v[2] or "", "edited", "0") end
if v[3] == line and (title == "" or v[4] == title) and v[5] == "active" then
  return result("status", v[1], "merged_into", "", "edited", "0")
end
call("HSET", ik(id), "detect", line, "detect_state", "active")
if title ~= "" then call("HSET", ik(id), "title", title) end
if (tonumber(v[6]) or 0) > now then
  -- Silenced: the root is edited when the silence ends (its pending update).
  if (tonumber(v[7]) or 0) == 0 then call("HSET", ik(id), "pending", 1, "pending_since", now) end
  return result("status", v[1], "merged_into", "", "edited", "0")
end
enqueue(id, "update")
return result("status", v[1], "merged_into", "", "edited", "1")
