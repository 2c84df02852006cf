package bot

import (
	"regexp"
	"strings"
)

// Slack writes markup into what people type: a mention's text always, a slash command's with
// "Escape channels, users, and links" on (the manifest turns it on, so that `incident assign
// @alice` reaches streamwatch as alice's user id). Commands read words, not markup: unslack
// turns links and channel references back into the text the person typed, and decodes &lt;,
// &gt; and &amp;. User mentions (<@U…> or <@U…|name>) stay: they name people.

var slackMarkup = regexp.MustCompile(`<([^<>]*)>`)

func unslack(s string) string {
	s = slackMarkup.ReplaceAllStringFunc(s, func(m string) string {
		inner := m[1 : len(m)-1]
		target, label, labelled := strings.Cut(inner, "|")
		switch {
		case strings.HasPrefix(inner, "@"):
			return m
		case strings.HasPrefix(inner, "#"): // <#C0123|sms-replies>
			if labelled {
				return "#" + label
			}
			return target
		case strings.HasPrefix(inner, "!"): // <!here>, <!subteam^S0123|@oncall>
			if labelled {
				return label
			}
			return "@" + strings.TrimPrefix(target, "!")
		case labelled: // a link Slack made of what was typed: <http://db1.example|db1.example>
			return label
		}
		return target
	})
	return strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(s)
}
