package pipeline_test

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInPipeline: pipeline returns codes and fields that commands/render_*.go words
// (issue 29); its code makes no sentence outside errors and logs, apart from the literals below,
// which are data.
func TestNoSentencesInPipeline(t *testing.T) {
	notext.Check(t, ".", 20, map[string]string{
		// The metadata publish_group writes with its offsets into Kafka, which tools show
		// beside them.
		"streamwatch: checkpoint of %s, batch %d": "Kafka commit metadata",
	})
}
