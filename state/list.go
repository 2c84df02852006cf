package state

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Lists. Every open incident is in its channel's index (P:chan:<channel>: where its root is),
// its status's (P:status:<status>) and its severity's (P:sev:<n>), all by first seen, kept by
// the scripts that open, close, acknowledge, relocate and change the severity of incidents.
// A list reads the narrowest index it names, a page at a time, and checks the others'
// membership server-side (ZMSCORE): it reads the incidents it shows, never every open
// incident, and a filter costs what its page does unless few of the narrowest index pass.

// ListFilter narrows a list of open incidents; its zero value lets every one through.
type ListFilter struct {
	User     string // "mine": assigned to this user or acknowledged by them
	Severity int    // 1 for SEV1; 0: any
	Status   string // StatusOpen or StatusAcknowledged; "": either
	Pipeline string
	// Channels, when set, are the channels whose incidents may be listed (a list of every
	// channel, for one person).
	Channels map[string]bool
}

// indexed is true when the indexes alone decide which incidents f lets through.
func (f ListFilter) indexed() bool {
	return f.User == "" && f.Pipeline == "" && f.Channels == nil
}

func (f ListFilter) holds(inc *Incident) bool {
	return (f.User == "" || inc.Owner == f.User || inc.AckBy == f.User) &&
		(f.Severity == 0 || inc.Severity == f.Severity) &&
		(f.Status == "" || inc.Status == f.Status) &&
		(f.Pipeline == "" || inc.Pipeline == f.Pipeline) &&
		(f.Channels == nil || f.Channels[inc.ListedIn()])
}

// Page is a page of open incidents, newest first.
type Page struct {
	Incidents []*Incident
	// More is true when older incidents match too; Next is where the next page starts (the
	// id of this page's last incident).
	More bool
	Next string
	// Open is how many incidents are open in the channel (all channels for ""), unfiltered.
	Open int64
}

// listChunk is how many ids a list reads at a time when the indexes do not decide alone.
const listChunk = 50

// ListPage returns up to n of channel's open incidents that f lets through, newest first,
// starting after incident after (""; the first page). With channel "", every channel's.
func (s *Store) ListPage(ctx context.Context, channel string, f ListFilter, after string, n int) (*Page, error) {
	if err := s.IndexChannels(ctx); err != nil {
		return nil, err
	}
	// The indexes the list names: the channel's (every open incident's for ""), then the
	// status's and the severity's.
	idx := []string{s.key("open")}
	if channel != "" {
		idx[0] = s.key("chan", channel)
	}
	if f.Status != "" {
		idx = append(idx, s.key("status", f.Status))
	}
	if f.Severity != 0 {
		idx = append(idx, s.key("sev", strconv.Itoa(f.Severity)))
	}
	chunk := func(checked bool) int64 {
		if checked || !f.indexed() {
			return max(int64(n)+1, listChunk)
		}
		return int64(n) + 1
	}
	// One index: its first chunk comes with its size, in one round trip. More: their sizes
	// come first, to walk the narrowest.
	var start int64
	var first *redis.StringSliceCmd
	if len(idx) == 1 {
		var err error
		if start, err = s.pageStart(ctx, idx[0], after); err != nil {
			return nil, err
		}
	}
	pipe := s.rdb.Pipeline()
	cards := make([]*redis.IntCmd, len(idx))
	for i, k := range idx {
		cards[i] = pipe.ZCard(ctx, k)
	}
	if len(idx) == 1 {
		first = pipe.ZRevRange(ctx, idx[0], start, start+chunk(false)-1)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, wrap("list incidents", err)
	}
	page := &Page{Open: cards[0].Val()}
	// Walk the narrowest; check the others, but for every open incident's (each index holds
	// only open ones).
	walk := 0
	for i := range idx {
		if cards[i].Val() < cards[walk].Val() {
			walk = i
		}
	}
	var checks []string
	for i, k := range idx {
		if i != walk && (i > 0 || channel != "") {
			checks = append(checks, k)
		}
	}
	if first == nil {
		var err error
		if start, err = s.pageStart(ctx, idx[walk], after); err != nil {
			return nil, err
		}
	}
	size := chunk(len(checks) > 0)
	var queue []string // ids that passed the indexes, not read yet
	done := false      // the walk reached the index's end
	for {
		if len(queue) == 0 {
			if done {
				break
			}
			var ids []string
			if first != nil {
				ids, first = first.Val(), nil
			} else {
				var err error
				if ids, err = s.rdb.ZRevRange(ctx, idx[walk], start, start+size-1).Result(); err != nil {
					return nil, wrap("list incidents", err)
				}
			}
			start += int64(len(ids))
			done = int64(len(ids)) < size
			var err error
			if queue, err = s.members(ctx, ids, checks); err != nil {
				return nil, err
			}
			continue
		}
		if len(page.Incidents) == n && f.indexed() {
			// One more passed the indexes: there is more (unindexed filters read it first).
			page.More = true
			break
		}
		take := queue
		if f.indexed() {
			take = queue[:min(len(queue), n-len(page.Incidents))]
		}
		queue = queue[len(take):]
		incs, err := s.heads(ctx, take)
		if err != nil {
			return nil, err
		}
		for i, inc := range incs {
			if inc == nil || inc.Status == StatusResolved {
				// Closed while an older version ran, or between its close and this read.
				s.unlist(ctx, take[i], idx)
				continue
			}
			if !f.holds(inc) {
				continue
			}
			if len(page.Incidents) == n {
				page.More = true
				break
			}
			page.Incidents = append(page.Incidents, inc)
		}
		if page.More {
			break
		}
	}
	if page.More && len(page.Incidents) > 0 {
		page.Next = page.Incidents[len(page.Incidents)-1].ID
	}
	return page, nil
}

