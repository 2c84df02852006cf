package state

import (
	"cmp"
	"context"
	"errors"
	"slices"
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

// EndFloods ends the floods whose rate has stayed at or below the limit for FloodQuietFor: each
// flood incident's thread says so once, across replicas. It returns the channels.
func (s *Store) EndFloods(ctx context.Context) ([]string, error) {
	res, err := s.one(s.run(ctx, endFloodsScript, []string{s.base}, ms(s.now())).Result())
	if err != nil {
		return nil, wrap("end floods", err)
	}
	return res.column("channel"), nil
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
	Limit            int64           // the limit that started the flood
	QuietFor         time.Duration   // its quiet_for
	Ended            time.Time       // when the flood ended; zero while it lasts
	BySeverity       []SeverityCount // the flood's distinct alerts by severity, most severe first
}

// SeverityCount is how many of a flood's distinct alerts (keys) came with a severity (1 is SEV1, 0 unknown).
type SeverityCount struct {
	Severity int
	Count    int64
}

// rank orders severities most severe first, unknown last.
func rank(sev int) int {
	if sev < 1 || sev > 5 {
		return 6
	}
	return sev
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
	sevs := pipe.ZRangeWithScores(ctx, s.key("inc", id, "flood:severity"), 0, -1)
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
	for _, z := range sevs.Val() {
		sev, _ := strconv.Atoi(str(z.Member))
		f.BySeverity = append(f.BySeverity, SeverityCount{Severity: sev, Count: int64(z.Score)})
	}
	slices.SortFunc(f.BySeverity, func(a, b SeverityCount) int { return cmp.Compare(rank(a.Severity), rank(b.Severity)) })
	f.Distinct = f.Listed
	if f.Unlisted > 0 {
		f.Distinct += unlisted.Val()
	}
	return f, nil
}
