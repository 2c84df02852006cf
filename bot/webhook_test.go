package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/bot"
)

func TestVerifySignature(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	body := []byte(`{"title":"client replied sms"}`)
	good := bot.Sign("s3cret", body, now)
	cases := []struct {
		name, secret, header string
		body                 []byte
		want                 string
	}{
		{"valid", "s3cret", good, body, ""},
		{"valid within skew", "s3cret", bot.Sign("s3cret", body, now.Add(-4*time.Minute)), body, ""},
		{"replayed", "s3cret", bot.Sign("s3cret", body, now.Add(-6*time.Minute)), body, "replay refused"},
		{"from the future", "s3cret", bot.Sign("s3cret", body, now.Add(6*time.Minute)), body, "replay refused"},
		{"body changed", "s3cret", good, []byte(`{"title":"other"}`), "does not match"},
		{"other key", "other", good, body, "does not match"},
		{"malformed", "s3cret", "v1=abc", body, "malformed"},
		{"no secret", "", good, body, "need STREAMWATCH_WEBHOOK_TOKEN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := bot.VerifySignature(c.secret, c.header, c.body, now)
			if c.want == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
