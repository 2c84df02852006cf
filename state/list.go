package state

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Lists. Every open incident is in its channel's index (P:chan:<channel>, by first seen), kept
// by the scripts that open and close incidents, so that incident list and the commands typed
// without an ID read one channel's incidents, a page at a time, never every open incident.
// Status and severity change on the hot path (an alert raises a severity, a click acknowledges):
// they are filtered from the channel's rows instead of being indexed, which would cost every
// such change two writes.

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

func (f ListFilter) zero() bool {
	return f.User == "" && f.Severity == 0 && f.Status == "" && f.Pipeline == "" && f.Channels == nil
}

func (f ListFilter) holds(inc *Incident) bool {
	return (f.User == "" || inc.Owner == f.User || inc.AckBy == f.User) &&
		(f.Severity == 0 || inc.Severity == f.Severity) &&
		(f.Status == "" || inc.Status == f.Status) &&
		(f.Pipeline == "" || inc.Pipeline == f.Pipeline) &&
		(f.Channels == nil || f.Channels[inc.Channel])
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

// listChunk is how many ids a filtered list reads at a time.
const listChunk = 50

// ListPage returns up to n of channel's open incidents that f lets through, newest first,
// starting after incident after (""; the first page). With channel "", every channel's.
func (s *Store) ListPage(ctx context.Context, channel string, f ListFilter, after string, n int) (*Page, error) {
	if err := s.IndexChannels(ctx); err != nil {
		return nil, err
	}
	key := s.key("open")
	if channel != "" {
		key = s.key("chan", channel)
	}
	start, err := s.pageStart(ctx, key, after)
	if err != nil {
		return nil, err
	}
	page := &Page{}
	chunk := int64(n)
	if !f.zero() {
		chunk = max(int64(n)+1, listChunk)
	}
	for first := true; ; first = false {
		pipe := s.rdb.Pipeline()
		idsCmd := pipe.ZRevRange(ctx, key, start, start+chunk-1)
		var card *redis.IntCmd
		if first {
			card = pipe.ZCard(ctx, key)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return nil, wrap("list incidents", err)
		}
		if first {
			page.Open = card.Val()
		}
		ids := idsCmd.Val()
		incs, err := s.heads(ctx, ids)
		if err != nil {
			return nil, err
		}
		for i, inc := range incs {
			if inc == nil || inc.Status == StatusResolved {
				// Closed while an older version ran, or between its close and this read.
				s.rdb.ZRem(ctx, key, ids[i])
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
		start += int64(len(ids))
		if page.More || int64(len(ids)) < chunk {
			break
		}
		if f.zero() && len(page.Incidents) == n {
			// Unfiltered, the index's size says whether older ones remain.
			page.More = start < page.Open
			break
		}
	}
	if page.More && len(page.Incidents) > 0 {
		page.Next = page.Incidents[len(page.Incidents)-1].ID
	}
	return page, nil
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

// IndexChannels puts the open incidents an older streamwatch opened (before channels had an
// index) into their channels' index, once per deployment (a marker says it was done); the app
// runs it at start, and a list before it would.
func (s *Store) IndexChannels(ctx context.Context) error {
	if s.indexed.Load() {
		return nil
	}
	marker := s.key("chan-indexed")
	done, err := s.rdb.Exists(ctx, marker).Result()
	if err != nil {
		return wrap("index channels", err)
	}
	if done == 0 {
		open, err := s.rdb.ZRangeWithScores(ctx, s.key("open"), 0, -1).Result()
		if err != nil {
			return wrap("index channels", err)
		}
		pipe := s.rdb.Pipeline()
		chans := make([]*redis.SliceCmd, len(open))
		for i, z := range open {
			chans[i] = pipe.HMGet(ctx, s.key("inc", str(z.Member)), "channel", "status")
		}
		if len(open) > 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				return wrap("index channels", err)
			}
		}
		pipe = s.rdb.Pipeline()
		for i, z := range open {
			v := chans[i].Val()
			if len(v) == 2 && v[0] != nil && str(v[1]) != StatusResolved {
				pipe.ZAdd(ctx, s.key("chan", str(v[0])), redis.Z{Score: indexScore(int64(z.Score), str(z.Member)), Member: z.Member})
			}
		}
		pipe.Set(ctx, marker, "1", 0)
		if _, err := pipe.Exec(ctx); err != nil {
			return wrap("index channels", err)
		}
	}
	s.indexed.Store(true)
	return nil
}
