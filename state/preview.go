package state

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/redis/go-redis/v9"
)

// PreviewHit is an open incident a silence would hold: the alerts of it whose kept labels
// match, with when each was last seen.
type PreviewHit struct {
	Incident *Incident
	Alerts   []PreviewAlert
}

// PreviewAlert is one alert a silence would hold.
type PreviewAlert struct {
	Fingerprint string
	Title       string
	Firing      bool
}

// previewScan is how many open incidents, newest first, a preview reads: a preview answers
// "what would this hold now", and the newest incidents are what a maintenance window is about.
const previewScan = 2000

// PreviewSilence returns the open incidents (the newest 2,000 read) with alerts whose kept
// labels the matchers match, newest first; the alerts are those of each that would be held.
// An alert recorded without its labels (a flood's, or one kept before contexts were) is not
// seen; Scanned says how many incidents were read.
func (s *Store) PreviewSilence(ctx context.Context, ms []Matcher) (hits []PreviewHit, scanned int, err error) {
	ids, err := s.rdb.ZRevRange(ctx, s.key("open"), 0, previewScan-1).Result()
	if err != nil {
		return nil, 0, wrap("preview silence", err)
	}
	pipe := s.rdb.Pipeline()
	ctxs := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		ctxs[i] = pipe.HGetAll(ctx, s.key("inc", id, "context"))
	}
	if len(ids) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, 0, wrap("preview silence", err)
		}
	}
	var matched []string
	byID := map[string][]PreviewAlert{}
	for i, id := range ids {
		for fp, raw := range ctxs[i].Val() {
			var c AlertContext
			if json.Unmarshal([]byte(raw), &c) != nil || !MatchesLabels(ms, c.Labels) {
				continue
			}
			if byID[id] == nil {
				matched = append(matched, id)
			}
			byID[id] = append(byID[id], PreviewAlert{Fingerprint: fp, Title: c.Title})
		}
	}
	for _, id := range matched {
		inc, err := s.Get(ctx, id)
		if err != nil {
			continue // closed meanwhile
		}
		as := byID[id]
		for j := range as {
			as[j].Firing = inc.Alerts[as[j].Fingerprint].Status != "resolved"
		}
		sort.Slice(as, func(a, b int) bool { return as[a].Fingerprint < as[b].Fingerprint })
		hits = append(hits, PreviewHit{Incident: inc, Alerts: as})
	}
	return hits, len(ids), nil
}
