-- correlation: one incident per pipeline symptom (alerts.correlate_pipeline; state/detect.go).
-- P:pipe:<pipeline> names the open incident streamwatch opened for a pipeline ("sw") and the
-- oldest open incident an alert opened ("alert"). Needs lib, cache, dedup, news, and the
-- script's now and now_s.
local function own_source(source) return source == "detect" or source == "probe" or source == "heartbeat" end
local function pk(pipeline) return P .. ":pipe:" .. pipeline end
-- pipe_open is the open (or acknowledged) incident the pipeline's index names under kind.
local function pipe_open(pipeline, kind)
  local id = call("HGET", pk(pipeline), kind)
  if not id then return nil end
  local st = inc(id).v.status
  if st == "open" or st == "acknowledged" then return id end
  return nil
end
-- correlate_target is the incident a new key of pipeline joins, or nil: an alert joins the one
-- streamwatch opened; streamwatch's own symptom joins that one or the alert's.
local function correlate_target(pipeline, source)
  if pipeline == "" then return nil end
  local id = pipe_open(pipeline, "sw")
  if id or not own_source(source) then return id end
  return pipe_open(pipeline, "alert")
end
-- pipe_index records id, just opened, in its pipeline's index, unless an open one is there.
local function pipe_index(pipeline, source, id)
  if pipeline == "" then return end
  local kind = "alert"
  if own_source(source) then kind = "sw" end
  if not pipe_open(pipeline, kind) then call("HSET", pk(pipeline), kind, id) end
end
-- detect_post posts streamwatch's news of a pipeline (a join, a symptom, a recovery) in the
-- incident's thread; while the incident is silenced it waits with the alerts' news for the
-- silence's end, one item of the update that goes out then. f are its fields (name, value, …).
local function detect_post(id, ev, actor, f)
  local v = inc(id).v
  if (v.silenced_until or 0) > now then
    local item = {}
    for i = 1, #f, 2 do
      local name = f[i]
      if name == "detail" then name = "d" end
      item[name] = f[i + 1]
    end
    add_news(id, ev, item)
    if (v.pending or 0) == 0 then
      set(id, "pending", 1)
      set(id, "pending_since", now_s)
    end
    return
  end
  enqueue(id, "event", ev, actor, f)
end
-- correlate_join makes open incident id absorb a new key: later duplicates and the key's
-- resolution go there; the timeline and the thread say why (the pipeline, since when the
-- incident is open).
local function correlate_join(id, key, h, fp, title, sev, source, pipeline)
  call("SET", dedup_of(h), id)
  call("SADD", ik(id, "keys"), key)
  local v = inc(id).v
  local joined = v.joined or 0
  set(id, "last_seen", now_s)
  set(id, "count", (v.count or 0) + 1)
  set(id, "joined", joined + 1)
  on_firing(id, sev)
  if joined < max_joined then call("HSET", ik(id), "jt:" .. fp, title) end
  local f = {"title", title, "pipeline", pipeline, "since", v.first_seen or ""}
  event(id, now_s, "correlated", source, f)
  detect_post(id, "correlated", source, f)
end
-- detect_done: streamwatch opened the incident, its symptom recovered and nobody acknowledged
-- it; once every alert resolves it resolves.
local function detect_done(id)
  local v = inc(id).v
  return own_source(v.source) and v.status == "open" and v.detect_state == "recovered"
end
