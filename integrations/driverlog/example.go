package driverlog

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// example turns a raw matching line into Match.Example: secrets masked, one
// line of printable text, at most about exampleBytes long. A long line (a
// JSON log record, a long path) is cut around the matching text so the part
// that explains the match is the part that stays.
func example(raw []byte, sig Signature) string {
	line := strings.ToValidUTF8(string(raw), "\uFFFD")
	line = Redact(line) // before cutting: a cut secret might no longer look like one
	line = printable(line)
	if len(line) <= exampleBytes {
		return line
	}
	start := 0
	if loc := sig.Pattern.FindStringIndex(line); loc != nil && loc[1] > exampleBytes {
		// The match is past the head of the line: keep some text before it.
		start = max(0, min(loc[0]-exampleBytes/3, len(line)-exampleBytes))
	}
	end := start + exampleBytes
	for start > 0 && !utf8.RuneStart(line[start]) {
		start++
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	out := line[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(line) {
		out += "…"
	}
	return out
}

// printable replaces tabs and other control characters with spaces, so the
// example stays on one line in a chat message or a terminal.
func printable(s string) string {
	if strings.IndexFunc(s, breaksLine) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if breaksLine(r) {
			return ' '
		}
		return r
	}, s)
}

func breaksLine(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }
