-- record: a batch of alerts (the group commit merges concurrent webhooks), each as if alone:
-- it joins the open incident of its dedup key or opens one (linked to the previous incident of
-- that key); when too many new incidents open in its channel, a new key joins the channel's
-- flood incident instead; with correlation on, a new key of a pipeline joins the pipeline's
-- open incident instead; an alert a label silence matches is recorded in the silence's list
-- and nowhere else. An alert is news for its thread only when it is new there, changed, fires
-- again or resolves; an identical re-send only counts. The whole batch runs as one script: a
-- storm sends thousands of alerts a second, and Redis spends more on starting a script than on
-- the few commands an alert needs.
-- ARGV: now, window, recent (now minus the window), auto_resolve ms, flood limit (0: off),
-- flood quiet ms, the silences' version the caller matched against, correlate ("1"), the
-- flood-exempt severity (an alert of this severity or a more severe one never joins a flood;
-- 0: none is exempt); then
-- arg_count values per alert (lua.go). Values stay strings where the script only passes them
-- on: Lua converts a number to a string for Redis with a printf.
-- Returns a row per alert: id, outcome, previous, keep; or stale = "1" when the silences changed
-- since the caller read them (nothing is recorded).
local now_s, recent = ARGV[1], ARGV[3]
local now, window, ar = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
local flood_limit, flood_quiet = tonumber(ARGV[5]), tonumber(ARGV[6])
local silences_version, correlate = ARGV[7], ARGV[8] == "1"
local flood_exempt = tonumber(ARGV[9])
--%%
if (call("GET", P .. ":silences:version") or "0") ~= silences_version then return result("stale", "1") end

-- resolved records a resolved alert of incident id: the first resolution is news while others
-- fire; the last one marks the incident all resolved (and schedules its auto-resolve).
local function resolved(id, fp, source, detail, digest)
  local prev = call("HGET", ik(id, "alerts"), fp)
  local was, seen, d = alert_state(prev)
  note_alert(id, fp, "r", digest, prev, was, seen, d)
  -- Alertmanager repeats resolved alerts in a group's notifications: only the first is news.
  if was == "r" then return end
  event(id, now_s, "alert_resolved", source, {"detail", detail, "fp", fp})
  local v = inc(id).v
  -- With alerts left out of a full list, nobody knows whether all resolved: a person decides.
  if v.all_resolved == "1" or (v.alerts_unlisted or 0) > 0 or firing_of(id) > 0 then
    if v.all_resolved ~= "1" and makes_news(id) then
      add_news(id, "resolved", {d = detail, fp = fp})
      schedule(id)
    end
    return
  end
  set(id, "all_resolved", "1")
  local at = 0
  if detect_done(id) then
    -- streamwatch opened it, its symptom recovered, nobody acknowledged it: it resolves now
    -- (the auto-resolve pass), not auto_resolve_after from now.
    at = now
  elseif ar > 0 then
    at = now + ar
  end
  if at > 0 then call("ZADD", P .. ":autoresolve", at, id) end
  event(id, now_s, "all_resolved", source, {"detail", detail})
  if (tonumber(v.silenced_until) or 0) > now then
    -- Silenced: the thread hears of it when the silence ends.
    add_news(id, "all_resolved", {d = detail})
    schedule(id)
  else
    enqueue(id, "event", "all_resolved", source, {"detail", detail, "since", at})
  end
end

-- new_key records a firing alert whose key has no open incident: it opens the key's own
-- incident, or joins the channel's flood. streamwatch's own symptoms (one per pipeline) and
-- alerts as severe as flood_exempt or more neither count nor join a flood: a SEV1 amid 500
-- warnings gets a root and an escalation of its own.
local function new_key(key, h, title, sev, pipeline, channel, source, detail, labels, links)
  if flood_limit > 0 and not own_source(source) and not (sev >= 1 and sev <= flood_exempt) then
    local fid = flood_state(channel).id
    if fid then
      if flood_join(fid, key, title, sev, detail, labels) then
        count_new(channel)
        return fid, "flooded", ""
      end
      return fid, "duplicate", ""
    end
    if count_new(channel) then
      local previous
      fid, previous = flood_open(channel)
      flood_join(fid, key, title, sev, detail, labels)
      return fid, "flood_opened", previous
    end
  end
  local id, previous = open(key, h, title, sev, pipeline, channel, source, links)
  -- An incident of a pipeline waits for its automatic diagnosis (claim_diagnoses.lua).
  if pipeline ~= "" then call("ZADD", P .. ":diagnose", now, id) end
  return id, "opened", previous
end

local out = {4, "id", "outcome", "previous", "keep"}
for o = arg_first, #ARGV, arg_count do
  local key, h, fp, status = ARGV[o + arg_key], ARGV[o + arg_hash], ARGV[o + arg_fp], ARGV[o + arg_status]
  local sev = ARGV[o + arg_severity]
  -- a severity is one digit: no strtod for it
  if #sev == 1 then sev = string.byte(sev) - 48 else sev = tonumber(sev) end
  local title, pipeline, channel = ARGV[o + arg_title], ARGV[o + arg_pipeline], ARGV[o + arg_channel]
  local source, detail, digest, silence = ARGV[o + arg_source], ARGV[o + arg_detail], ARGV[o + arg_digest], ARGV[o + arg_silence]
  -- What the alert list keeps of an alert: its digest, then its severity (a re-send that only
  -- raised the severity is no identical one).
  local ident = digest .. ARGV[o + arg_severity]
  local id = call("GET", dedup_of(h))
  local outcome, previous, keep = "duplicate", "", ""
  if status == "resolved" then
    id = id or flood_member(channel, key)
    if id then
      resolved(id, fp, source, detail, ident)
      outcome = "resolved"
    else
      id, outcome = "", "ignored"
    end
  elseif silence ~= "" and silenced(silence, key, fp, title, now) then
    id, outcome, previous = "", "silenced", silence
  else
    local prev
    if id then
      prev = call("HGET", ik(id, "alerts"), fp)
      local st, seen, d = alert_state(prev)
      if st == "f" and d == ident and not cache[id] then
        quick_dup(id, detail)
      else
        local news, changed = news_of(id, digest, prev, st, d)
        duplicate(id, sev, detail)
        if news then alert_news(id, news, fp, source, detail, ARGV[o + arg_links]) end
        if changed then keep = "1" end
      end
      note_alert(id, fp, "f", ident, prev, st, seen, d)
    else
      local cid = correlate and correlate_target(pipeline, source)
      if cid then
        correlate_join(cid, key, h, fp, title, sev, source, pipeline)
        id, outcome = cid, "correlated"
      else
        id, outcome, previous = new_key(key, h, title, sev, pipeline, channel, source, detail, ARGV[o + arg_labels], ARGV[o + arg_links])
        if correlate and outcome == "opened" then pipe_index(pipeline, source, id) end
      end
      if outcome == "opened" or outcome == "correlated" then keep = "1" end
      if outcome ~= "opened" and outcome ~= "flood_opened" then prev = call("HGET", inc(id).alerts, fp) end
      note_alert(id, fp, "f", ident, prev, alert_state(prev))
    end
  end
  out[#out + 1] = id
  out[#out + 1] = outcome
  out[#out + 1] = previous
  out[#out + 1] = keep
end
flush_floods()
flush()
flush_quick()
return out
