package kafka

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInKafka: kafka returns codes and fields (a Rule and its Evidence, a Part, a
// NoTime, a CommitRefusal) that commands/render_kafka.go and render_lagwords.go word (issue
// 29); its code makes no sentence outside errors, apart from the literals below.
func TestNoSentencesInKafka(t *testing.T) {
	const errText = "an error's message (Error method or the message an error type keeps)"
	const errMatch = "the text of a library's error, which the code matches"
	notext.Check(t, ".", 20, map[string]string{
		"kafka cluster %q is not configured (configured: %s)":                           errText,
		"topic %q does not exist on cluster %s":                                         errText,
		"pipeline %q has no kafka settings (known: %s)":                                 errText,
		"consumer group %q does not exist on cluster %s (no members, no commits on %s)": errText,
		"; consuming it: ": errText,
		"cluster %s: commit to group %s refused: %s (%v)": errText,
		"no answer within ": errText,
		"the brokers closed the connection during the SASL exchange": errText,
		"cluster %s: authentication as %q (%s) failed: %s":           errText,
		"cluster %s: authentication failed: %s":                      errText,
		"cluster %s: no answer from %s within %s":                    errText,
		"cluster %s: no broker of %s answered (timeout %s): %s":      errText,
		"connection reset by peer":                                   errMatch,
		"connection refused":                                         errMatch,
		"run out of available brokers to talk to: ":                  "sarama's preamble, which conciseError cuts off",
		// A code with a space: stored in verdicts (a group-idle fact's LagReport) and shown as
		// it is ("wrong group? no commits").
		"no commits": "IdleNoCommits's value",
	})
}
