package access_test

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInAccess: the access check returns codes and values (Report.Code, Denial)
// that commands/render_access.go words (issue 29); its code makes no sentence outside errors.
func TestNoSentencesInAccess(t *testing.T) {
	notext.Check(t, ".", 5, map[string]string{})
}
