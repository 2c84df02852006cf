package commands

import (
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesOutsideRender: commands' handlers take requests apart and call the stores;
// every sentence and command hint they answer with is made in render_*.go (issue 29). What
// they keep is the grammar's command paths and the audit trail's action values.
func TestNoSentencesOutsideRender(t *testing.T) {
	kept := map[string]string{
		"diagnose again":   "an audit record's action",
		"postmortem draft": "an audit record's action",
	}
	for _, path := range []string{"checkpoint backup", "checkpoint backups", "checkpoint repair",
		"checkpoint restore", "incident silence", "probe history", "silence expire", "silence extend"} {
		kept[path] = "a command path: the grammar (checkpoint backup is also its audit action)"
	}
	notext.CheckExcept(t, ".", 10, func(name string) bool { return strings.HasPrefix(name, "render_") }, kept)
}
