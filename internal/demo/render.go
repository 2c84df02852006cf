package demo

import (
	"encoding/json"
	"regexp"
	"strings"
)

// roster names the workspace's members in the transcript, by user ID.
type roster map[string]string

// name is how a user ID reads in the transcript: its display name, else the ID.
func (p roster) name(id string) string {
	if n, ok := p[id]; ok {
		return n
	}
	return id
}

// block is the part of a Block Kit block the transcript shows.
type block struct {
	Type     string            `json:"type"`
	Text     *textObject       `json:"text"`
	Fields   []textObject      `json:"fields"`
	Elements []json.RawMessage `json:"elements"`
}

type textObject struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// element is an element of a context or actions block: a text object or a button.
type element struct {
	Type     string          `json:"type"`
	Text     json.RawMessage `json:"text"` // a string in a context's text object, an object in a button
	ActionID string          `json:"action_id"`
	URL      string          `json:"url"` // a link button
}

// renderMessage turns a Slack message into the transcript's lines: its blocks when it has
// any (Slack shows the blocks and uses the text only for notifications), else its text.
func (p roster) renderMessage(text string, blocks json.RawMessage) []string {
	if lines, ok := p.renderBlocks(blocks); ok && len(lines) > 0 {
		return lines
	}
	return p.mrkdwn(text)
}

// renderBlocks renders Block Kit JSON: a header's and a section's text, a section's fields
// three to a line as "Name: value", a context's elements joined by " · ", an actions block's
// buttons as "[Label]", a divider as a rule. ok is false when blocks do not parse.
func (p roster) renderBlocks(raw json.RawMessage) (lines []string, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return nil, false
	}
	for _, b := range blocks {
		switch b.Type {
		case "header":
			if b.Text != nil {
				lines = append(lines, p.mrkdwn(b.Text.Text)...)
			}
		case "section":
			if b.Text != nil {
				lines = append(lines, p.mrkdwn(b.Text.Text)...)
			}
			var row []string
			for _, f := range b.Fields {
				row = append(row, p.field(f.Text))
				if len(row) == 3 {
					lines = append(lines, strings.Join(row, " · "))
					row = nil
				}
			}
			if len(row) > 0 {
				lines = append(lines, strings.Join(row, " · "))
			}
		case "context":
			var parts []string
			for _, raw := range b.Elements {
				var e element
				if json.Unmarshal(raw, &e) != nil {
					continue
				}
				var s string
				if json.Unmarshal(e.Text, &s) == nil && s != "" {
					parts = append(parts, strings.Join(p.mrkdwn(s), " "))
				}
			}
			if len(parts) > 0 {
				lines = append(lines, strings.Join(parts, " · "))
			}
		case "actions":
			var buttons []string
			for _, raw := range b.Elements {
				var e element
				if json.Unmarshal(raw, &e) != nil {
					continue
				}
				var t textObject
				if json.Unmarshal(e.Text, &t) == nil && t.Text != "" {
					if e.URL != "" {
						t.Text += " ↗" // opens a page
					}
					buttons = append(buttons, "["+t.Text+"]")
				}
			}
			if len(buttons) > 0 {
				lines = append(lines, strings.Join(buttons, " "))
			}
		case "divider":
			lines = append(lines, "────────")
		}
	}
	return lines, true
}

// field renders a section field "*Name*\nvalue" as "Name: value".
func (p roster) field(s string) string {
	name, value, ok := strings.Cut(s, "\n")
	if !ok {
		return strings.Join(p.mrkdwn(s), " ")
	}
	return strings.Trim(name, "*") + ": " + strings.Join(p.mrkdwn(value), " ")
}

var (
	userRef    = regexp.MustCompile(`<@([A-Z0-9]+)(?:\|[^>]*)?>`)
	channelRef = regexp.MustCompile(`<#[A-Z0-9]+\|([^>]*)>`)
	linkRef    = regexp.MustCompile(`<(https?://[^|>]+)(?:\|([^>]*))?>`)
	bold       = regexp.MustCompile(`\*([^*\n]+)\*`)
)

// mrkdwn turns Slack mrkdwn into plain lines: code fences dropped (their lines kept), bold
// markers dropped, mentions and links shown by name, &lt; &gt; &amp; decoded.
func (p roster) mrkdwn(s string) []string {
	s = userRef.ReplaceAllStringFunc(s, func(m string) string {
		return "@" + p.name(userRef.FindStringSubmatch(m)[1])
	})
	s = channelRef.ReplaceAllString(s, "#$1")
	s = linkRef.ReplaceAllStringFunc(s, func(m string) string {
		sub := linkRef.FindStringSubmatch(m)
		if sub[2] != "" {
			return sub[2]
		}
		return sub[1]
	})
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) == "```" {
			continue
		}
		l = strings.ReplaceAll(l, "```", "")
		l = bold.ReplaceAllString(l, "$1")
		l = strings.TrimRight(strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(l), " ")
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// headed reports whether a message's blocks start with a header (an incident's root does).
func headed(raw json.RawMessage) bool {
	var blocks []block
	return json.Unmarshal(raw, &blocks) == nil && len(blocks) > 0 && blocks[0].Type == "header"
}

type button struct{ label, actionID string }

// buttonsOf lists a message's buttons.
func buttonsOf(raw json.RawMessage) []button {
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var out []button
	for _, b := range blocks {
		if b.Type != "actions" {
			continue
		}
		for _, raw := range b.Elements {
			var e element
			var t textObject
			if json.Unmarshal(raw, &e) == nil && e.ActionID != "" && json.Unmarshal(e.Text, &t) == nil {
				out = append(out, button{label: t.Text, actionID: e.ActionID})
			}
		}
	}
	return out
}
