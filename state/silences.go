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
	// Starts is when a silence made for later begins to hold (zero: at once).
	Starts time.Time
	Until  time.Time
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
// or with Regex, match it whole. A Negative matcher (!=, !~) holds when the label does not
// equal (match) it, an absent label counting as empty, as in Alertmanager.
type Matcher struct {
	Name     string
	Value    string
	Regex    bool
	Negative bool
	re       *regexp.Regexp
}

func (m Matcher) String() string {
	op := "="
	switch {
	case m.Regex && m.Negative:
		op = "!~"
	case m.Regex:
		op = "=~"
	case m.Negative:
		op = "!="
	}
	return m.Name + op + m.Value
}

func (m Matcher) matches(labels map[string]string) bool {
	v, ok := labels[m.Name]
	if !ok && !m.Negative {
		return false
	}
	eq := v == m.Value
	if m.Regex {
		eq = m.re.MatchString(v)
	}
	return eq != m.Negative
}

// MatchesLabels reports whether every matcher holds for labels.
func MatchesLabels(ms []Matcher, labels map[string]string) bool {
	for _, m := range ms {
		if !m.matches(labels) {
			return false
		}
	}
	return len(ms) > 0
}

// matcherStart finds where each matcher of "LABEL=VALUE,LABEL=~REGEX" begins: a value may hold
// commas (a{1,3}) as long as no label name and = follow them.
var matcherStart = regexp.MustCompile(`(?:^|,)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)`)

// ParseMatchers reads "LABEL=VALUE[,LABEL=~REGEX,LABEL!=VALUE,LABEL!~REGEX…]". Values may be
// quoted ("client replied sms"); regular expressions are RE2, matched against the whole value.
// At least one matcher must need a label to be there (a silence of only negative ones would
// hold nearly every alert). Errors say which part is wrong.
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
		op := text[loc[4]:loc[5]]
		m := Matcher{Name: text[loc[2]:loc[3]], Regex: strings.HasSuffix(op, "~"), Negative: op[0] == '!', Value: strings.TrimSpace(text[loc[5]:end])}
		if len(m.Value) >= 2 && strings.HasPrefix(m.Value, `"`) && strings.HasSuffix(m.Value, `"`) {
			m.Value = m.Value[1 : len(m.Value)-1]
		}
		if m.Value == "" && !m.Negative {
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
	positive := false
	for _, m := range out {
		positive = positive || (!m.Negative && !(m.Regex && m.re.MatchString("")))
	}
	if !positive {
		return nil, errors.New("at least one matcher must need its label (LABEL=VALUE, or a LABEL=~REGEX that does not match an empty value): negative matchers alone would hold nearly every alert")
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
	return s.CreateSilenceFrom(ctx, matchers, time.Time{}, until, by, reason)
}

// CreateSilenceFrom makes a label silence that holds from starts (zero: now) until the given
// time, and returns its id: a maintenance window planned ahead holds nothing before it begins.
func (s *Store) CreateSilenceFrom(ctx context.Context, matchers []Matcher, starts, until time.Time, by Maker, reason string) (string, error) {
	if len(matchers) == 0 {
		return "", errors.New("a silence needs at least one matcher")
	}
	var from int64
	if !starts.IsZero() {
		from = ms(starts)
	}
	res, err := s.one(s.run(ctx, createSilenceScript, []string{s.base}, MatchersText(matchers), ms(until), by.Name, by.ID, reason,
		ms(s.now()), s.retentionMS(), from).Result())
	if err != nil {
		return "", wrap("create silence", err)
	}
	sid := res.str(0, "silence")
	s.sil.invalidate()
	return sid, nil
}

// SilenceIncident silences incident id until the given time (replacing a silence it has) and
// returns the silence's id.
func (s *Store) SilenceIncident(ctx context.Context, id string, until time.Time, by Maker, reason string) (string, error) {
	id = NormalizeID(id)
	res, err := s.one(s.run(ctx, silenceIncidentScript, []string{s.base}, id, ms(until), by.Name, by.ID, reason,
		ms(s.now()), s.retentionMS()).Result())
	if err != nil {
		return "", wrap("silence "+id, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return "", &ChangeError{Incident: id, Reason: r}
	}
	return res.str(0, "silence"), nil
}

// ExtendSilence moves the end of active silence sid by d and returns its new end.
func (s *Store) ExtendSilence(ctx context.Context, sid string, d time.Duration, actor string) (time.Time, error) {
	sid = NormalizeSilenceID(sid)
	res, err := s.one(s.run(ctx, extendSilenceScript, []string{s.base}, sid, d.Milliseconds(), actor, ms(s.now()), s.retentionMS()).Result())
	if err != nil {
		return time.Time{}, wrap("extend "+sid, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return time.Time{}, &SilenceError{ID: sid, Reason: r}
	}
	s.sil.invalidate()
	return fromMS(res.int(0, "until")), nil
}

// ExpireSilence ends silence sid now, as actor; it returns the silence's kind and, for an
// incident silence, its incident.
func (s *Store) ExpireSilence(ctx context.Context, sid, actor string) (kind, incident string, err error) {
	sid = NormalizeSilenceID(sid)
	res, err := s.one(s.run(ctx, expireSilenceScript, []string{s.base}, sid, actor, ms(s.now()), s.retentionMS()).Result())
	if err != nil {
		return "", "", wrap("expire "+sid, err)
	}
	if r := res.str(0, "result"); r != "ok" {
		return "", "", &SilenceError{ID: sid, Reason: r}
	}
	s.sil.invalidate()
	return res.str(0, "kind"), res.str(0, "incident"), nil
}

// ExpireSilences ends the silences whose time has come, each once across replicas, and
// returns their ids. The maintenance pass runs it.
func (s *Store) ExpireSilences(ctx context.Context) ([]string, error) {
	res, err := s.one(s.run(ctx, expireDueSilencesScript, []string{s.base}, ms(s.now()), 100, s.retentionMS()).Result())
	if err != nil {
		return nil, wrap("expire silences", err)
	}
	return res.column("silence"), nil
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
		Reason: h["reason"], Created: fromMS(n("created")), Starts: fromMS(n("starts")), Until: fromMS(n("until")), Ended: fromMS(n("ended")),
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
	id            string
	starts, until time.Time
	matchers      []Matcher
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
	res, err := s.one(s.run(ctx, loadSilencesScript, []string{s.base}, ms(s.now())).Result())
	if err != nil {
		return "", nil, wrap("read silences", err)
	}
	var active []activeSilence
	for i := range res.len() {
		if res.str(i, "silence") == "" {
			continue // the row that carries the version alone
		}
		matchers, err := ParseMatchers(res.str(i, "matchers"))
		if err != nil || len(matchers) == 0 {
			continue // written by CreateSilence, which parsed them: cannot happen
		}
		active = append(active, activeSilence{id: res.str(i, "silence"), starts: fromMS(res.int(i, "starts")), until: fromMS(res.int(i, "until")), matchers: matchers})
	}
	c.loaded, c.version, c.active = true, res.str(0, "version"), active
	return c.version, active, nil
}

// silenceOf returns the first active silence among active that matches a firing alert, "" for none.
func silenceOf(active []activeSilence, a AlertRecord, now time.Time) string {
	if a.Resolved || len(a.Labels) == 0 {
		return ""
	}
	for _, sl := range active {
		// A silence made for later is cached from when it is made: it holds from its start.
		if !sl.until.After(now) || sl.starts.After(now) {
			continue
		}
		if MatchesLabels(sl.matchers, a.Labels) {
			return sl.id
		}
	}
	return ""
}
