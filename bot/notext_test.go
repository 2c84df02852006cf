package bot

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// Text is made in commands/render_*.go (issue 29): bot translates Slack to commands and lays
// replies out in Block Kit, making their parts inert (text.go, markup). Its own literals are
// codes, formats and wiring, never sentences, apart from those below.

// keptLiterals are literals with words in them that stay in bot, with why.
var keptLiterals = map[string]string{
	// The commands the root's buttons stand for: translating a click into a command is bot's
	// part (socket.go's blockActions).
	"incident ack ":      "button command",
	"incident unack ":    "button command",
	"incident resolve ":  "button command",
	"incident diagnose ": "button command",
	"incident silence ":  "button command",
	" until morning":     "button command",
	"silence expire ":    "button command",
	// The audit record of a command refused by the channel rule: a record for operators, like
	// a log line, never posted.
	"channel not in slack.allowed_channels: ": "audit record",
	// HTTP: the WWW-Authenticate header's value, and /readyz's checks (an HTTP body for
	// operators and probes, like fail's).
	`Bearer realm="streamwatch"`:                              "HTTP header",
	"invalid_auth: check SLACK_BOT_TOKEN and SLACK_APP_TOKEN": "readyz check",
	"socket not connected":                                    "readyz check",
}

// TestNoSentencesInBot fails when a string literal with words in it appears in bot's code
// outside an error, a log call, an HTTP error body and keptLiterals.
func TestNoSentencesInBot(t *testing.T) {
	notext.Check(t, ".", 10, keptLiterals)
}
