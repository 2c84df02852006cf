package pagerduty

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInPagerDuty: pagerduty sends what its caller words (the summary, the link's
// text) and makes no sentence outside errors (issue 29). pdtest, a test peer's HTTP answers
// in its own directory, is not checked.
func TestNoSentencesInPagerDuty(t *testing.T) {
	notext.Check(t, ".", 1, map[string]string{
		"send event: ": "the start of an Error's Message, which Error() returns",
	})
}
