-- complete: records a delivered outbox entry: the incident's delivered sequence, the root
-- message's ts and its lookup key, then acks and deletes the entry. An incident that expired
-- meanwhile is left alone (a write would bring back a part of it that never expires); a closed
-- one's root lookup expires with it.
-- ARGV: stream id, incident id, seq, root ts ("" unless a root was posted), channel.
local sid, id, seq, ts, ch = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local ttl = call("PTTL", ik(id))
if ttl ~= -2 then
  local done = tonumber(call("HGET", ik(id), "delivered") or "0")
  if seq > done then call("HSET", ik(id), "delivered", seq) end
  if ts ~= "" then
    -- A root posted elsewhere than the incident's channel (its channel archived) moves its list.
    local f = call("HMGET", ik(id), "root_channel", "channel", "status", "first_seen")
    moved(id, f[1] or f[2], ch, f[3], f[4])
    call("HSET", ik(id), "root_ts", ts, "root_channel", ch)
    if ttl > 0 then
      call("SET", P .. ":ts:" .. ch .. ":" .. ts, id, "PX", ttl)
    else
      call("SET", P .. ":ts:" .. ch .. ":" .. ts, id)
    end
  end
end
call("XACK", P .. ":outbox", "deliver", sid)
call("XDEL", P .. ":outbox", sid)
return result("done", 1)
