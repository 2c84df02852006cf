-- note_detect: posts detection's news into an incident's thread, or keeps it for the end of
-- the incident's silence. ARGV: id, event, detail, now. Returns status ("" when it is gone).
local id, ev, detail, now_s = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, window, recent = tonumber(now_s), 0, now_s
--%%
local st = call("HGET", ik(id), "status")
if not st then return result("status", "") end
if st ~= "resolved" then
  event(id, now_s, ev, "streamwatch", {"detail", string.sub(detail, 1, 1000)})
  detect_post(id, ev, "streamwatch", {"detail", detail})
  flush()
end
return result("status", st)
