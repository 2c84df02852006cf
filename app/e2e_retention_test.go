package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot/slackfake"
	"github.com/streamwatch/streamwatch/internal/testredis"
	"github.com/streamwatch/streamwatch/internal/wait"
	"github.com/streamwatch/streamwatch/state"
)

// retentionWorld is a stopped query on a topic with configs: the checkpoint read the first 5
// records of each partition; 5 more, stamped age ago, wait.
func retentionWorld(t *testing.T, configs map[string]string, age time.Duration) *sparkWorld {
	w := newSparkWorldWith(t, configs)
	w.staleAfter = "1h" // this test is about retention, not the stall
	w.produce(5)
	w.commit(0, time.Time{})
	if err := w.kc.Produce(context.Background(), detectTopic, []int{5, 5}, time.Now().Add(-age)); err != nil {
		t.Fatal(err)
	}
	return w
}

func warnings(s *slackfake.Server) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range roots(s, "C0PIPE") {
		if strings.HasPrefix(m.Text, "⚠️ sms-replies: the oldest unread record of") {
			out = append(out, m)
		}
	}
	return out
}

// TestE2ERetentionHeadroom: retention.ms 10m and the oldest waiting record 6 minutes old: one
// warning in the channel, however many rounds pass; 9.5 minutes: an incident; a compacted
// topic: neither.
func TestE2ERetentionHeadroom(t *testing.T) {
	t.Run("warning", func(t *testing.T) {
		w := retentionWorld(t, map[string]string{"retention.ms": "600000"}, 6*time.Minute)
		in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
		s := in.slack
		waitFor(t, s, "the warning", func(s *slackfake.Server) bool { return len(warnings(s)) == 1 })
		m := warnings(s)[0]
		for _, want := range []string{"client.replies.sms partition 0, 1", "has used 6", "of retention.ms 10m", "left before retention deletes it unread"} {
			if !strings.Contains(m.Text, want) {
				t.Fatalf("the warning lacks %q: %q", want, m.Text)
			}
		}
		afterRounds(t, in, 3*time.Second)
		if n := len(roots(s, "C0PIPE")); n != 1 {
			t.Fatalf("%d messages in the channel, want the one warning", n)
		}
	})
	t.Run("incident", func(t *testing.T) {
		w := retentionWorld(t, map[string]string{"retention.ms": "600000"}, 570*time.Second)
		in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
		s := in.slack
		waitFor(t, s, "the incident", func(s *slackfake.Server) bool {
			for _, r := range roots(s, "C0PIPE") {
				if strings.Contains(r.Text, "INC-1: sms-replies: unread records of client.replies.sms are 9") {
					return true
				}
			}
			return false
		})
	})
	t.Run("compacted", func(t *testing.T) {
		w := retentionWorld(t, map[string]string{"cleanup.policy": "compact", "retention.ms": "600000"}, 570*time.Second)
		in := start(t, setup{prefix: testredis.Prefix(), extra: w.config("")})
		afterRounds(t, in, 4*time.Second)
		if n := len(roots(in.slack, "C0PIPE")); n != 0 {
			t.Fatalf("%d messages for a compacted topic", n)
		}
	})
}

// afterRounds waits until sampling rounds have run for d past the first one seen.
func afterRounds(t *testing.T, in *instance, d time.Duration) {
	t.Helper()
	rdb, _ := testredis.Client(t)
	st := state.New(rdb, in.prefix)
	var first time.Time
	wait.For(t, 20*time.Second, "a sampling round", func() bool {
		var err error
		first, err = st.LastTick(t.Context(), "kafka-sample")
		return err == nil && !first.IsZero()
	})
	wait.For(t, 30*time.Second, "more sampling rounds", func() bool {
		last, err := st.LastTick(t.Context(), "kafka-sample")
		return err == nil && last.Sub(first) >= d
	})
}
