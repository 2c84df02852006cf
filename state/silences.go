package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Silences. A silence quiets alerts until it expires, and lives in Redis with its author,
// reason and expiry, so that it holds across replicas and restarts:
//
//   - An incident silence (SilenceIncident): the incident's alerts are still recorded and
//     counted, but nothing is posted for them (no root edit, no thread reply) until the
//     silence ends; then the thread says so and the update that waited goes out.
//   - A label silence (CreateSilence): firing alerts whose labels match every matcher open no
//     incident and join none; they are listed under the silence (SilencedAlert) instead.
//     Resolved alerts are never silenced: they only close what is open.
//
// Each is P:silence:<id> (SIL-1, SIL-2, …); P:silences holds the active ones by expiry, and the
// maintenance pass (ExpireSilences) ends them when their time comes, once across replicas. A
// silence stays in Redis for Store.Retention after it ends, with the alerts it silenced.
//
// The record script matches nothing itself (Lua has no regular expressions): each replica
// keeps the active label silences in memory and names the silence of each alert; the script
// refuses a batch matched against silences that changed since (P:silences:version), and the
// replica reads them again and retries. So a silence made on one replica holds on all of them
// from the next alert on.

// Silence kinds.
const (
	SilenceLabels   = "labels"
	SilenceIncident = "incident"
)

// maxSilencedListed is how many alerts (fingerprints) a label silence lists; more are counted.
const maxSilencedListed = 100

// Silence is one silence as stored.
type Silence struct {
	ID       string
	Kind     string // SilenceLabels or SilenceIncident
	Matchers string // a label silence's matchers, as given
	Incident string // an incident silence's incident
	By       string // who made it (a name), ByID their user id
	ByID     string
	Reason   string
	Created  time.Time
	Until    time.Time
	// Ended is when it ended (its time ran out, or EndedBy ended it early); zero while active.
	Ended   time.Time
	EndedBy string
	// Hits counts the alerts a label silence silenced; Alerts lists them (at most 100
	// fingerprints, Unlisted counts the rest's occurrences).
	Hits     int64
	LastHit  time.Time
	Alerts   []SilencedAlert
	Unlisted int64
}

// SilencedAlert is an alert a label silence kept from opening or joining an incident.
type SilencedAlert struct {
	Fingerprint string
	Key         string
	Title       string
	Count       int64
	Last        time.Time
}

// Matcher is one condition of a label silence: the label must be present and equal Value,
// or with Regex, match it whole.
type Matcher struct {
	Name  string
	Value string
	Regex bool
	re    *regexp.Regexp
}

func (m Matcher) String() string {
	if m.Regex {
		return m.Name + "=~" + m.Value
	}
	return m.Name + "=" + m.Value
}

func (m Matcher) matches(labels map[string]string) bool {
	v, ok := labels[m.Name]
	if !ok {
		return false
	}
	if m.Regex {
		return m.re.MatchString(v)
	}
	return v == m.Value
}

// matcherStart finds where each matcher of "LABEL=VALUE,LABEL=~REGEX" begins: a value may hold
// commas (a{1,3}) as long as no label name and = follow them.
var matcherStart = regexp.MustCompile(`(?:^|,)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|=)`)

// ParseMatchers reads "LABEL=VALUE[,LABEL=~REGEX…]". Values may be quoted ("client replied
// sms"); regular expressions are RE2, matched against the whole value. Errors say which part
// is wrong.
func ParseMatchers(text string) ([]Matcher, error) {
	text = strings.TrimSpace(text)
	locs := matcherStart.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 || strings.TrimSpace(text[:locs[0][0]]) != "" {
		return nil, fmt.Errorf("%q is not LABEL=VALUE or LABEL=~REGEX", text)
	}
	var out []Matcher
	seen := map[string]bool{}
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		m := Matcher{Name: text[loc[2]:loc[3]], Regex: text[loc[4]:loc[5]] == "=~", Value: strings.TrimSpace(text[loc[5]:end])}
		if len(m.Value) >= 2 && strings.HasPrefix(m.Value, `"`) && strings.HasSuffix(m.Value, `"`) {
			m.Value = m.Value[1 : len(m.Value)-1]
		}
		if m.Value == "" {
			return nil, fmt.Errorf("%s: no value (an absent label matches nothing)", strings.TrimSuffix(m.String(), "="))
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("label %s is matched twice", m.Name)
		}
		seen[m.Name] = true
		if m.Regex {
			re, err := regexp.Compile("^(?:" + m.Value + ")$")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m, err)
			}
			m.re = re
		}
		out = append(out, m)
	}
	return out, nil
}

