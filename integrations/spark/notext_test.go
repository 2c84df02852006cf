package spark_test

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// parseError is why a literal stays: it is part of a ParseError's message, and an error keeps
// its text (the finding that carries it passes the message on as a value).
const parseError = "part of a ParseError's message"

// TestNoSentencesInSpark: spark returns findings as codes and fields (Line, PartitionNote,
// Hint, Baseline) that commands/render_checkpoint.go and render_findings.go word (issue 29);
// its code makes no sentence outside errors, apart from the literals below.
func TestNoSentencesInSpark(t *testing.T) {
	notext.Check(t, ".", 5, map[string]string{
		// The Problem values are ParseError.Problem, which Error() prints.
		"malformed version":   parseError,
		"unsupported version": parseError,
		"unparseable JSON":    parseError,
		// ParseError.Detail values.
		"no batch metadata line":                                          parseError,
		"no source offset lines":                                          parseError,
		"empty source offset":                                             parseError,
		"only the leading byte":                                           parseError,
		"version line without the offsets that follow it":                 parseError,
		"no query id":                                                     parseError,
		"query id is not a non-empty string":                              parseError,
		"no operator metadata line":                                       parseError,
		"Spark: Incomplete log file":                                      parseError,
		"%s; this reader supports up to v%d":                              parseError,
		"v%d; this reader supports up to v%d (written by a newer Spark?)": parseError,
	})
}
