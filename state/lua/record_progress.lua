-- record_progress: appends one sampling round's progress samples and folds what leaves the
-- full-resolution hour into minute points (progress.go says why and how). KEYS[1] the base;
-- ARGV: full resolution (s), window (s), TTL (ms), then pipeline and sample ("t,w,g,o,b,c")
-- pairs. Returns recorded (the samples appended; a sample older than its list's newest, or
-- not a sample, is dropped).
local P, horizon, window, ttl = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local function parse(s)
  local t, w, g, o, b, c = string.match(s, "^(%d+),(%-?%d*),(%-?%d*),(%-?%d*),(%-?%d*),(%-?%d*)$")
  if not t then return nil end
  t = tonumber(t)
  local ct = nil
  if c ~= "" then ct = t - tonumber(c) end
  return t, tonumber(w), tonumber(g), tonumber(o), tonumber(b), ct
end
local function num(v)
  if v == nil then return "" end
  return string.format("%d", v)
end
local function mx(a, b)
  if a == nil then return b end
  if b == nil or a > b then return a end
  return b
end
local function enc(t, w, g, o, b, ct)
  local c = ""
  if ct ~= nil then c = num(t - ct) end
  return num(t) .. "," .. num(w) .. "," .. num(g) .. "," .. num(o) .. "," .. num(b) .. "," .. c
end
local recorded = 0
for i = 4, #ARGV, 2 do
  local raw = P .. ":progress:" .. ARGV[i]
  local mins = raw .. ":minutes"
  local s = ARGV[i + 1]
  local t = parse(s)
  local last = call("LINDEX", raw, -1)
  -- a round that finished after a later one is dropped: the list stays in time order
  if t and (not last or parse(last) < t) then
    call("RPUSH", raw, s)
    recorded = recorded + 1
    while true do
      local head = call("LINDEX", raw, 0)
      if not head then break end
      local ht, hw, hg, ho, hb, hc = parse(head)
      if ht > t - horizon then break end
      call("LPOP", raw)
      local m = ht - ht % 60
      local tail = call("LINDEX", mins, -1)
      local mt, mw, mg, mo, mb, mc
      if tail then mt, mw, mg, mo, mb, mc = parse(tail) end
      if mt == m then
        call("LSET", mins, -1, enc(m, mx(mw, hw), mx(mg, hg), mx(mo, ho), mx(mb, hb), mx(mc, hc)))
      elseif not mt or mt < m then
        call("RPUSH", mins, enc(m, hw, hg, ho, hb, hc))
      end
    end
    while true do
      local head = call("LINDEX", mins, 0)
      if not head or parse(head) > t - window then break end
      call("LPOP", mins)
    end
  end
  call("PEXPIRE", raw, ttl)
  call("PEXPIRE", mins, ttl)
end
return {1, "recorded", recorded}
