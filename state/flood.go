package state

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Flood protection. A channel floods when more than Store.FloodLimit new incidents would open
// in it within a minute: the alert that would open one more joins a new flood incident
// instead, and so does every later alert of the channel whose key has no open incident, until
// the rate of such new keys has stayed at or below the limit for Store.FloodQuietFor. The rate
// is counted in Redis by the record script, in the same step as the decision to open, so
// replicas share one count and one flood incident.
//
// The rate is a sliding minute: P:flood:<channel>:win holds the arrival times of the newest
// limit+1 new keys. When the oldest of them is less than a minute old, more than the limit
// arrived within a minute, and the rate stays above it until that one leaves the minute
// ("hot_until"); the flood ends quiet_for later ("ends_at"), either when an alert meets the
// ended flood or when the maintenance pass (EndFloods) finds it due.

// Caps of the lists kept per incident (bounded state); what does not fit is counted.
const (
	// MaxListedAlerts is how many alerts (fingerprints) an incident lists with their state.
	MaxListedAlerts = 1000
	// MaxListedFloodKeys is how many dedup keys a flood incident lists with their counts.
	MaxListedFloodKeys = 10000
	// floodTop is how many label values and sources a flood incident ranks (approximately:
	// rare ones are dropped to keep the ranking small).
	floodTop = 100
	// The rankings count the labels and titles of the first floodExact keys new to a flood
	// exactly, then those of one key in floodSample, floodSample times.
	floodExact  = 1000
	floodSample = 10
)

// luaFloodEnd ends floods. It needs now, now_s and quiet_text declared before it.
const luaFloodEnd = `
local function fk(channel) return P .. ":flood:" .. channel end
-- end_flood ends channel's flood fid: its thread says so, and new keys open incidents again.
local function end_flood(channel, fid)
  local f = redis.call("HMGET", fk(channel), "hot_until")
  redis.call("HSET", fk(channel), "ended", "1")
  redis.call("ZREM", P .. ":floods", channel)
  if redis.call("EXISTS", ik(fid)) == 0 then return end
  local limit = redis.call("HGET", ik(fid), "flood_limit") or "?"
  redis.call("HSET", ik(fid), "flood_ended", now_s)
  local detail = "at most " .. limit .. " new alerts a minute for " .. quiet_text
  event(fid, now_s, "flood_over", "streamwatch", detail)
  enqueue(fid, "event", "flood_over", "streamwatch", detail, 0, f[1] or 0)
end
`

