-- news: an incident's thread hears of an alert only when the alert brings something new (see
-- state/news.go); news waits in a short list under the incident until its coalesced update
-- (the pump). Needs lib, cache, dedup, and the script's now, now_s and window.
local news_events = {joined = "alert_joined", again = "alert_firing_again", labels = "alert_changed",
  annotations = "alert_changed"}
-- makes_news is false for incidents whose alerts make no news: floods (they report the keys
-- that join) and quiet incidents (a failing probe reports changes itself).
local function makes_news(id)
  local v = inc(id).v
  return v.flood ~= "1" and v.quiet ~= "1"
end
-- add_news keeps a news item for the incident's next update: its kind and fields (a table,
-- encoded as JSON; the pump hands the list over as it is).
local function add_news(id, kind, fields)
  fields.k = kind
  call("RPUSH", ik(id, "news"), cjson.encode(fields))
  call("LTRIM", ik(id, "news"), -max_news, -1)
  set(id, "news", (inc(id).v.news or 0) + 1)
end
-- schedule gives an incident with news but no occurrence a coalesced update, as a duplicate does.
local function schedule(id)
  local v = inc(id).v
  if (v.pending or 0) > 0 then return end
  set(id, "pending", 1)
  set(id, "pending_since", now_s)
  if (v.silenced_until or 0) > now then return end
  local due = (v.last_flush or 0) + window
  if due < now then due = now end
  call("ZADD", P .. ":due", "NX", due, id)
end
-- news_of says what a firing alert joining open incident id brings ("joined", "again",
-- "labels", "annotations", or false for an identical re-send), and whether its context
-- (labels, annotations) is new or changed. prev is its listed state (nil: not listed), st and d
-- its status and the digest stored with it (the alert's digest, then its severity).
local function news_of(id, digest, prev, st, d)
  local v = inc(id).v
  if v.flood == "1" then return false, false end
  -- Beyond a full list an alert cannot be told new from seen: it is counted, not announced.
  if not prev and listed(id) >= max_alerts then return false, false end
  local changed = not prev or (d ~= "" and string.sub(d, 1, #digest) ~= digest)
  -- A quiet incident (a failing probe) reports changes itself; the alerts of the webhook that
  -- opened an incident are its opening, which the root shows.
  if v.quiet == "1" or v.first_seen == now_s then return false, changed end
  if not prev then return "joined", true end
  if st == "r" then return "again", changed end
  if not changed then return false, false end
  if string.sub(d, 1, 8) ~= string.sub(digest, 1, 8) then return "labels", true end
  return "annotations", true
end
-- alert_news records news of an alert in the timeline and for the next update; an incident
-- opened by an alert without links takes the first links an alert brings.
local function alert_news(id, kind, fp, source, detail, links)
  event(id, now_s, news_events[kind], source, {"change", kind, "detail", detail, "fp", fp})
  add_news(id, kind, {d = detail, fp = fp})
  if links ~= "" then call("HSETNX", ik(id), "links", links) end
end
