package kubelogs

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInKubelogs: kubelogs says which pod and run it read as a driverlog.PodNote
// that commands/render_kubelogs.go words (issue 29); its code makes no sentence outside errors,
// apart from the literals below.
func TestNoSentencesInKubelogs(t *testing.T) {
	notext.Check(t, ".", 1, map[string]string{
		// The end of the previous run's log name ("pod spark/d container c, previous run"):
		// the name is the log's path in driverlog's reports and matches, and detection
		// stores it (beat_log), so it stays what an earlier version stored.
		", previous run": "a log's name, stored as beat_log",
		// explain's prefix of every API error ("list pods in namespace spark: forbidden: …"),
		// built before the switch that wraps the error.
		"%s %s in namespace %s": "the start of an error's text",
	})
}