// MatchersText renders matchers as ParseMatchers reads them.
func MatchersText(ms []Matcher) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, ",")
}

// luaSilenced is the silence side of recordScript. It needs now and now_s.
var luaSilenced = `
-- silenced records a firing alert that label silence sid matches, in the silence's list, and
-- returns true; false when no such label silence exists (the alert is recorded as usual).
local function silenced(sid, key, fp, title)
  local sk = P .. ":silence:" .. sid
  local s = redis.call("HMGET", sk, "kind", "expire_at")
  if s[1] ~= "labels" then return false end
  redis.call("HINCRBY", sk, "hits", 1)
  redis.call("HSET", sk, "last_hit", now_s)
  local a = sk .. ":alerts"
  local prev = redis.call("HGET", a, fp)
  if prev or redis.call("HLEN", a) < ` + strconv.Itoa(maxSilencedListed) + ` then
    local n = 1
    if prev then n = (tonumber(string.match(prev, '"n":(%d+)')) or 0) + 1 end
    redis.call("HSET", a, fp, cjson.encode({n = n, last = now, key = key, title = title}))
    -- Relative TTLs: the replicas' clocks, which stamped expire_at, need not be Redis's.
    if not prev and (tonumber(s[2]) or 0) > 0 then redis.call("PEXPIRE", a, math.max(tonumber(s[2]) - now, 1)) end
  else
    redis.call("HINCRBY", sk, "unlisted", 1)
  end
  return true
end
`

// luaSilenceEnd ends silences; it needs luaCommon.
const luaSilenceEnd = `
local function sk(sid) return P .. ":silence:" .. sid end
-- keep_for makes a silence that ended stay ttl ms (0: for good).
local function keep_for(sid, now, ttl)
  if ttl <= 0 then return end
  redis.call("HSET", sk(sid), "expire_at", now + ttl)
  redis.call("PEXPIRE", sk(sid), ttl)
  redis.call("PEXPIRE", sk(sid) .. ":alerts", ttl)
end
-- end_silence ends active silence sid at now: a label silence stops matching (the version
-- tells every replica); an incident silence lets the incident's updates out again, and its
-- thread says so with what arrived meanwhile. actor is who ended it early, "" when its time
-- ran out. It returns false when sid was not active.
local function end_silence(sid, now, actor, ttl)
  if redis.call("ZREM", P .. ":silences", sid) == 0 then return false end
  local s = redis.call("HMGET", sk(sid), "kind", "incident", "by", "reason")
  redis.call("HSET", sk(sid), "ended", now)
  if actor ~= "" then
    redis.call("HSET", sk(sid), "until", now, "ended_by", actor)
    keep_for(sid, now, ttl)
  end
  if s[1] == "labels" then
    redis.call("INCR", P .. ":silences:version")
  elseif s[1] == "incident" then
    local id = s[2]
    local f = redis.call("HMGET", ik(id), "silence_id", "status", "count", "silence_count0", "pending")
    if f[1] == sid then
      redis.call("HDEL", ik(id), "silence_id", "silenced_until", "silenced_by", "silence_reason", "silence_count0")
      unsilenced(id, now)
      if f[2] and f[2] ~= "resolved" then
        local n = (tonumber(f[3]) or 0) - (tonumber(f[4]) or 0)
        local ev, who = "silence_expired", "streamwatch"
        if actor ~= "" then ev, who = "silence_ended", actor end
        event(id, now, ev, who, sid .. " (set by " .. (s[3] or "?") .. "): " .. n .. " occurrences while silenced")
        enqueue(id, "event", ev, who, sid .. "\31" .. (s[3] or "") .. "\31" .. (s[4] or ""), n, 0)
        if (tonumber(f[5]) or 0) > 0 then redis.call("ZADD", P .. ":due", now, id) end
      end
    end
  end
  return true
end
`

