package state

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Delivery kinds in the outbox.
const (
	KindRoot  = "root"  // post the incident's root message
	KindFlush = "flush" // coalesced duplicates: a thread reply and a root update
	KindEvent = "event" // a status change: a thread reply and a root update
	// KindNotice is a message to a channel outside any incident (probe notices without an
	// incident, health digests). Notices have no sequence.
	KindNotice = "notice"
	// KindUpdate edits the root and posts nothing (detection's numbers, every round).
	KindUpdate = "update"
)

// Delivery is one outbox entry: something to show in Slack for an incident. Within an incident,
// deliveries carry consecutive sequence numbers and are delivered in that order. What to show
// is the Event: KindEvent's status change (acknowledged, silenced, escalated…), or
// KindFlush's update (Name "news" with its News, "flood" with its Keys, or "" for a root
// update only; Count occurrences since Since, the last one's Detail); a notice's Detail is
// its text.
type Delivery struct {
	StreamID string
	Incident string
	Seq      int64
	Kind     string
	// Channel is where a notice goes; for an incident's entries, the incident's channel when
	// the entry was queued, so that a deliverer can wait out a channel Slack paused without
	// reading the incident.
	Channel string
	Event
}

// EnsureOutbox creates the outbox stream and its consumer group if missing.
func (s *Store) EnsureOutbox(ctx context.Context) error {
	err := s.rdb.XGroupCreateMkStream(ctx, s.key("outbox"), outboxGroup, "0").Err()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return wrap("create outbox group", err)
	}
	return nil
}

// ReadOutbox returns entries for consumer: with pending, the ones it already holds and has not
// completed (retries); otherwise new ones, waiting up to block.
func (s *Store) ReadOutbox(ctx context.Context, consumer string, pending bool, count int64, block time.Duration) ([]Delivery, error) {
	id := ">"
	if pending {
		id = "0"
		block = -1
	}
	res, err := s.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: outboxGroup, Consumer: consumer, Streams: []string{s.key("outbox"), id},
		Count: count, Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		if strings.Contains(err.Error(), "NOGROUP") {
			if err := s.EnsureOutbox(ctx); err != nil {
				return nil, err
			}
			return nil, nil
		}
		return nil, wrap("read outbox", err)
	}
	var out []Delivery
	for _, st := range res {
		for _, m := range st.Messages {
			if m.Values == nil { // deleted while pending
				_ = s.rdb.XAck(ctx, s.key("outbox"), outboxGroup, m.ID).Err()
				continue
			}
			out = append(out, parseDelivery(m))
		}
	}
	return out, nil
}

// ClaimStale takes over entries another consumer has held longer than minIdle (a replica that
// died mid-delivery) and returns them.
func (s *Store) ClaimStale(ctx context.Context, consumer string, minIdle time.Duration) ([]Delivery, error) {
	var out []Delivery
	start := "0-0"
	for i := 0; i < 10; i++ {
		msgs, next, err := s.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: s.key("outbox"), Group: outboxGroup, Consumer: consumer,
			MinIdle: minIdle, Start: start, Count: 100,
		}).Result()
		if err != nil {
			if strings.Contains(err.Error(), "NOGROUP") {
				return nil, s.EnsureOutbox(ctx)
			}
			return out, wrap("claim outbox", err)
		}
		for _, m := range msgs {
			out = append(out, parseDelivery(m))
		}
		if next == "0-0" || next == "" {
			break
		}
		start = next
	}
	return out, nil
}

func parseDelivery(m redis.XMessage) Delivery {
	v := m.Values
	seq, _ := strconv.ParseInt(str(v["seq"]), 10, 64)
	return Delivery{StreamID: m.ID, Incident: str(v["inc"]), Seq: seq, Kind: str(v["kind"]), Channel: str(v["channel"]),
		Event: parseEvent(v)}
}

// DeliveryState is what a deliverer needs to know before delivering: how far the incident's
// deliveries got and where its root message is.
type DeliveryState struct {
	Delivered int64
	RootTS    string
	Channel   string
}

// Delivery returns the incident's delivery progress (read with the incident, so that a
// delivery costs one read).
func (inc *Incident) Delivery() DeliveryState {
	return DeliveryState{Delivered: inc.Delivered, RootTS: inc.RootTS, Channel: inc.ListedIn()}
}

// Complete records d as delivered (with the root message's ts and channel for a root) and
// removes it from the outbox.
func (s *Store) Complete(ctx context.Context, d Delivery, rootTS, channel string) error {
	err := s.run(ctx, completeScript, []string{s.base}, d.StreamID, d.Incident, d.Seq, rootTS, channel).Err()
	return wrap("complete delivery", err)
}

// EnqueueNotice queues text for channel, outside any incident.
func (s *Store) EnqueueNotice(ctx context.Context, channel, text string) error {
	err := s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.key("outbox"),
		Values: []any{"kind", KindNotice, "channel", channel, "detail", text}}).Err()
	return wrap("enqueue notice", err)
}

// Drop removes a delivered notice (or an entry that cannot be delivered) from the outbox.
func (s *Store) Drop(ctx context.Context, d Delivery) error {
	pipe := s.rdb.TxPipeline()
	pipe.XAck(ctx, s.key("outbox"), outboxGroup, d.StreamID)
	pipe.XDel(ctx, s.key("outbox"), d.StreamID)
	_, err := pipe.Exec(ctx)
	return wrap("drop outbox entry", err)
}

// Pump moves due coalesced updates into the outbox; it is safe to run on every replica.
func (s *Store) Pump(ctx context.Context) (int, error) {
	res, err := s.one(s.run(ctx, pumpScript, []string{s.base}, ms(s.now()), 100).Result())
	if err != nil {
		return 0, wrap("pump outbox", err)
	}
	return int(res.int(0, "moved")), nil
}

// OutboxDepth is the number of entries not yet delivered.
func (s *Store) OutboxDepth(ctx context.Context) (int64, error) {
	n, err := s.rdb.XLen(ctx, s.key("outbox")).Result()
	return n, wrap("outbox depth", err)
}

// NextDue is the time the earliest coalesced update is due, or zero when none is.
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	z, err := s.rdb.ZRangeWithScores(ctx, s.key("due"), 0, 0).Result()
	if err != nil {
		return time.Time{}, wrap("next due", err)
	}
	if len(z) == 0 {
		return time.Time{}, nil
	}
	return fromMS(int64(z[0].Score)), nil
}

// Queued is when d entered the outbox: the time part of its stream id ("<ms>-<seq>").
func (d Delivery) Queued() time.Time {
	ms, _, ok := strings.Cut(d.StreamID, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil {
		return time.Time{}
	}
	return time.UnixMilli(n)
}
