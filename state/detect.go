package state

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// Detection: what streamwatch finds on its own sampling rounds, the incidents it
// opens from that, and one incident per pipeline symptom.
//
// Correlation (alerts.correlate_pipeline) is an index per pipeline, P:pipe:<pipeline>, kept by
// the record script: "sw" names the open incident streamwatch opened for the pipeline (its
// source is detect or probe), "alert" the oldest open incident an alert opened. A new key of
// the pipeline (no open incident of its own) joins one of them instead of opening another: an
// alert joins the one streamwatch opened; streamwatch's own symptom joins either. The join
// maps the key to that incident (later duplicates and its resolution go there), and is in the
// incident's timeline and thread with its reason. An entry whose incident closed is ignored,
// so closing needs no bookkeeping.
//
// A detection incident's root names the symptom with its numbers (the incident's "detect"
// field); every round edits the root (KindUpdate), never the thread. Recovery posts once in
// the thread and, when streamwatch opened the incident, nobody acknowledged it and every alert
// that joined it resolved, queues its resolution with the deliverer's auto-resolve pass; an
// alert that resolves later does the same (detect_done in the record script).

// Source names streamwatch's own incidents use in AlertRecord.Source.
const (
	SourceDetect = "detect"
	SourceProbe  = "probe"
)

// maxJoinedNames is how many joined alerts an incident names (by title) in its recovery note;
// the others are counted.
const maxJoinedNames = 20

// luaCorrelate is the correlation and detection part of the record script and of the detection
// scripts below. It needs luaCommon and, for correlate_join, now_s declared before it.
var luaCorrelate = `
local function own_source(source) return source == "detect" or source == "probe" end
local function pk(pipeline) return P .. ":pipe:" .. pipeline end
-- pipe_open is the open (or acknowledged) incident the pipeline's index names under kind.
local function pipe_open(pipeline, kind)
  local id = redis.call("HGET", pk(pipeline), kind)
  if not id then return nil end
  local st = redis.call("HGET", ik(id), "status")
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
  if not pipe_open(pipeline, kind) then redis.call("HSET", pk(pipeline), kind, id) end
end
-- utc writes a time in ms as Go's "2006-01-02 15:04:05Z" (days to a civil date: H. Hinnant).
local function utc(ms)
  local t = math.floor(ms / 1000)
  local days, s = math.floor(t / 86400), t % 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp + 3
  if mp >= 10 then m = mp - 9 end
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format("%04d-%02d-%02d %02d:%02d:%02dZ", y, m, d, math.floor(s / 3600), math.floor(s / 60) % 60, s % 60)
end
-- detect_post posts streamwatch's news of a pipeline (a join, a symptom, a recovery) in the
-- incident's thread; while the incident is silenced it waits with the alerts' news
-- for the silence's end, one line of the update that goes out then.
local function detect_post(id, ev, actor, detail)
  local v = redis.call("HMGET", ik(id), "silenced_until", "pending")
  if (tonumber(v[1]) or 0) > tonumber(now_s) then
    redis.call("RPUSH", ik(id, "news"), ev .. "\31" .. string.gsub(detail, "\n", " "))
    redis.call("LTRIM", ik(id, "news"), -` + strconv.Itoa(maxNews) + `, -1)
    redis.call("HINCRBY", ik(id), "news", 1)
    if (tonumber(v[2]) or 0) == 0 then redis.call("HSET", ik(id), "pending", 1, "pending_since", now_s) end
    return
  end
  enqueue(id, "event", ev, actor, detail, 0, 0)
end
-- correlate_join makes open incident id absorb a new key: later duplicates and the key's
-- resolution go there; the timeline and the thread say why.
local function correlate_join(id, key, h, fp, title, sev, source, pipeline)
  redis.call("SET", P .. ":dedup:" .. h, id)
  redis.call("SADD", ik(id, "keys"), key)
  local v = redis.call("HMGET", ik(id), "first_seen", "severity", "count", "joined", "all_resolved", "severity_by")
  local joined = tonumber(v[4]) or 0
  local set = {"last_seen", now_s, "count", (tonumber(v[3]) or 0) + 1, "joined", joined + 1}
  on_firing(set, id, tonumber(v[2]) or 0, sev, v[6], v[5])
  if joined < ` + strconv.Itoa(maxJoinedNames) + ` then
    set[#set + 1] = "jt:" .. fp
    set[#set + 1] = title
  end
  redis.call("HSET", ik(id), unpack(set))
  local detail = title .. ": same pipeline (" .. pipeline .. "), open since " .. utc(tonumber(v[1]) or 0)
  event(id, now_s, "correlated", source, detail)
  detect_post(id, "correlated", source, detail)
end
-- detect_done: streamwatch opened the incident, its symptom recovered and nobody acknowledged
-- it; once every alert resolves it resolves.
local function detect_done(id)
  local v = redis.call("HMGET", ik(id), "source", "status", "detect_state")
  return own_source(v[1]) and v[2] == "open" and v[3] == "recovered"
end
`

