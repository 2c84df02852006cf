package state

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// News. An incident's thread hears of an alert only when the alert brings something new: it
// joins the incident (a fingerprint the incident has not seen), its labels or its title and
// annotations changed, it fires again after it resolved, or it resolves while others still
// fire. An identical re-send (Alertmanager repeats a whole group at every group_interval and
// repeat_interval) only counts: the root's occurrences and last seen change, nothing else. The
// record script tells them apart by a digest of each alert, kept with the alert's state; news
// waits in a short list under the incident until its coalesced update (the pump), which turns
// it into one thread reply.

// maxNews is how many news items an incident keeps for its next update; more are counted.
const maxNews = 10

// MaxTimelineEvents is how many events an incident's timeline keeps (the newest); the
// incident counts them all, so that a reader can say how many were dropped.
const MaxTimelineEvents = 10000

// News kinds, as the pump hands them to the deliverer (Delivery.News, each with the alert's
// one-line detail).
const (
	NewsJoined      = "joined"       // a new alert joined the incident (after the webhook that opened it)
	NewsLabels      = "labels"       // a known alert's labels changed
	NewsAnnotations = "annotations"  // a known alert's title, summary or annotations changed
	NewsAgain       = "again"        // a resolved alert fires again
	NewsResolved    = "resolved"     // one alert resolved, others still fire
	NewsAllResolved = "all_resolved" // every alert resolved while the incident was silenced
)

// Bounds of what an alert's context keeps (incident show's labels and annotations).
const (
	maxContextValue = 1000
	maxContextBytes = 8 << 10
)

// AlertContext is what incident show lists of one alert: its title, labels, annotations and
// links, as the alert last brought them (cut to maxContextValue bytes a value).
type AlertContext struct {
	Title       string            `json:"title"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Links       map[string]string `json:"links,omitempty"`
}

// alertDigest is the hex digest recordScript compares to tell an identical re-send from a
// changed alert: 8 digits of the labels, then 8 of the title and the annotations. It is
// FNV-1a (64 bits, folded to 32 for each half), computed here without allocating: it runs for
// every alert of a storm, and it only has to tell one alert's versions apart.
func alertDigest(a AlertRecord) string {
	var b [8]byte
	binary.BigEndian.PutUint32(b[:4], mapDigest(a.Labels, ""))
	binary.BigEndian.PutUint32(b[4:], mapDigest(a.Annotations, a.Title))
	return hex.EncodeToString(b[:])
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvField hashes s after its length (a varint), so that no two different sequences of
// fields hash the same bytes.
func fnvField(h uint64, s string) uint64 {
	n := uint64(len(s))
	for ; n >= 0x80; n >>= 7 {
		h = (h ^ (n&0x7f | 0x80)) * fnvPrime
	}
	h = (h ^ n) * fnvPrime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func mapDigest(m map[string]string, head string) uint32 {
	h := fnvField(fnvOffset, head)
	var small [16]string // labels and annotations are few: no allocation
	names := small[:0]
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		h = fnvField(fnvField(h, k), m[k])
	}
	return uint32(h ^ h>>32)
}

// alertContext encodes a's context for recordScript, within maxContextBytes: values are cut,
// and annotations, then labels, are left out when still too big.
func alertContext(a AlertRecord) string {
	c := AlertContext{Title: cut(a.Title, maxContextValue), Labels: cutMap(a.Labels), Annotations: cutMap(a.Annotations), Links: cutMap(a.Links)}
	b, err := json.Marshal(c)
	for _, drop := range []*map[string]string{&c.Annotations, &c.Labels} {
		if err == nil && len(b) <= maxContextBytes {
			break
		}
		*drop = nil
		b, err = json.Marshal(c)
	}
	if err != nil || len(b) > maxContextBytes {
		return ""
	}
	return string(b)
}

// linksJSON encodes an alert's links for its incident's root ("" for none).
func linksJSON(links map[string]string) string {
	if len(links) == 0 {
		return ""
	}
	b, err := json.Marshal(cutMap(links))
	if err != nil {
		return ""
	}
	return string(b)
}

func cutMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != "" {
			out[cut(k, 200)] = cut(v, maxContextValue)
		}
	}
	return out
}

// cut cuts s to at most n bytes without splitting a rune.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// AlertContexts returns what the incident keeps of each listed alert (labels, annotations,
// links), by fingerprint. Alerts of a flood incident, and alerts recorded before streamwatch
// kept contexts, have none.
func (s *Store) AlertContexts(ctx context.Context, id string) (map[string]AlertContext, error) {
	id = NormalizeID(id)
	raw, err := s.rdb.HGetAll(ctx, s.key("inc", id, "context")).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap("read alert contexts of "+id, err)
	}
	out := make(map[string]AlertContext, len(raw))
	for fp, v := range raw {
		var c AlertContext
		if json.Unmarshal([]byte(v), &c) == nil {
			out[fp] = c
		}
	}
	return out, nil
}

// FullTimeline returns every event the incident's timeline keeps, oldest first ("opened"
// included), and how many older events it dropped (beyond MaxTimelineEvents).
func (s *Store) FullTimeline(ctx context.Context, id string) ([]Event, int64, error) {
	id = NormalizeID(id)
	pipe := s.rdb.Pipeline()
	n := pipe.XLen(ctx, s.key("inc", id, "timeline"))
	total := pipe.HGet(ctx, s.key("inc", id), "events")
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, wrap("read timeline", err)
	}
	events, err := s.Timeline(ctx, id, n.Val()+1)
	if err != nil {
		return nil, 0, err
	}
	all, _ := strconv.ParseInt(total.Val(), 10, 64)
	return events, max(all-n.Val(), 0), nil
}