// luaFlood is the flood side of recordScript (see the comment at the top of this file). It
// needs now, now_s, flood_limit, flood_quiet, quiet_text, dup_fields and duplicate() declared before it.
var luaFlood = luaFloodEnd + `
-- active_flood returns the id of channel's flood incident and when the flood ends while it
-- lasts, and ends a flood whose time is up.
local function active_flood(channel)
  local f = redis.call("HMGET", fk(channel), "id", "ended", "ends_at")
  if not f[1] or f[2] == "1" then return nil end
  local ends = tonumber(f[3]) or 0
  if now >= ends then
    end_flood(channel, f[1])
    return nil
  end
  return f[1], ends
end

-- flood_member returns the open flood incident of channel that lists key, for a resolved alert.
local function flood_member(channel, key)
  local fid = redis.call("HGET", fk(channel), "id")
  if fid and redis.call("ZSCORE", ik(fid, "flood:keys"), key) and
      redis.call("HGET", ik(fid), "status") ~= "resolved" then
    return fid
  end
  return nil
end

-- count_new counts a new key in channel's minute and returns true when more than flood_limit
-- arrived within it. Then the rate stays above the limit until the oldest of those leaves the
-- minute, and the flood ends flood_quiet after that: count_new moves the end there when it is
-- later than ends (the end known so far; 0 for none), to the half second, which spares a write
-- per alert during a storm; it returns the end it wrote as its second value.
local function count_new(channel, ends)
  local w = fk(channel) .. ":win"
  redis.call("LPUSH", w, now)
  redis.call("LTRIM", w, 0, flood_limit)
  local oldest = tonumber(redis.call("LINDEX", w, flood_limit))
  if not oldest or oldest <= now - 60000 then return false end
  local hot = oldest + 60000
  if hot + flood_quiet > ends + 500 then
    redis.call("HSET", fk(channel), "hot_until", hot, "ends_at", hot + flood_quiet)
    redis.call("ZADD", P .. ":floods", hot + flood_quiet, channel)
    return true, hot + flood_quiet
  end
  return true
end

-- flood_open opens channel's flood incident (linked to its previous one) and returns its id
-- and the previous one's.
local function flood_open(channel)
  local id = "INC-" .. redis.call("INCR", P .. ":seq:incident")
  local previous = redis.call("HGET", fk(channel), "id") or ""
  -- count, severity and the first thread update come with the alerts that join (flood_join);
  -- last_flush now: the first thread update is a window after the root.
  redis.call("HSET", ik(id), "id", id, "key", "flood:" .. channel, "title", "Alert flood in " .. channel,
    "severity", "0", "pipeline", "", "channel", channel, "status", "open", "first_seen", now_s,
    "last_seen", now_s, "count", "0", "previous", previous, "source", "streamwatch",
    "seq", "1", "delivered", "0", "pending", "0", "last_flush", now_s,
    "flood", "1", "flood_limit", flood_limit, "flood_quiet", flood_quiet, "distinct", "0")
  redis.call("HSET", fk(channel), "id", id, "ended", "0", "since", now_s)
  redis.call("ZADD", P .. ":open", now_s, id)
  redis.call("XADD", P .. ":outbox", "*", "inc", id, "seq", "1", "kind", "root", "channel", channel)
  return id, previous
end

-- tally counts weight more of member in the ranking z; with trim, it keeps about floodTop members.
local function tally(z, member, weight, trim)
  redis.call("ZINCRBY", z, weight, member)
  if trim then
    local n = redis.call("ZCARD", z)
    if n > 2 * ` + strconv.Itoa(floodTop) + ` then
      redis.call("ZREMRANGEBYRANK", z, 0, n - ` + strconv.Itoa(floodTop) + ` - 1)
      return true
    end
  end
  return false
end

-- flood_join records an alert in flood incident fid and returns true when its key is new to
-- the flood. The key is listed with its count while the list has room. Beyond, its occurrences
-- are counted as unlisted and a HyperLogLog estimates how many keys they were; whether one was
-- seen before is not known (a HyperLogLog is no membership test), so it counts as new. The
-- newest new keys wait in five rotating fields for the next thread update (the pump).
-- flood_fields are dup_fields, then the flood's own: one read serves duplicate() and flood_join.
local flood_fields = {unpack(dup_fields)}
for _, name in ipairs({"keys_full", "distinct", "pending_new", "keys_unlisted"}) do flood_fields[#flood_fields + 1] = name end
local function flood_join(fid, key, title, sev, detail, labels)
  local z = ik(fid, "flood:keys")
  local v = redis.call("HMGET", ik(fid), unpack(flood_fields))
  local n = #dup_fields
  local f = {v[n + 1], v[n + 2], v[n + 3], v[n + 4]}
  local fresh, set = false, {}
  if f[1] ~= "1" then
    fresh = redis.call("ZINCRBY", z, 1, key) == "1"
    if fresh and redis.call("ZCARD", z) >= max_flood_keys then set = {"keys_full", "1"} end
  elseif redis.call("ZSCORE", z, key) then
    redis.call("ZINCRBY", z, 1, key)
  else
    fresh = true
    redis.call("PFADD", ik(fid, "flood:unlisted"), key)
    set = {"keys_unlisted", (tonumber(f[4]) or 0) + 1}
  end
  local distinct = tonumber(f[2]) or 0
  if fresh then
    distinct = distinct + 1
    for _, x in ipairs({"distinct", distinct, "pending_new", (tonumber(f[3]) or 0) + 1, "newest" .. (distinct % 5), key}) do
      set[#set + 1] = x
    end
  end
  duplicate(fid, sev, detail, v, set)
  if not fresh then return false end
  -- The rankings count every alert of the first ` + strconv.Itoa(floodExact) + ` new keys, then one in ` + strconv.Itoa(floodSample) + `
  -- for ` + strconv.Itoa(floodSample) + `: a big flood's ranking is an estimate, and costs a fifth of what joining would.
  local weight = 1
  if distinct > ` + strconv.Itoa(floodExact) + ` then
    if distinct % ` + strconv.Itoa(floodSample) + ` ~= 0 then return true end
    weight = ` + strconv.Itoa(floodSample) + `
  end
  -- Trimming the rankings costs a ZCARD: look every 50 new keys.
  local trim = distinct % 50 == 0
  if tally(ik(fid, "flood:sources"), title, weight, trim) then
    redis.call("HSET", ik(fid), "sources_trimmed", "1")
  end
  for lv in string.gmatch(labels, "[^\31]+") do tally(ik(fid, "flood:labels"), lv, weight, trim) end
  return true
end
`

