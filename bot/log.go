package bot

import (
	"fmt"
	"log/slog"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/state"
)

// slogAdapter routes slack-go's debug output into slog at debug level.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Output(_ int, s string) error {
	a.l.Debug("slack-go", "msg", s)
	return nil
}

func (a slogAdapter) Println(v ...any) { a.l.Debug("slack-go", "msg", fmt.Sprint(v...)) }

func (a slogAdapter) Printf(format string, v ...any) {
	a.l.Debug("slack-go", "msg", fmt.Sprintf(format, v...))
}

func auditEntry(req commands.Request, action, target, outcome, detail string) state.AuditEntry {
	return state.AuditEntry{Actor: req.UserID, Action: action, Target: target, Outcome: outcome, Detail: detail,
		Channel: req.ChannelID, Via: req.Via}
}
