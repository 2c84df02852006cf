-- flood: a storm of new keys in a channel folds into one flood incident (state/flood.go). The
-- rate is a sliding minute: P:flood:<channel>:win holds the arrival times of the newest
-- limit+1 new keys; a run reads each channel's window and flood once, counts in memory (within
-- a run now stands still) and writes both back once (flush_floods). Needs lib, cache, dedup,
-- flood_end, and the script's now, now_s, flood_limit and flood_quiet.
local floods = {}
-- flood_state is channel's flood as this run knows it: id (false for none), ends (ms, 0 for
-- none); a flood whose time is up ends here.
local function flood_state(channel)
  local f = floods[channel]
  if f then return f end
  local v = call("HMGET", fk(channel), "id", "ended", "ends_at")
  f = {id = false, ends = 0, pushed = 0}
  if v[1] and v[2] ~= "1" then
    local ends = tonumber(v[3]) or 0
    if now >= ends then
      end_flood(channel, v[1], now)
    else
      f.id, f.ends = v[1], ends
    end
  end
  floods[channel] = f
  return f
end
-- flood_member returns the open flood incident of channel that lists key, for a resolved alert.
local function flood_member(channel, key)
  local fid = call("HGET", fk(channel), "id")
  if fid and call("ZSCORE", ik(fid, "flood:keys"), key) and inc(fid).v.status ~= "resolved" then return fid end
  return nil
end
-- count_new counts a new key in channel's minute and returns true when more than flood_limit
-- arrived within it. Then the rate stays above the limit until the oldest of those leaves the
-- minute, and the flood ends flood_quiet after that (moved later, to the half second).
local function count_new(channel)
  local f = flood_state(channel)
  if not f.win then f.win = call("LRANGE", fk(channel) .. ":win", 0, flood_limit) end
  f.pushed = f.pushed + 1
  local oldest = now
  if f.pushed <= flood_limit then oldest = tonumber(f.win[flood_limit + 1 - f.pushed]) end
  if not oldest or oldest <= now - 60000 then return false end
  local hot = oldest + 60000
  if hot + flood_quiet > f.ends + 500 then f.ends, f.hot = hot + flood_quiet, hot end
  return true
end
-- flood_open opens channel's flood incident (linked to its previous one) and returns its id
-- and the previous one's. Count, severity and the first thread update come with the alerts
-- that join (flood_join); last_flush now: the first thread update is a window after the root.
local function flood_open(channel)
  local seq = call("INCR", P .. ":seq:incident")
  local id = "INC-" .. seq
  local previous = call("HGET", fk(channel), "id") or ""
  local f = {"id", id, "key", "flood:" .. channel, "title", "", "severity", 0, "pipeline", "", "channel", channel,
    "status", "open", "first_seen", now_s, "last_seen", now_s, "count", 0, "previous", previous, "source", "streamwatch",
    "seq", "1", "delivered", "0", "pending", 0, "last_flush", now, "flood", "1", "flood_limit", flood_limit,
    "flood_quiet", flood_quiet, "distinct", 0, "firing", 0}
  call("HSET", ik(id), unpack(f))
  call("HSET", fk(channel), "id", id, "ended", "0", "since", now_s)
  call("ZADD", P .. ":open", now_s, id)
  open_in(channel, id, now_s, "open")
  call("XADD", P .. ":outbox", "*", "inc", id, "seq", "1", "kind", "root", "channel", channel)
  cache_new(id, f)
  cache[id].n, cache[id].zn = 0, 0
  flood_state(channel).id = id
  return id, previous
end
-- The rankings of a flood's label values and titles, counted in memory and written once a run.
local tallies, trims = {}, {}
local function tally(fid, z, member, weight)
  local k = ik(fid, z)
  local t = tallies[k]
  if not t then
    t = {}
    tallies[k] = t
  end
  t[member] = (t[member] or 0) + weight
end
-- flood_join records an alert in flood incident fid and returns true when its key is new to
-- the flood. The key is listed with its count while the list has room. Beyond, its occurrences
-- are counted as unlisted and a HyperLogLog estimates how many keys they were; whether one was
-- seen before is not known (a HyperLogLog is no membership test), so it counts as new. The
-- newest new keys wait in five rotating fields for the next thread update (the pump). The
-- rankings count every alert of the first flood_exact new keys, then one in flood_sample for
-- flood_sample: a big flood's ranking is an estimate, and costs a fifth of what joining would.
local function flood_join(fid, key, title, sev, detail, labels)
  local z = ik(fid, "flood:keys")
  local c = inc(fid)
  local v = c.v
  local fresh = false
  if v.keys_full ~= "1" then
    fresh = call("ZINCRBY", z, 1, key) == "1"
    if fresh then
      c.zn = (c.zn or call("ZCARD", z) - 1) + 1
      if c.zn >= max_flood_keys then set(fid, "keys_full", "1") end
    end
  elseif call("ZSCORE", z, key) then
    call("ZINCRBY", z, 1, key)
  else
    fresh = true
    call("PFADD", ik(fid, "flood:unlisted"), key)
    set(fid, "keys_unlisted", (v.keys_unlisted or 0) + 1)
  end
  duplicate(fid, sev, detail)
  if not fresh then return false end
  -- The root counts the flood's distinct alerts by severity, exactly: a counter a severity,
  -- written once a run.
  tally(fid, "flood:severity", sev, 1)
  local distinct = (v.distinct or 0) + 1
  set(fid, "distinct", distinct)
  set(fid, "pending_new", (v.pending_new or 0) + 1)
  set(fid, "newest" .. (distinct % 5), key)
  local weight = 1
  if distinct > flood_exact then
    if distinct % flood_sample ~= 0 then return true end
    weight = flood_sample
  end
  tally(fid, "flood:sources", title, weight)
  for lv in string.gmatch(labels, "[^\31]+") do tally(fid, "flood:labels", lv, weight) end
  -- Trimming the rankings costs a ZCARD: look every 50 new keys.
  if distinct % 50 == 0 then trims[fid] = true end
  return true
end
-- flush_floods writes what the run counted: each channel's window and flood end, the rankings.
local function flush_floods()
  for channel, f in pairs(floods) do
    if f.pushed > 0 and f.win then
      local w, t = fk(channel) .. ":win", {}
      for _ = 1, math.min(f.pushed, flood_limit + 1) do t[#t + 1] = now end
      call("LPUSH", w, unpack(t))
      call("LTRIM", w, 0, flood_limit)
    end
    if f.hot then
      call("HSET", fk(channel), "hot_until", f.hot, "ends_at", f.ends)
      call("ZADD", P .. ":floods", f.ends, channel)
    end
  end
  for k, t in pairs(tallies) do
    for member, weight in pairs(t) do call("ZINCRBY", k, weight, member) end
  end
  for fid in pairs(trims) do
    for _, z in ipairs({"flood:sources", "flood:labels"}) do
      local n = call("ZCARD", ik(fid, z))
      if n > 2 * flood_top then
        call("ZREMRANGEBYRANK", ik(fid, z), 0, n - flood_top - 1)
        if z == "flood:sources" then set(fid, "sources_trimmed", "1") end
      end
    end
  end
  floods, tallies, trims = {}, {}, {}
end
