package commands

import (
	"fmt"
	"time"

	"github.com/streamwatch/streamwatch/heartbeat"
)

// HeartbeatMessage words what the dead man's switch stores (heartbeat.Switch.Words): the title
// and detail of an expected alert's absence, and the note that resolves it when it returns.
func HeartbeatMessage(m heartbeat.Message) string {
	switch m.Kind {
	case heartbeat.MissingTitle:
		return fmt.Sprintf("No %s alert for %s (expected every %s)", m.Name, m.For, m.Every)
	case heartbeat.MissingDetail:
		since := "it was first expected at " + m.Since.UTC().Format(time.RFC3339)
		if !m.Last.IsZero() {
			since = "the last at " + m.Last.UTC().Format(time.RFC3339)
		}
		return fmt.Sprintf("No alert matching %s has arrived for more than %s and its grace (%s): %s. The alert pipeline (Alertmanager, or the network to streamwatch) may be down; nothing else would say so.",
			m.Name, m.Every, m.Grace, since)
	case heartbeat.Arrived:
		return fmt.Sprintf("%s arrived again at %s.", m.Name, m.Last.UTC().Format(time.RFC3339))
	}
	return string(m.Kind) + " " + m.Name
}
