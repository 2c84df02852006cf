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
// The rate is a sliding minute: P:flood:<channel>:win holds the newest limit+1 new keys with
// their arrival times. While it holds more than the limit, the rate is above it until the
// oldest leaves the minute ("hot_until"); the flood ends quiet_for later ("ends_at"), either
// when an alert meets the ended flood or when the maintenance pass (EndFloods) finds it due.

// Caps of the lists kept per incident (bounded state); what does not fit is counted.
const (
	// MaxListedAlerts is how many alerts (fingerprints) an incident lists with their state.
	MaxListedAlerts = 1000
	// MaxListedFloodKeys is how many dedup keys a flood incident lists with their counts.
	MaxListedFloodKeys = 10000
	// floodTop is how many label values and sources a flood incident ranks (approximately:
	// rare ones are dropped to keep the ranking small).
	floodTop = 100
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
// needs now, now_s, flood_limit, flood_quiet, quiet_text and duplicate() declared before it.
var luaFlood = luaFloodEnd + `
-- active_flood returns the id of channel's flood incident while the flood lasts, and ends a
-- flood whose time is up.
local function active_flood(channel)
  local f = redis.call("HMGET", fk(channel), "id", "ended", "ends_at")
  if not f[1] or f[2] == "1" then return nil end
  if now >= (tonumber(f[3]) or 0) then
    end_flood(channel, f[1])
    return nil
  end
  return f[1]
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

-- count_new counts a new key (h) in channel's minute and returns how many the minute holds (at
-- most flood_limit + 1). Above the limit it moves the flood's end.
local function count_new(channel, h)
  local w = fk(channel) .. ":win"
  redis.call("ZREMRANGEBYSCORE", w, "-inf", now - 60000)
  redis.call("ZADD", w, now, h)
  local n = redis.call("ZCARD", w)
  if n > flood_limit + 1 then
    redis.call("ZREMRANGEBYRANK", w, 0, n - flood_limit - 2)
    n = flood_limit + 1
  end
  if n > flood_limit then
    local hot = tonumber(redis.call("ZRANGE", w, 0, 0, "WITHSCORES")[2]) + 60000
    redis.call("HSET", fk(channel), "hot_until", hot, "ends_at", hot + flood_quiet)
    redis.call("ZADD", P .. ":floods", hot + flood_quiet, channel)
  end
  return n
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

-- tally counts one more of member in the ranking z, keeping about floodTop members.
local function tally(z, member, trim)
  redis.call("ZINCRBY", z, 1, member)
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
-- the flood. The key is listed with its count while the list has room; beyond, its
-- occurrences are counted as unlisted and a HyperLogLog tells new keys from seen ones.
local function flood_join(fid, key, title, sev, detail, labels)
  duplicate(fid, sev, detail)
  local z = ik(fid, "flood:keys")
  local fresh = redis.call("ZINCRBY", z, 1, key) == "1"
  if fresh and redis.call("ZCARD", z) > max_flood_keys then
    redis.call("ZREM", z, key)
    redis.call("HINCRBY", ik(fid), "keys_unlisted", 1)
    fresh = redis.call("PFADD", ik(fid, "flood:unlisted"), key) == 1
  end
  if not fresh then return false end
  local distinct = redis.call("HINCRBY", ik(fid), "distinct", 1)
  redis.call("HINCRBY", ik(fid), "pending_new", 1)
  redis.call("LPUSH", ik(fid, "flood:newest"), key)
  redis.call("LTRIM", ik(fid, "flood:newest"), 0, 4)
  -- Trimming the rankings costs a ZCARD: look every 50 new keys.
  local trim = distinct % 50 == 0
  if tally(ik(fid, "flood:sources"), title, trim) then
    redis.call("HSET", ik(fid), "sources_trimmed", "1")
  end
  for lv in string.gmatch(labels, "[^\31]+") do tally(ik(fid, "flood:labels"), lv, trim) end
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

// Floods returns the channels in a flood now, with the flood incident of each.
func (s *Store) Floods(ctx context.Context) (map[string]string, error) {
	chans, err := s.rdb.ZRangeByScore(ctx, s.key("floods"), &redis.ZRangeBy{Min: "(" + strconv.FormatInt(ms(s.now()), 10), Max: "+inf"}).Result()
	if err != nil {
		return nil, wrap("read floods", err)
	}
	out := make(map[string]string, len(chans))
	for _, ch := range chans {
		id, err := s.rdb.HGet(ctx, s.key("flood", ch), "id").Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, wrap("read floods", err)
		}
		out[ch] = id
	}
	return out, nil
}

// FloodDetail is what a flood incident knows of the alerts that joined it.
type FloodDetail struct {
	Distinct      int64      // distinct keys that joined (estimated beyond the listed ones)
	Listed        int64      // keys listed with their counts
	Unlisted      int64      // occurrences of keys the full list could not take
	Keys          []KeyCount // the listed keys with the most occurrences, most first
	Labels        []KeyCount // label values ("name=value") by distinct alerts, most first
	Sources       []KeyCount // alert titles by distinct alerts, most first
	SourceCount   int64      // distinct titles (a lower bound when SourcesCapped)
	SourcesCapped bool
	Limit         int64         // the limit that started the flood
	QuietFor      time.Duration // its quiet_for
	Ended         time.Time     // when the flood ended; zero while it lasts
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
		SourcesCapped: h["sources_trimmed"] == "1", Limit: n("flood_limit"),
		QuietFor: time.Duration(n("flood_quiet")) * time.Millisecond, Ended: fromMS(n("flood_ended")),
	}
	f.Distinct = max(n("distinct"), f.Listed+unlisted.Val())
	return f, nil
}
