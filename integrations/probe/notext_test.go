package probe_test

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInProbe: a probe returns codes and values (Finding) that
// commands/render_probe.go words (issue 29); its code makes no sentence outside errors, apart
// from the literals below, which are data.
func TestNoSentencesInProbe(t *testing.T) {
	notext.Check(t, ".", 4, map[string]string{
		// The write test's object names itself, so that a read back of someone else's object
		// does not match: file data, not words for people.
		"streamwatch probe\npipeline %s\nobject %s\n": "the probe object's content",
		// The step names: each step's code, stored in every result (Step.Name) and matched by
		// the stored history; commands shows them as they are, as the table's first column.
		"read metadata": "a step's name",
		"read offsets":  "a step's name",
		"read commits":  "a step's name",
		"read back":     "a step's name",
		// The prefixes storage's errors put before what they name, which the probe strips to
		// keep the cause (openCause, testPermissions): storage's text, matched.
		"open storage ":     "the prefix of storage.Open's error",
		"test permissions ": "the prefix of a GCS store's TestPermissions error",
	})
}