// createSilenceScript makes a label silence. ARGV: matchers, until, by, by_id, reason, now,
// retention ms. Returns the silence's id.
var createSilenceScript = redis.NewScript(luaCommon + luaSilenceEnd + `
local m, till, by, by_id, reason = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local now, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local sid = "SIL-" .. redis.call("INCR", P .. ":seq:silence")
local exp = 0
if ttl > 0 then exp = till + ttl end
redis.call("HSET", sk(sid), "id", sid, "kind", "labels", "matchers", m, "by", by, "by_id", by_id,
  "reason", reason, "created", now, "until", till, "expire_at", exp, "hits", 0)
if exp > 0 then redis.call("PEXPIRE", sk(sid), math.max(exp - now, 1)) end
redis.call("ZADD", P .. ":silences", till, sid)
redis.call("INCR", P .. ":silences:version")
return sid
`)

// silenceIncidentScript silences an incident, replacing a silence it has. ARGV: id, until,
// by, by_id, reason, now, retention ms, until as text. Returns {result, silence id}.
var silenceIncidentScript = redis.NewScript(luaCommon + luaSilenceEnd + `
local id, till, by, by_id, reason = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local now, ttl, till_text = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
local st = redis.call("HGET", ik(id), "status")
if not st then return {"notfound"} end
if st == "resolved" then return {"resolved"} end
local sid = "SIL-" .. redis.call("INCR", P .. ":seq:silence")
local prev = redis.call("HGET", ik(id), "silence_id")
if prev then
  redis.call("ZREM", P .. ":silences", prev)
  redis.call("HSET", sk(prev), "ended", now, "until", now, "ended_by", by, "replaced_by", sid)
  keep_for(prev, now, ttl)
else
  redis.call("HSET", ik(id), "silence_count0", redis.call("HGET", ik(id), "count") or "0", "silenced_since", now)
end
local exp = 0
if ttl > 0 then exp = till + ttl end
redis.call("HSET", sk(sid), "id", sid, "kind", "incident", "incident", id, "by", by, "by_id", by_id,
  "reason", reason, "created", now, "until", till, "expire_at", exp)
if exp > 0 then redis.call("PEXPIRE", sk(sid), math.max(exp - now, 1)) end
redis.call("ZADD", P .. ":silences", till, sid)
redis.call("HSET", ik(id), "silence_id", sid, "silenced_until", till, "silenced_by", by, "silence_reason", reason)
-- What waits for Slack waits for the silence to end (end_silence schedules it).
redis.call("ZREM", P .. ":due", id)
local d = sid .. " until " .. till_text
if reason ~= "" then d = d .. ": " .. reason end
event(id, now, "silenced", by, d)
enqueue(id, "event", "silenced", by, sid .. "\31" .. reason, 0, till)
return {"ok", sid}
`)

// expireSilenceScript ends a silence early. ARGV: id, actor, now, retention ms.
// Returns {result, kind, incident}.
var expireSilenceScript = redis.NewScript(luaCommon + luaSilenceEnd + `
local sid, actor, now, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local s = redis.call("HMGET", sk(sid), "kind", "incident")
if not s[1] then return {"notfound"} end
if not end_silence(sid, now, actor, ttl) then return {"expired", s[1], s[2] or ""} end
return {"ok", s[1], s[2] or ""}
`)

// expireDueSilencesScript ends the silences whose time has come. ARGV: now, limit, retention
// ms. Returns their ids.
var expireDueSilencesScript = redis.NewScript(luaCommon + luaSilenceEnd + `
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[3])
local out = {}
for _, sid in ipairs(redis.call("ZRANGEBYSCORE", P .. ":silences", "-inf", now, "LIMIT", 0, tonumber(ARGV[2]))) do
  if end_silence(sid, now, "", ttl) then out[#out + 1] = sid end
end
return out
`)

// loadSilencesScript reads the silences' version and the active label silences in one step.
// ARGV: now. Returns version, then id, matchers, until per silence.
var loadSilencesScript = redis.NewScript(`
local P = KEYS[1]
local out = {redis.call("GET", P .. ":silences:version") or "0"}
for _, sid in ipairs(redis.call("ZRANGEBYSCORE", P .. ":silences", "(" .. ARGV[1], "+inf")) do
  local s = redis.call("HMGET", P .. ":silence:" .. sid, "kind", "matchers", "until")
  if s[1] == "labels" then
    out[#out + 1] = sid
    out[#out + 1] = s[2] or ""
    out[#out + 1] = s[3] or "0"
  end
end
return out
`)

