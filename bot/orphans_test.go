package bot

import (
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/slack-go/slack"
	"github.com/streamwatch/streamwatch/bot/slackfake"
)

// TestOrphanedIncidents: an incident survives what people do to Slack behind the bot's back
// (the Slack fake, a real redis-server): a deleted root is posted again once in its channel
// with a line saying so, and the thread continues there; an archived channel, one the bot was
// removed from, or one that does not exist moves the incident to slack.default_channel with a
// note. Buttons on the new root find the incident; streamwatch_slack_orphaned_total counts each
// case.
func TestOrphanedIncidents(t *testing.T) {
	const home, def = "C0ALERTS", "C0DEFAULT"
	cases := []struct {
		name string
		// mishap happens after the incident's root is in home (root: before it is posted).
		mishap func(f *slackfake.Server, rootTS string)
		root   bool
		kase   string
		to     string
		note   string
	}{
		{name: "a root with replies deleted: a tombstone", kase: "message_not_found", to: home,
			mishap: func(f *slackfake.Server, ts string) { f.DeleteMessage(home, ts) },
			note:   "This incident's message was deleted in Slack, so it is posted again here; its thread continues here."},
		{name: "an archived channel", kase: "is_archived", to: def,
			mishap: func(f *slackfake.Server, _ string) { f.ArchiveChannel(home) },
			note:   "Moved here from <#C0ALERTS>: that channel is archived. Its thread continues here."},
		{name: "the bot removed from the channel", kase: "not_in_channel", to: def,
			mishap: func(f *slackfake.Server, _ string) { f.RemoveBot(home) },
			note:   "Moved here from <#C0ALERTS>: streamwatch was removed from that channel. Its thread continues here."},
		{name: "archived before the root was posted", kase: "is_archived", to: def, root: true,
			mishap: func(f *slackfake.Server, _ string) { f.ArchiveChannel(home) },
			note:   "Moved here from <#C0ALERTS>: that channel is archived. Its thread continues here."},
		{name: "a channel that does not exist", kase: "channel_not_found", to: def, root: true,
			mishap: func(f *slackfake.Server, _ string) {},
			note:   "Moved here from <#C0ALERTS>: that channel no longer exists. Its thread continues here."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chans := map[string]string{home: "alerts", def: "streamwatch"}
			if c.kase == "channel_not_found" {
				delete(chans, home)
			}
			fake := slackfake.New(slackfake.Options{Channels: chans, Logf: t.Logf})
			if err := fake.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(fake.Close)
			w := newDeliveryWorld(t, nil)
			w.d.slack = slackMessages{slack.New("xoxb-fake", slack.OptionAPIURL(fake.APIURL()))}
			// Not a test of timeouts: the world's 50 ms bounds a whole delivery, here real HTTP
			// calls to the fake (a failed reply, the new root, its note). Under -race on a busy
			// machine the new root's answer came after it: the fake had taken the root, the
			// deliverer saw a timeout and posted it again, two roots in the default channel.
			// The production bound (DeliveryTimeout) is 10 s.
			w.d.timeout = 10 * time.Second
			w.d.defaultChannel = def

			w.alert("a", home)
			var rootTS string
			if c.root {
				c.mishap(fake, "")
			} else {
				w.passesUntil(100*time.Millisecond, time.Second, "the root in "+home, func() bool { return len(fake.Messages(home)) > 0 })
				msgs := fake.Messages(home)
				if len(msgs) != 1 {
					t.Fatalf("before the mishap %s holds %d messages, want the root", home, len(msgs))
				}
				rootTS = msgs[0].TS
				w.news("a", "a2", home) // a reply under the root, so that its deletion leaves a tombstone
				w.passes(time.Second, 12*time.Second)
				c.mishap(fake, rootTS)
			}
			w.news("a", "a3", home)
			w.passes(time.Second, 12*time.Second)
			w.news("a", "a4", home)
			w.passes(time.Second, 12*time.Second)

			var roots []slackfake.Message
			for _, m := range fake.Messages(c.to) {
				if m.ThreadTS == "" && !m.Deleted && m.TS != rootTS {
					roots = append(roots, m)
				}
			}
			if len(roots) != 1 {
				t.Fatalf("%s holds %d new roots, want the incident's root posted again once: %+v", c.to, len(roots), fake.Messages(c.to))
			}
			root := roots[0]
			if !strings.Contains(root.Text, "INC-1") {
				t.Errorf("the new root is %q, want INC-1's", root.Text)
			}
			var thread []string
			for _, m := range fake.Thread(c.to, root.TS)[1:] {
				thread = append(thread, m.Text)
			}
			want := []string{c.note, "• New alert: detail of a3", "• New alert: detail of a4"}
			if fmt.Sprint(thread) != fmt.Sprint(want) {
				t.Errorf("the new thread holds\n%q\nwant\n%q", thread, want)
			}
			if id, err := w.store.ByThread(w.ctx, c.to, root.TS); err != nil || id != "INC-1" {
				t.Errorf("the new root's buttons find %q (%v), want INC-1", id, err)
			}
			if rootTS != "" && c.to == home {
				if id, _ := w.store.ByThread(w.ctx, home, rootTS); id != "" {
					t.Errorf("the deleted root still finds %q", id)
				}
			}
			var m dto.Metric
			if err := w.d.metrics.SlackOrphaned.WithLabelValues(c.kase).Write(&m); err != nil {
				t.Fatal(err)
			}
			if n := m.GetCounter().GetValue(); n != 1 {
				t.Errorf("streamwatch_slack_orphaned_total{case=%q} = %v, want 1", c.kase, n)
			}
			if n, _ := w.store.OutboxDepth(w.ctx); n != 0 {
				t.Errorf("the outbox still holds %d entries", n)
			}
		})
	}
}
