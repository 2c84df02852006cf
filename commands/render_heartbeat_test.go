package commands

import (
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/heartbeat"
)

// TestHeartbeatMessage: the dead man's switch's title, detail (since its first expected time,
// or its last arrival) and resolve note.
func TestHeartbeatMessage(t *testing.T) {
	since := time.Date(2026, 12, 5, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	last := since.Add(time.Hour)
	for _, c := range []struct {
		m    heartbeat.Message
		want string
	}{
		{heartbeat.Message{Kind: heartbeat.MissingTitle, Name: "alertname=Watchdog", For: 7 * time.Minute, Every: 5 * time.Minute},
			"No alertname=Watchdog alert for 7m0s (expected every 5m0s)"},
		{heartbeat.Message{Kind: heartbeat.MissingDetail, Name: "alertname=Watchdog", Every: 5 * time.Minute, Grace: time.Minute, Since: since},
			"No alert matching alertname=Watchdog has arrived for more than 5m0s and its grace (1m0s): it was first expected at 2026-12-05T08:00:00Z. " +
				"The alert pipeline (Alertmanager, or the network to streamwatch) may be down; nothing else would say so."},
		{heartbeat.Message{Kind: heartbeat.MissingDetail, Name: "alertname=Watchdog", Every: 5 * time.Minute, Grace: time.Minute, Since: since, Last: last},
			"No alert matching alertname=Watchdog has arrived for more than 5m0s and its grace (1m0s): the last at 2026-12-05T09:00:00Z. " +
				"The alert pipeline (Alertmanager, or the network to streamwatch) may be down; nothing else would say so."},
		{heartbeat.Message{Kind: heartbeat.Arrived, Name: "alertname=Watchdog", Last: last}, "alertname=Watchdog arrived again at 2026-12-05T09:00:00Z."},
	} {
		if got := HeartbeatMessage(c.m); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.m.Kind, got, c.want)
		}
	}
}
