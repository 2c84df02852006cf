package commands

import (
	"context"
	"sync/atomic"

	"github.com/streamwatch/streamwatch/state"
)

// Replication confirms that what a command changed reached Redis's replicas
// (redis.min_replicas_acked; state.Store): Mark before the command, Confirm after it.
type Replication interface {
	Replicated() bool
	Mark(ctx context.Context) (state.ReplicationMark, error)
	Confirm(ctx context.Context, use string, m state.ReplicationMark) error
}

// changesKey carries, in a command's context, whether it changed something: every change is
// audited (record), and a repair or restore plan is stored.
type changesKey struct{}

// changed notes in ctx that the command changed something.
func changed(ctx context.Context) {
	if c, ok := ctx.Value(changesKey{}).(*atomic.Bool); ok {
		c.Store(true)
	}
}

// replicated runs a command and, when it changed something and changes wait for the
// replicas, adds to its reply that the change is not yet safe when they do not confirm it.
func (h *Handler) replicated(ctx context.Context, run func(ctx context.Context) Reply) Reply {
	if h.Replication == nil || !h.Replication.Replicated() {
		return run(ctx)
	}
	mark, markErr := h.Replication.Mark(ctx)
	var c atomic.Bool
	r := run(context.WithValue(ctx, changesKey{}, &c))
	if !c.Load() {
		return r
	}
	err := markErr
	if err == nil {
		err = h.Replication.Confirm(ctx, "command", mark)
	}
	if err != nil {
		r.Sections = append(r.Sections, notYetSafe(err))
	}
	return r
}