// SilenceError explains why a silence could not be made or ended.
type SilenceError struct {
	ID     string
	Reason string // notfound, resolved, expired
}

func (e *SilenceError) Error() string {
	switch e.Reason {
	case "notfound":
		return fmt.Sprintf("%s does not exist", e.ID)
	case "expired":
		return fmt.Sprintf("%s has already ended", e.ID)
	}
	return fmt.Sprintf("%s is already %s", e.ID, e.Reason)
}

// Maker is who makes or ends a silence: a name for people and their user id.
type Maker struct{ Name, ID string }

// CreateSilence makes a label silence until the given time and returns its id.
func (s *Store) CreateSilence(ctx context.Context, matchers []Matcher, until time.Time, by Maker, reason string) (string, error) {
	if len(matchers) == 0 {
		return "", errors.New("a silence needs at least one matcher")
	}
	sid, err := createSilenceScript.Run(ctx, s.rdb, []string{s.base}, MatchersText(matchers), ms(until), by.Name, by.ID, reason,
		ms(s.now()), s.retentionMS()).Text()
	if err != nil {
		return "", wrap("create silence", err)
	}
	s.sil.invalidate()
	return sid, nil
}

// SilenceIncident silences incident id until the given time (replacing a silence it has) and
// returns the silence's id.
func (s *Store) SilenceIncident(ctx context.Context, id string, until time.Time, by Maker, reason string) (string, error) {
	id = NormalizeID(id)
	res, err := silenceIncidentScript.Run(ctx, s.rdb, []string{s.base}, id, ms(until), by.Name, by.ID, reason,
		ms(s.now()), s.retentionMS(), until.UTC().Format("2006-01-02 15:04:05Z")).StringSlice()
	if err != nil {
		return "", wrap("silence "+id, err)
	}
	if res[0] != "ok" {
		return "", &ChangeError{Incident: id, Reason: res[0]}
	}
	return res[1], nil
}

// ExpireSilence ends silence sid now, as actor; it returns the silence's kind and, for an
// incident silence, its incident.
func (s *Store) ExpireSilence(ctx context.Context, sid, actor string) (kind, incident string, err error) {
	sid = NormalizeSilenceID(sid)
	res, err := expireSilenceScript.Run(ctx, s.rdb, []string{s.base}, sid, actor, ms(s.now()), s.retentionMS()).StringSlice()
	if err != nil {
		return "", "", wrap("expire "+sid, err)
	}
	if res[0] != "ok" {
		return "", "", &SilenceError{ID: sid, Reason: res[0]}
	}
	s.sil.invalidate()
	return res[1], res[2], nil
}

// ExpireSilences ends the silences whose time has come, each once across replicas, and
// returns their ids. The maintenance pass runs it.
func (s *Store) ExpireSilences(ctx context.Context) ([]string, error) {
	ids, err := expireDueSilencesScript.Run(ctx, s.rdb, []string{s.base}, ms(s.now()), 100, s.retentionMS()).StringSlice()
	if err != nil {
		return nil, wrap("expire silences", err)
	}
	return ids, nil
}

// NormalizeSilenceID turns "3", "sil-3" and "SIL-3" into "SIL-3".
func NormalizeSilenceID(id string) string {
	id = strings.TrimSpace(id)
	if _, err := strconv.Atoi(id); err == nil {
		return "SIL-" + id
	}
	if len(id) > 4 && strings.EqualFold(id[:4], "sil-") {
		return "SIL-" + id[4:]
	}
	return id
}

// GetSilence returns one silence, active or ended (within the retention), with the alerts it
// silenced.
func (s *Store) GetSilence(ctx context.Context, sid string) (*Silence, error) {
	sid = NormalizeSilenceID(sid)
	pipe := s.rdb.Pipeline()
	h := pipe.HGetAll(ctx, s.key("silence", sid))
	a := pipe.HGetAll(ctx, s.key("silence", sid, "alerts"))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("read silence "+sid, err)
	}
	if len(h.Val()) == 0 {
		return nil, &SilenceError{ID: sid, Reason: "notfound"}
	}
	return parseSilence(h.Val(), a.Val()), nil
}

