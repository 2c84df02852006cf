-- cache: the incidents a script run touches, read once and written once, when the run ends
-- (flush): a storm's batch names the same few incidents again and again, and each read and
-- write costs Redis more than the few fields it moves. A first touch reads hot_fields (what a
-- duplicate, a resolution or a flood's join needs); the other fields come with a second read
-- the first time one is wanted.
-- Numbers are converted once, at the read. Fields outside both lists are read and written
-- directly. A script that uses the cache calls flush() before it returns. Needs lib.
local hot_fields = {"id", "count", "pending", "severity", "severity_by", "all_resolved", "last_flush",
  "silenced_until", "flood", "quiet", "first_seen", "firing", "alerts_unlisted", "distinct", "pending_new",
  "keys_full", "keys_unlisted", "news"}
local cold_fields = {"status", "source", "detect_state", "joined", "channel"}
local numeric = {count = true, pending = true, severity = true, last_flush = true, silenced_until = true,
  firing = true, joined = true, alerts_unlisted = true, news = true, distinct = true, pending_new = true,
  keys_unlisted = true}
local cache = {}
local function load(id, v, fields)
  local vals = call("HMGET", ik(id), unpack(fields))
  for i = 1, #fields do
    local name, x = fields[i], vals[i]
    if rawget(v, name) == nil then
      if numeric[name] and x then x = tonumber(x) or false end
      v[name] = x
    end
  end
end
local cold = {}
for _, name in ipairs(cold_fields) do cold[name] = true end
-- inc is incident id's cache entry: v its fields (false when unset), d those the run changed,
-- alerts the key of its alert list.
local function inc(id)
  local c = cache[id]
  if c then return c end
  local v = setmetatable({}, {__index = function(t, name)
    if cold[name] and rawget(t, "status") == nil then
      load(id, t, cold_fields)
      return rawget(t, name)
    end
    return nil
  end})
  load(id, v, hot_fields)
  c = {v = v, d = {}, alerts = ik(id, "alerts")}
  cache[id] = c
  return c
end
-- set changes a field; a change of severity moves the incident to its new severity's index
-- when the run ends (sev_was: the severity it is indexed under; false: none yet).
local function set(id, name, value)
  local c = inc(id)
  if name == "severity" and c.sev_was == nil then c.sev_was = tonumber(c.v.severity) or 0 end
  c.v[name] = value
  c.d[name] = true
end
-- cache_new puts an incident the run just wrote (fields as name, value, …) in the cache.
local function cache_new(id, fields)
  local v = {}
  for _, name in ipairs(hot_fields) do v[name] = false end
  for _, name in ipairs(cold_fields) do v[name] = false end
  for i = 1, #fields, 2 do v[fields[i]] = fields[i + 1] end
  cache[id] = {v = v, d = {}, alerts = ik(id, "alerts"), sev_was = false}
end
-- flush writes what the run changed, one HSET an incident, and moves a new severity's index. An incident gone meanwhile is left
-- alone: a write would bring a part of it back.
local function flush()
  for id, c in pairs(cache) do
    if c.v.id then
      local t = {}
      for name in pairs(c.d) do
        local val = c.v[name]
        if val == false or val == nil then val = "" end
        t[#t + 1] = name
        t[#t + 1] = val
      end
      if #t > 0 then call("HSET", ik(id), unpack(t)) end
      local sev = tonumber(c.v.severity) or 0
      if c.sev_was ~= nil and c.sev_was ~= sev then
        if c.sev_was then call("ZREM", sev_index(c.sev_was), id) end
        call("ZADD", sev_index(sev), index_score(id, c.v.first_seen), id)
      end
    end
  end
  cache = {}
end
