package deployconf_test

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInDeployconf: deployconf returns differences and warnings as codes and fields
// that commands/render_drift.go words (issue 29); its code makes no sentence outside errors,
// apart from the literals below: a ParseError's Reason (the text of an error, built apart
// from its Errorf), what the code matches in the YAML parser's errors, and evidence.
func TestNoSentencesInDeployconf(t *testing.T) {
	const parseError = "a ParseError's Reason: an error's text"
	notext.Check(t, ".", 6, map[string]string{
		"larger than %d bytes; not a job options file":                                            parseError,
		"a { } block: this reads like HOCON or JSON, not Java properties, spark-defaults or YAML": parseError,
		"invalid YAML: ":                                  parseError,
		" (an unclosed quote or bracket?)":                parseError,
		"not UTF-8 text":                                  parseError,
		"control character %U, which YAML does not allow": parseError,
		"more than %d YAML nodes, aliases expanded; not a job options file":                           parseError,
		"nested more than %d levels deep (or an alias inside its own anchor); not a job options file": parseError,
		// "<key> is a <kind>; want <what>": the parts of a ParseError's Reason.
		"YAML node":      parseError,
		"a single value": parseError,
		"a comma-separated string or a list of strings":  parseError,
		"a JSON string or a map of topics to partitions": parseError,
		// yaml.v3's message for an unclosed construct, which yamlDocuments matches.
		"end of stream": "the YAML parser's error text",
		// option.spelling of an option that does not exist; only ParseErrors and Warning.Option
		// spell options.
		"unknown option": "a value that names no option",
		// The file named in a Difference's evidence ("<file>: no kafka.bootstrap.servers")
		// when Parse was given no name.
		"the deployed options": "evidence's file name, as stored in verdicts' facts",
	})
}