// ActiveSilences returns the silences in force, those ending first first, each with the
// alerts it silenced.
func (s *Store) ActiveSilences(ctx context.Context) ([]*Silence, error) {
	ids, err := s.rdb.ZRangeByScore(ctx, s.key("silences"), &redis.ZRangeBy{Min: "(" + strconv.FormatInt(ms(s.now()), 10), Max: "+inf"}).Result()
	if err != nil {
		return nil, wrap("list silences", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	hs := make([]*redis.MapStringStringCmd, len(ids))
	as := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		hs[i] = pipe.HGetAll(ctx, s.key("silence", id))
		as[i] = pipe.HGetAll(ctx, s.key("silence", id, "alerts"))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("list silences", err)
	}
	var out []*Silence
	for i := range ids {
		if len(hs[i].Val()) > 0 {
			out = append(out, parseSilence(hs[i].Val(), as[i].Val()))
		}
	}
	return out, nil
}

func parseSilence(h, alerts map[string]string) *Silence {
	n := func(k string) int64 { v, _ := strconv.ParseInt(h[k], 10, 64); return v }
	sil := &Silence{ID: h["id"], Kind: h["kind"], Matchers: h["matchers"], Incident: h["incident"], By: h["by"], ByID: h["by_id"],
		Reason: h["reason"], Created: fromMS(n("created")), Until: fromMS(n("until")), Ended: fromMS(n("ended")),
		EndedBy: h["ended_by"], Hits: n("hits"), LastHit: fromMS(n("last_hit")), Unlisted: n("unlisted")}
	for fp, v := range alerts {
		var a struct {
			N     float64 `json:"n"`
			Last  float64 `json:"last"`
			Key   string  `json:"key"`
			Title string  `json:"title"`
		}
		if json.Unmarshal([]byte(v), &a) == nil {
			sil.Alerts = append(sil.Alerts, SilencedAlert{Fingerprint: fp, Key: a.Key, Title: a.Title, Count: int64(a.N), Last: fromMS(int64(a.Last))})
		}
	}
	sort.Slice(sil.Alerts, func(i, j int) bool {
		if !sil.Alerts[i].Last.Equal(sil.Alerts[j].Last) {
			return sil.Alerts[i].Last.After(sil.Alerts[j].Last)
		}
		return sil.Alerts[i].Fingerprint < sil.Alerts[j].Fingerprint
	})
	return sil
}

// silenceCache is one replica's copy of the active label silences, compiled, with the version
// it was read at.
type silenceCache struct {
	mu      sync.Mutex
	loaded  bool
	version string
	active  []activeSilence
}

type activeSilence struct {
	id       string
	until    time.Time
	matchers []Matcher
}

func (c *silenceCache) invalidate() {
	c.mu.Lock()
	c.loaded = false
	c.mu.Unlock()
}

// labelSilences returns the active label silences and their version, read again when reload
// is set or nothing is cached.
func (s *Store) labelSilences(ctx context.Context, reload bool) (string, []activeSilence, error) {
	c := &s.sil
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loaded && !reload {
		return c.version, c.active, nil
	}
	res, err := loadSilencesScript.Run(ctx, s.rdb, []string{s.base}, ms(s.now())).StringSlice()
	if err != nil {
		return "", nil, wrap("read silences", err)
	}
	var active []activeSilence
	for i := 1; i+2 < len(res); i += 3 {
		matchers, err := ParseMatchers(res[i+1])
		if err != nil || len(matchers) == 0 {
			continue // written by CreateSilence, which parsed them: cannot happen
		}
		until, _ := strconv.ParseInt(res[i+2], 10, 64)
		active = append(active, activeSilence{id: res[i], until: fromMS(until), matchers: matchers})
	}
	c.loaded, c.version, c.active = true, res[0], active
	return c.version, active, nil
}

// silenceOf returns the first active silence among active that matches a firing alert, "" for none.
func silenceOf(active []activeSilence, a AlertRecord, now time.Time) string {
	if a.Resolved || len(a.Labels) == 0 {
		return ""
	}
	for _, sl := range active {
		if !sl.until.After(now) {
			continue
		}
		all := true
		for _, m := range sl.matchers {
			if !m.matches(a.Labels) {
				all = false
				break
			}
		}
		if all {
			return sl.id
		}
	}
	return ""
}
