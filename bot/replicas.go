package bot

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/streamwatch/streamwatch/integrations/alerts"
	"github.com/streamwatch/streamwatch/state"
)

// With redis.min_replicas_acked, what the bot tells others waits for Redis's replicas
// (state/replicas.go): a webhook's 2xx, and the deliverer's claims and completions, without
// which a failover could lose a claim (another replica then posts the same message) or a
// completion (the entry is due again after its poster forgot what Slack took).

// notReplicated answers a webhook whose alerts the primary recorded but fewer replicas than
// asked for confirmed: 503, so that the sender retries. The retry finds the incidents and
// counts the alerts once more as duplicates; when a failover lost them, it records them again.
func (b *Bot) notReplicated(w http.ResponseWriter, source string, list []alerts.Alert, outs []state.Outcome, err error) {
	m := b.opt.Metrics
	m.AlertsReceived.WithLabelValues(source, "unreplicated").Add(float64(len(list)))
	for _, out := range outs {
		if out.Result == state.ResultOpened || out.FloodOpened {
			m.IncidentsOpened.Inc()
		}
	}
	b.log.Warn("webhook refused: the redis replicas did not confirm it", "source", source, "err", err)
	w.Header().Set("Retry-After", "5")
	fail(w, http.StatusServiceUnavailable, fmt.Sprintf("recorded on the Redis primary, but %v; retry", err))
}

// Replication is how the deliverer waits for Redis's replicas (state.Store).
type Replication interface {
	Replicated() bool
	Mark(ctx context.Context) (state.ReplicationMark, error)
	Confirm(ctx context.Context, use string, m state.ReplicationMark) error
}

// outbox is the deliverer's Outbox: the store, or, when changes wait for replicas, the store
// behind replicatedOutbox.
func (b *Bot) outbox() Outbox {
	if b.opt.Store.Replicated() {
		return replicatedOutbox{Outbox: b.opt.Store, r: b.opt.Store}
	}
	return b.opt.Store
}

// replicatedOutbox is an Outbox whose claims (reading entries, claiming a stalled replica's)
// and completions (Complete, Drop) return only once the replicas confirm them. One they do not
// confirm is an error that wraps state.ErrUnavailable as well as state.ErrNotReplicated: the
// deliverer stops its pass, keeps what Slack took, and tries again.
type replicatedOutbox struct {
	Outbox
	r Replication
}

// confirmed runs change, and confirms it when it changed something.
func (o replicatedOutbox) confirmed(ctx context.Context, change func() (bool, error)) error {
	m, err := o.r.Mark(ctx)
	if err != nil {
		return err
	}
	changed, err := change()
	if err != nil || !changed {
		return err
	}
	if err := o.r.Confirm(ctx, "outbox", m); err != nil {
		return fmt.Errorf("outbox: %w: %w", state.ErrUnavailable, err)
	}
	return nil
}

func (o replicatedOutbox) ReadOutbox(ctx context.Context, consumer string, pending bool, count int64, block time.Duration) ([]state.Delivery, error) {
	var list []state.Delivery
	err := o.confirmed(ctx, func() (bool, error) {
		var err error
		list, err = o.Outbox.ReadOutbox(ctx, consumer, pending, count, block)
		return len(list) > 0, err
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

func (o replicatedOutbox) ClaimStale(ctx context.Context, consumer string, minIdle time.Duration) ([]state.Delivery, error) {
	var list []state.Delivery
	err := o.confirmed(ctx, func() (bool, error) {
		var err error
		list, err = o.Outbox.ClaimStale(ctx, consumer, minIdle)
		return len(list) > 0, err
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

func (o replicatedOutbox) Complete(ctx context.Context, d state.Delivery, rootTS, channel string) error {
	return o.confirmed(ctx, func() (bool, error) { return true, o.Outbox.Complete(ctx, d, rootTS, channel) })
}

func (o replicatedOutbox) Drop(ctx context.Context, d state.Delivery) error {
	return o.confirmed(ctx, func() (bool, error) { return true, o.Outbox.Drop(ctx, d) })
}

func (o replicatedOutbox) Relocate(ctx context.Context, id, channel, ts string) error {
	return o.confirmed(ctx, func() (bool, error) { return true, o.Outbox.Relocate(ctx, id, channel, ts) })
}
