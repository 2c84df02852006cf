package remediate_test

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInRemediate: remediate returns codes and values that commands/render_plan.go
// and render_repair.go word (issue 29); its code makes no sentence outside errors and logs,
// apart from the literals below.
func TestNoSentencesInRemediate(t *testing.T) {
	const verifyError = "VerifyError's text (Mismatch.Problem is shown only in that error)"
	notext.Check(t, ".", 7, map[string]string{
		"backup %s does not match its manifest: %s: %s": "VerifyError.Error: an error's text",
		"size %d, manifest says %d":                     verifyError,
		"SHA-256 differs from the manifest":             verifyError,
	})
}
