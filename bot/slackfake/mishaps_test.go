package slackfake

import (
	"testing"

	"github.com/slack-go/slack"
)

// TestMishaps: a deleted message, an archived channel and a channel the bot was removed from
// answer with Slack's error codes.
func TestMishaps(t *testing.T) {
	s := start(t, Options{})
	c := api(s)
	ctx := timeout(t)
	post := func(ch, thread, text string) (string, error) {
		opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
		if thread != "" {
			opts = append(opts, slack.MsgOptionTS(thread))
		}
		_, ts, err := c.PostMessageContext(ctx, ch, opts...)
		return ts, err
	}
	update := func(ch, ts string) error {
		_, _, _, err := c.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText("edited", false))
		return err
	}
	code := func(err error) string {
		if err == nil {
			return "ok"
		}
		return err.Error()
	}

	lone, _ := post(channel, "", "a root without replies")
	busy, _ := post(channel, "", "a root with a reply")
	if _, err := post(channel, busy, "a reply"); err != nil {
		t.Fatal(err)
	}
	if !s.DeleteMessage(channel, lone) || !s.DeleteMessage(channel, busy) || s.DeleteMessage(channel, lone) {
		t.Fatal("DeleteMessage did not delete each message exactly once")
	}
	if _, err := post(channel, lone, "reply"); code(err) != "thread_not_found" {
		t.Errorf("reply to a deleted root without replies: %v, want thread_not_found", err)
	}
	if err := update(channel, lone); code(err) != "message_not_found" {
		t.Errorf("update of a deleted message: %v, want message_not_found", err)
	}
	if _, err := post(channel, busy, "another reply"); err != nil {
		t.Errorf("reply in a tombstone's thread: %v, want ok", err)
	}
	if err := update(channel, busy); code(err) != "message_not_found" {
		t.Errorf("update of a tombstone: %v, want message_not_found", err)
	}
	if m, ok := s.Message(channel, busy); !ok || !m.Deleted || m.Text != "This message was deleted." {
		t.Errorf("the tombstone is %+v (%v)", m, ok)
	}

	kept, _ := post("C0OLD", "", "before the archive")
	s.ArchiveChannel("C0OLD")
	if _, err := post("C0OLD", "", "after"); code(err) != "is_archived" {
		t.Errorf("post to an archived channel: %v, want is_archived", err)
	}
	if err := update("C0OLD", kept); code(err) != "is_archived" {
		t.Errorf("update in an archived channel: %v, want is_archived", err)
	}
	s.RemoveBot("C0LEFT")
	if _, err := post("C0LEFT", "", "hello"); code(err) != "not_in_channel" {
		t.Errorf("post to a channel the bot left: %v, want not_in_channel", err)
	}
	if _, err := post(channel, "", "still fine"); err != nil {
		t.Errorf("post to an untouched channel: %v", err)
	}
}
