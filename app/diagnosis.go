package app

import (
	"context"
	"log/slog"

	"github.com/streamwatch/streamwatch/bot"
	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// enrich posts a diagnosis into an incident's thread: once per incident when it opens, and
// again whenever someone asks.
func enrich(ctx context.Context, d *pipeline.Diagnoser, store *state.Store, log *slog.Logger, incident, name string, again bool) {
	if _, ok := d.Config.Pipeline(name); !ok {
		return
	}
	once := "diagnosis"
	if again {
		once = ""
	}
	v, err := d.Diagnose(ctx, name)
	if err != nil {
		log.Warn("diagnosis for incident", "incident", incident, "err", err)
		return
	}
	r := commands.VerdictReply(v)
	r.Text = "Automatic diagnosis — " + r.Text
	if _, err := store.Note(ctx, incident, "note", "streamwatch", bot.ReplyText(r), once); err != nil {
		log.Warn("post diagnosis", "incident", incident, "err", err)
	}
}