// DetectRecord is what detection keeps of a pipeline between rounds, as the pipeline package
// encodes it: its state (hysteresis, incident), its last observation (the progress metrics,
// `status`) and publish_group's state.
type DetectRecord struct {
	Round       int64 // Unix ms of the round that wrote it
	State       []byte
	Observation []byte
	Publish     []byte
}

func (s *Store) detectKey(pipeline string) string { return s.key("detect", pipeline) }

// saveDetectScript writes a DetectRecord unless a later round wrote one first (two replicas
// whose rounds overlap). ARGV: round, state, observation, publish. Returns 1 when written.
var saveDetectScript = redis.NewScript(`
local k = KEYS[1]
local round = tonumber(ARGV[1])
if (tonumber(redis.call("HGET", k, "round")) or 0) >= round then return 0 end
redis.call("HSET", k, "round", ARGV[1], "state", ARGV[2], "obs", ARGV[3], "publish", ARGV[4])
return 1
`)

// SaveDetectRecord stores a pipeline's detection record; false means a later round's record is
// there already and this one was dropped.
func (s *Store) SaveDetectRecord(ctx context.Context, pipeline string, r DetectRecord) (bool, error) {
	n, err := saveDetectScript.Run(ctx, s.rdb, []string{s.detectKey(pipeline)}, r.Round, r.State, r.Observation, r.Publish).Int()
	if err != nil {
		return false, wrap("save detection of "+pipeline, err)
	}
	return n == 1, nil
}

// DetectRecords returns the stored detection records of pipelines (absent when none is stored).
func (s *Store) DetectRecords(ctx context.Context, pipelines ...string) (map[string]DetectRecord, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(pipelines))
	for i, p := range pipelines {
		cmds[i] = pipe.HGetAll(ctx, s.detectKey(p))
	}
	if len(pipelines) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, wrap("read detection", err)
		}
	}
	out := make(map[string]DetectRecord, len(pipelines))
	for i, p := range pipelines {
		h := cmds[i].Val()
		if len(h) == 0 {
			continue
		}
		round, _ := strconv.ParseInt(h["round"], 10, 64)
		out[p] = DetectRecord{Round: round, State: []byte(h["state"]), Observation: []byte(h["obs"]), Publish: []byte(h["publish"])}
	}
	return out, nil
}

// DetectRecord returns one pipeline's detection record (zero when none is stored).
func (s *Store) DetectRecord(ctx context.Context, pipeline string) (DetectRecord, error) {
	m, err := s.DetectRecords(ctx, pipeline)
	return m[pipeline], err
}

// DetectUpdate says what became of an incident detection updates.
type DetectUpdate struct {
	Status string // open, acknowledged, resolved; "" when the incident no longer exists
	// MergedInto is the incident it was merged into, when it was.
	MergedInto string
	// Edited is true when the root's symptom changed and an edit of the root was queued.
	Edited bool
}

// updateDetectScript sets the symptom an incident's root shows and queues a root edit when it
// changed; with retitle, the incident's title too (the incidents detection opened).
// ARGV: id, line, title ("": keep), now.
var updateDetectScript = redis.NewScript(luaCommon + `
local id, line, title, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local v = redis.call("HMGET", ik(id), "status", "merged_into", "detect", "title", "detect_state", "silenced_until", "pending")
if not v[1] then return {""} end
if v[1] == "resolved" then return {"resolved", v[2] or ""} end
if v[3] == line and (title == "" or v[4] == title) and v[5] == "active" then return {v[1], "", "0"} end
redis.call("HSET", ik(id), "detect", line, "detect_state", "active")
if title ~= "" then redis.call("HSET", ik(id), "title", title) end
if (tonumber(v[6]) or 0) > now then
  -- Silenced: the root is edited when the silence ends (its pending update).
  if (tonumber(v[7]) or 0) == 0 then redis.call("HSET", ik(id), "pending", 1, "pending_since", now) end
  return {v[1], "", "0"}
end
enqueue(id, "update", "", "", "", 0, 0)
return {v[1], "", "1"}
`)

// noteDetectScript posts detection's news into an incident's thread, or keeps it for the end
// of the incident's silence. ARGV: id, event, detail, now. Returns the incident's status ("" when
// it is gone).
var noteDetectScript = redis.NewScript(luaCommon + `
local id, ev, detail, now_s = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
` + luaCorrelate + `
local st = redis.call("HGET", ik(id), "status")
if not st then return "" end
if st ~= "resolved" then
  event(id, now_s, ev, "streamwatch", string.sub(detail, 1, 1000))
  detect_post(id, ev, "streamwatch", detail)
end
return st
`)

// NoteDetected posts detection's news (ev "detected") in incident id's thread, or, while the
// incident is silenced, with the update that goes out when the silence ends. A resolved
// incident is left alone.
func (s *Store) NoteDetected(ctx context.Context, id, ev, detail string) error {
	_, err := noteDetectScript.Run(ctx, s.rdb, []string{s.base}, NormalizeID(id), ev, detail, ms(s.now())).Result()
	return wrap("note on "+id, err)
}

