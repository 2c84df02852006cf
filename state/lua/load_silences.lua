-- load_silences: reads the silences' version and the active label silences in one step.
-- ARGV: now. Returns a row per silence: version (the same in every row), silence, matchers,
-- until, starts (0: at once); with no active silence, one row with the version and empty
-- fields.
local version = call("GET", P .. ":silences:version") or "0"
local out = {5, "version", "silence", "matchers", "until", "starts"}
for _, sid in ipairs(call("ZRANGEBYSCORE", P .. ":silences", "(" .. ARGV[1], "+inf")) do
  local s = call("HMGET", P .. ":silence:" .. sid, "kind", "matchers", "until", "starts")
  if s[1] == "labels" then
    for _, v in ipairs({version, sid, s[2] or "", s[3] or "0", s[4] or "0"}) do out[#out + 1] = v end
  end
end
if #out == 6 then
  for _, v in ipairs({version, "", "", "0", "0"}) do out[#out + 1] = v end
end
return out