// members returns those of ids that every index of checks holds, in order, in one round trip.
func (s *Store) members(ctx context.Context, ids, checks []string) ([]string, error) {
	if len(checks) == 0 || len(ids) == 0 {
		return ids, nil
	}
	pipe := s.rdb.Pipeline()
	scores := make([]*redis.FloatSliceCmd, len(checks))
	for i, k := range checks {
		scores[i] = pipe.ZMScore(ctx, k, ids...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, wrap("list incidents", err)
	}
	var out []string
next:
	for j, id := range ids {
		for _, c := range scores {
			if c.Val()[j] == 0 { // not a member: no index score is 0
				continue next
			}
		}
		out = append(out, id)
	}
	return out, nil
}

// unlist takes a closed incident out of the indexes idx, in case an older version left it there.
func (s *Store) unlist(ctx context.Context, id string, idx []string) {
	pipe := s.rdb.Pipeline()
	for _, k := range idx {
		pipe.ZRem(ctx, k, id)
	}
	_, _ = pipe.Exec(ctx) // best effort: the next list tries again
}

// pageStart is the rank, newest first, at which a page after incident after begins.
func (s *Store) pageStart(ctx context.Context, key, after string) (int64, error) {
	if after == "" {
		return 0, nil
	}
	after = NormalizeID(after)
	r, err := s.rdb.ZRevRank(ctx, key, after).Result()
	if err == nil {
		return r + 1, nil
	}
	if !errors.Is(err, redis.Nil) {
		return 0, wrap("list incidents", err)
	}
	// It closed since the last page: start at the first one opened before it.
	fs, err := s.rdb.HGet(ctx, s.key("inc", after), "first_seen").Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, wrap("list incidents", err)
	}
	ms, _ := strconv.ParseInt(fs, 10, 64)
	n, err := s.rdb.ZCount(ctx, key, "("+strconv.FormatFloat(indexScore(ms, after), 'f', 0, 64), "+inf").Result()
	return n, wrap("list incidents", err)
}

// indexScore is incident id's score in its channel's index: its first seen time (ms), then
// its number, so that incidents opened in one millisecond list newest first too (open_in in
// state/lua/lib.lua).
func indexScore(firstSeen int64, id string) float64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(id, "INC-"), 10, 64)
	return float64(firstSeen*1000 + n%1000)
}

// heads reads the incidents ids in one round trip, without their alert lists; nil for one
// that is gone.
func (s *Store) heads(ctx context.Context, ids []string) ([]*Incident, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, s.key("inc", id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, wrap("list incidents", err)
	}
	out := make([]*Incident, len(ids))
	for i, c := range cmds {
		if len(c.Val()) > 0 {
			out[i] = parseIncident(c.Val(), nil)
		}
	}
	return out, nil
}

// OpenIn returns up to n of channel's open incidents (ids, newest first) and how many are open
// there: how a command typed without an ID finds the incident it means.
func (s *Store) OpenIn(ctx context.Context, channel string, n int) ([]string, int64, error) {
	page, err := s.ListPage(ctx, channel, ListFilter{}, "", n)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, len(page.Incidents))
	for i, inc := range page.Incidents {
		ids[i] = inc.ID
	}
	return ids, page.Open, nil
}

// indexVersion is what P:chan-indexed holds once the open incidents an older streamwatch
// opened are in every list index ("1": in their channel's only, as the version before wrote).
const indexVersion = "2"

// IndexChannels puts the open incidents an older streamwatch opened (before the lists had
// their indexes) into their channel's, status's and severity's index, once per deployment (a
// marker says it was done); the app runs it at start, and a list before it would.
func (s *Store) IndexChannels(ctx context.Context) error {
	if s.indexed.Load() {
		return nil
	}
	marker := s.key("chan-indexed")
	done, err := s.rdb.Get(ctx, marker).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return wrap("index channels", err)
	}
	if done != indexVersion {
		open, err := s.rdb.ZRangeWithScores(ctx, s.key("open"), 0, -1).Result()
		if err != nil {
			return wrap("index channels", err)
		}
		pipe := s.rdb.Pipeline()
		fields := make([]*redis.SliceCmd, len(open))
		for i, z := range open {
			fields[i] = pipe.HMGet(ctx, s.key("inc", str(z.Member)), "channel", "status", "severity", "root_channel")
		}
		if len(open) > 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				return wrap("index channels", err)
			}
		}
		pipe = s.rdb.Pipeline()
		for i, z := range open {
			v := fields[i].Val()
			if len(v) != 4 || v[0] == nil || (str(v[1]) != StatusOpen && str(v[1]) != StatusAcknowledged) {
				continue
			}
			ch, sev := str(v[0]), str(v[2])
			if r := str(v[3]); r != "" {
				ch = r
			}
			if sev == "" {
				sev = "0"
			}
			m := redis.Z{Score: indexScore(int64(z.Score), str(z.Member)), Member: z.Member}
			pipe.ZAdd(ctx, s.key("chan", ch), m)
			pipe.ZAdd(ctx, s.key("status", str(v[1])), m)
			pipe.ZAdd(ctx, s.key("sev", sev), m)
		}
		pipe.Set(ctx, marker, indexVersion, 0)
		if _, err := pipe.Exec(ctx); err != nil {
			return wrap("index channels", err)
		}
	}
	s.indexed.Store(true)
	return nil
}