// UpdateDetected shows line (the symptom with its numbers) on an incident's root, and title
// as its title unless title is empty; the root is edited, the thread left alone.
func (s *Store) UpdateDetected(ctx context.Context, id, line, title string) (DetectUpdate, error) {
	res, err := updateDetectScript.Run(ctx, s.rdb, []string{s.base}, NormalizeID(id), line, title, ms(s.now())).StringSlice()
	if err != nil {
		return DetectUpdate{}, wrap("update "+id, err)
	}
	u := DetectUpdate{Status: res[0]}
	if len(res) > 1 {
		u.MergedInto = res[1]
	}
	u.Edited = len(res) > 2 && res[2] == "1"
	return u, nil
}

// Recovery says what recovering an incident did.
type Recovery struct {
	Status     string // the incident's status before; "" when it no longer exists
	MergedInto string
	// Resolves is true when the incident is to resolve now: streamwatch opened it, nobody
	// acknowledged it, no alert still fires.
	Resolves bool
	// Firing counts the alerts that still fire; Names are the titles of those that joined.
	Firing int
	Names  []string
}

// recoverDetectScript marks detection's alert of an incident resolved, posts the recovery note
// once in the thread (naming what still fires) and, when the incident may close, queues its
// resolution. ARGV: id, fingerprint, note, now.
var recoverDetectScript = redis.NewScript(luaCommon + `
local id, fp, note, now_s = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now = tonumber(now_s)
` + luaCorrelate + `
local v = redis.call("HMGET", ik(id), "status", "merged_into", "alerts_unlisted")
if not v[1] then return {""} end
if v[1] == "resolved" then return {"resolved", v[2] or ""} end
if redis.call("HEXISTS", ik(id, "alerts"), fp) == 1 then
  redis.call("HSET", ik(id, "alerts"), fp, '{"status":"resolved","last_seen":' .. now_s .. '}')
end
redis.call("HSET", ik(id), "detect", note, "detect_state", "recovered")
local firing, names = 0, {}
local alerts = redis.call("HGETALL", ik(id, "alerts"))
for i = 1, #alerts, 2 do
  if not string.find(alerts[i + 1], '"resolved"', 1, true) then
    firing = firing + 1
    local name = redis.call("HGET", ik(id), "jt:" .. alerts[i])
    if name then names[#names + 1] = name end
  end
end
if v[3] then firing = firing + 1 end -- alerts beyond the list: nobody knows; a person decides
local detail = note
if firing > 0 then
  detail = detail .. "\nStill firing: " .. firing .. " alert"
  if firing > 1 then detail = detail .. "s" end
  if #names > 0 then detail = detail .. " (" .. table.concat(names, ", ") .. ")" end
  detail = detail .. "; the incident stays open until they resolve."
end
event(id, now_s, "recovered", "streamwatch", string.sub(detail, 1, 1000))
detect_post(id, "recovered", "streamwatch", detail)
local resolves = "0"
if firing == 0 and detect_done(id) then
  redis.call("HSET", ik(id), "all_resolved", "1")
  redis.call("ZADD", P .. ":autoresolve", now, id)
  resolves = "1"
end
local out = {v[1], "", resolves, tostring(firing)}
for _, n in ipairs(names) do out[#out + 1] = n end
return out
`)

// RecoverDetected records that the symptom of incident id recovered: detection's alert
// (fingerprint) resolves, note goes into the thread once, and the incident resolves when
// streamwatch opened it, nobody acknowledged it and no alert still fires (through the
// deliverer's auto-resolve pass, within a second).
func (s *Store) RecoverDetected(ctx context.Context, id, fingerprint, note string) (Recovery, error) {
	res, err := recoverDetectScript.Run(ctx, s.rdb, []string{s.base}, NormalizeID(id), fingerprint, note, ms(s.now())).StringSlice()
	if err != nil {
		return Recovery{}, wrap("recover "+id, err)
	}
	r := Recovery{Status: res[0]}
	if len(res) > 1 {
		r.MergedInto = res[1]
	}
	if len(res) > 3 {
		r.Resolves = res[2] == "1"
		r.Firing, _ = strconv.Atoi(res[3])
		r.Names = res[4:]
	}
	return r, nil
}

// PipelineIncident is the open incident the correlation index names for a pipeline: the one
// streamwatch opened, else the alert's; "" when none is open.
func (s *Store) PipelineIncident(ctx context.Context, pipeline string) (string, error) {
	ids, err := s.rdb.HMGet(ctx, s.key("pipe", pipeline), "sw", "alert").Result()
	if err != nil {
		return "", wrap("pipeline incident of "+pipeline, err)
	}
	for _, v := range ids {
		id, _ := v.(string)
		if id == "" {
			continue
		}
		st, err := s.rdb.HGet(ctx, s.key("inc", id), "status").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return "", wrap("pipeline incident of "+pipeline, err)
		}
		if st == StatusOpen || st == StatusAcknowledged {
			return id, nil
		}
	}
	return "", nil
}
