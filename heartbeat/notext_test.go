package heartbeat

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInHeartbeat: what the switch stores for Slack is a Message that
// commands.HeartbeatMessage words (issue 29); its code makes no sentence.
func TestNoSentencesInHeartbeat(t *testing.T) {
	notext.Check(t, ".", 1, nil)
}