// endFloodsScript ends the floods whose quiet time is up. ARGV: now, quiet_for as text.
// Returns the channels whose flood it ended.
var endFloodsScript = redis.NewScript(luaCommon + `
local now_s = ARGV[1]
local now, quiet_text = tonumber(ARGV[1]), ARGV[2]
` + luaFloodEnd + `
local ended = {}
for _, ch in ipairs(redis.call("ZRANGEBYSCORE", P .. ":floods", "-inf", now, "LIMIT", 0, 100)) do
  local f = redis.call("HMGET", fk(ch), "id", "ended", "ends_at")
  if f[1] and f[2] ~= "1" and now >= (tonumber(f[3]) or 0) then
    end_flood(ch, f[1])
    ended[#ended + 1] = ch
  else
    redis.call("ZREM", P .. ":floods", ch)
  end
end
return ended
`)

// EndFloods ends the floods whose rate has stayed at or below the limit for FloodQuietFor: each
// flood incident's thread says so once, across replicas. It returns the channels.
func (s *Store) EndFloods(ctx context.Context) ([]string, error) {
	chans, err := endFloodsScript.Run(ctx, s.rdb, []string{s.base}, ms(s.now()), s.FloodQuietFor.String()).StringSlice()
	if err != nil {
		return nil, wrap("end floods", err)
	}
	return chans, nil
}

// FloodDetail is what a flood incident knows of the alerts that joined it.
type FloodDetail struct {
	// Distinct is how many distinct keys joined: Listed, plus an estimate (HyperLogLog, about 1%
	// off) of the keys beyond the list when there were any.
	Distinct int64
	Listed   int64      // keys listed with their counts
	Unlisted int64      // occurrences of keys the full list could not take
	Keys     []KeyCount // the listed keys with the most occurrences, most first
	// Labels are label values ("name=value") by distinct alerts, most first, and Sources alert
	// titles; beyond the first 1,000 distinct alerts both are estimated (RankingEstimated).
	Labels           []KeyCount
	Sources          []KeyCount
	RankingEstimated bool
	SourceCount      int64 // distinct titles (a lower bound when SourcesCapped)
	SourcesCapped    bool
	Limit            int64         // the limit that started the flood
	QuietFor         time.Duration // its quiet_for
	Ended            time.Time     // when the flood ended; zero while it lasts
}

// KeyCount is a value and how often it was seen.
type KeyCount struct {
	Value string
	Count int64
}

// floodKeysShown is how many keys Get reads of a flood incident.
const floodKeysShown = 50

// floodDetail reads the flood part of incident id, whose hash is h.
func (s *Store) floodDetail(ctx context.Context, id string, h map[string]string) (*FloodDetail, error) {
	pipe := s.rdb.Pipeline()
	keys := pipe.ZRevRangeWithScores(ctx, s.key("inc", id, "flood:keys"), 0, floodKeysShown-1)
	listed := pipe.ZCard(ctx, s.key("inc", id, "flood:keys"))
	unlisted := pipe.PFCount(ctx, s.key("inc", id, "flood:unlisted"))
	labels := pipe.ZRevRangeWithScores(ctx, s.key("inc", id, "flood:labels"), 0, 4)
	sources := pipe.ZRevRangeWithScores(ctx, s.key("inc", id, "flood:sources"), 0, 2)
	nsources := pipe.ZCard(ctx, s.key("inc", id, "flood:sources"))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("read flood "+id, err)
	}
	n := func(k string) int64 { v, _ := strconv.ParseInt(h[k], 10, 64); return v }
	counts := func(zs []redis.Z) []KeyCount {
		out := make([]KeyCount, len(zs))
		for i, z := range zs {
			out[i] = KeyCount{Value: str(z.Member), Count: int64(z.Score)}
		}
		return out
	}
	f := &FloodDetail{
		Listed: listed.Val(), Unlisted: n("keys_unlisted"), Keys: counts(keys.Val()),
		Labels: counts(labels.Val()), Sources: counts(sources.Val()), SourceCount: nsources.Val(),
		SourcesCapped: h["sources_trimmed"] == "1", RankingEstimated: n("distinct") > floodExact, Limit: n("flood_limit"),
		QuietFor: time.Duration(n("flood_quiet")) * time.Millisecond, Ended: fromMS(n("flood_ended")),
	}
	f.Distinct = f.Listed
	if f.Unlisted > 0 {
		f.Distinct += unlisted.Val()
	}
	return f, nil
}
