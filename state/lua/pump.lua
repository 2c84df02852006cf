-- pump: moves due coalesced updates into the outbox, each with a snapshot of what it reports,
-- so that a retried delivery posts the same text: a flood's newest keys, or an incident's news
-- (without news the update only edits the root). A silenced incident's update waits for the
-- silence's end. ARGV: now, limit. Returns moved: how many were due.
local now = tonumber(ARGV[1])
local ids = call("ZRANGEBYSCORE", P .. ":due", "-inf", now, "LIMIT", 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  call("ZREM", P .. ":due", id)
  local v = call("HMGET", ik(id), "pending", "pending_since", "last_detail", "flood", "pending_new", "id", "distinct",
    "silenced_until", "news")
  local n, since, detail = tonumber(v[1] or "0"), v[2] or "0", v[3] or ""
  -- (An incident that expired meanwhile has nothing to tell: writing would bring it back.)
  if v[6] and (tonumber(v[8]) or 0) <= now then
    call("HSET", ik(id), "pending", 0, "last_flush", now)
    if v[4] == "1" then
      -- A flood's update names the newest keys that joined it (flood_join's rotating fields).
      local fresh, d, names = tonumber(v[5] or "0"), tonumber(v[7] or "0"), {}
      for i = 0, math.min(fresh, 5) - 1 do names[#names + 1] = "newest" .. ((d - i) % 5) end
      local newest = {}
      if #names > 0 then newest = call("HMGET", ik(id), unpack(names)) end
      call("HSET", ik(id), "pending_new", 0)
      local keys = {}
      for _, k in ipairs(newest) do if k then keys[#keys + 1] = k end end
      enqueue(id, "flush", "flood", "", {"keys", cjson.encode(keys), "count", n, "since", since, "distinct", fresh})
    elseif (tonumber(v[9]) or 0) > 0 then
      local news = call("LRANGE", ik(id, "news"), 0, -1)
      call("DEL", ik(id, "news"))
      call("HSET", ik(id), "news", 0)
      enqueue(id, "flush", "news", "", {"news", "[" .. table.concat(news, ",") .. "]", "count", n, "since", since,
        "distinct", tonumber(v[9])})
    else
      enqueue(id, "flush", "", "", {"detail", detail, "count", n, "since", since})
    end
  end
end
return result("moved", #ids)
