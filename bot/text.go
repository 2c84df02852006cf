package bot

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text that reaches Slack comes from alert senders, storage and people: none of it may
// mention anyone, link anywhere, format itself or break out of a code block, and all of it
// must fit Slack's limits. Three kinds of text:
//
//   - mrkdwn outside code blocks (mrkdwn): &, < and > escaped, so no <!channel>, <@U…> or
//     <url|label> survives; *, _ and ~ at a word's edge followed by a zero-width space, so
//     they cannot open or close bold, italic or strike; runs of backticks broken the same
//     way, so no ``` opens a code block (a single `code span` stays: it cannot break out).
//   - inside a code block (pre): escaped, and backticks replaced by ˋ (U+02CB), so the
//     block cannot be closed from inside; Slack formats nothing else there.
//   - plain_text (headers, buttons): Slack parses nothing there; only made valid.
//
// All three: invalid UTF-8 becomes U+FFFD; control characters other than newline and tab
// become U+FFFD (one-line places turn newlines into spaces). Cutting keeps whole runes and
// whole entities, and ends with an ellipsis.

const zwsp = "\u200b"

// valid makes s valid UTF-8 without control characters (newline and tab stay).
func valid(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, badControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if badControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func badControl(r rune) bool {
	return (unicode.IsControl(r) && r != '\n' && r != '\t') || r == '\u2028' || r == '\u2029'
}

// oneLine makes s valid and puts it on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("\n", " ", "\t", " ").Replace(valid(s))), " ")
}

// escape makes text safe for Slack's mrkdwn: "<!channel>" or "<@U1>" in an alert's title
// become literal text, so the bot never mentions anyone.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// mrkdwn is s for mrkdwn text outside code blocks: inert, as described above.
func mrkdwn(s string) string {
	s = escape(valid(s))
	if !strings.ContainsAny(s, "*_~`") {
		return s
	}
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		b.WriteRune(r)
		switch r {
		case '*', '_', '~':
			// Slack opens and closes formatting only at a word's edge; inside a word
			// (client_replied_sms) these are plain characters already.
			prevWord := i > 0 && isWord(rs[i-1])
			nextWord := i+1 < len(rs) && isWord(rs[i+1])
			if !prevWord || !nextWord {
				b.WriteString(zwsp)
			}
		case '`':
			if (i > 0 && rs[i-1] == '`') || (i+1 < len(rs) && rs[i+1] == '`') {
				b.WriteString(zwsp)
			}
		}
	}
	return b.String()
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// pre is s for the inside of a code block.
func pre(s string) string {
	return strings.ReplaceAll(escape(valid(s)), "`", "ˋ")
}

// plain is s for plain_text objects.
func plain(s string) string { return valid(s) }

// clip cuts s to at most n runes, ending with an ellipsis, without splitting a rune, an HTML
// entity (&amp;) or a rune from the zero-width space that makes it inert.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	rs := []rune(s)
	cut := n - 1
	// Back up out of an entity: '&' then at most 5 more characters up to ';'.
	for i := cut - 1; i >= 0 && i >= cut-5; i-- {
		if rs[i] == ';' {
			break
		}
		if rs[i] == '&' {
			cut = i
			break
		}
	}
	if cut > 0 && strings.ContainsRune("*_~`", rs[cut-1]) {
		cut-- // its zero-width space would be cut off
	}
	return string(rs[:cut]) + "…"
}

// fence puts lines (already made safe with pre) in a code block of at most n runes.
func fence(lines []string, n int) string {
	body := strings.Join(lines, "\n")
	if max := n - len("```\n\n```"); utf8.RuneCountInString(body) > max {
		body = clip(body, max)
	}
	return "```\n" + body + "\n```"
}

func runes(s string) int { return utf8.RuneCountInString(s) }
