package slackfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"
)

// Slack's documented limits.
const (
	maxBlocks        = 50
	maxTextLen       = 40000 // message text; beyond it chat.postMessage answers msg_too_long
	maxSectionText   = 3000
	maxSectionFields = 10
	maxFieldText     = 2000
	maxHeaderText    = 150
	maxBlockID       = 255
	maxActions       = 25
	maxContextElems  = 10
	maxTextObject    = 3000 // any text object
	maxButtonText    = 75
	maxOverflowItems = 5
	maxOptionText    = 75
	maxOptionValue   = 150
	maxButtonValue   = 2000
	maxButtonURL     = 3000
	maxActionID      = 255
	maxConfirmTitle  = 100
	maxConfirmText   = 300
	maxConfirmButton = 30
)

// knownBlocks are the block types Slack accepts in messages.
var knownBlocks = map[string]bool{
	"actions": true, "context": true, "divider": true, "file": true, "header": true,
	"image": true, "input": true, "markdown": true, "rich_text": true, "section": true,
	"table": true, "video": true,
}

// blockError is why Slack rejects a message's blocks: the "error" code and one line per problem.
type blockError struct {
	code     string // "invalid_blocks" or "invalid_blocks_format"
	messages []string
}

// answer renders the error as Slack does: {"ok":false,"error":code,"errors":[…],
// "response_metadata":{"messages":["[ERROR] …"]}}.
func (e *blockError) answer() answer {
	a := errAnswer(e.code)
	meta := make([]string, len(e.messages))
	for i, m := range e.messages {
		meta[i] = "[ERROR] " + m
	}
	a.body["errors"] = e.messages
	a.body["response_metadata"] = map[string]any{"messages": meta}
	return a
}

// parseBlocks checks a blocks argument the way Slack does and returns it compacted. Text that is
// not a JSON array gets invalid_blocks_format (Slack's code for unparseable blocks); a JSON array
// that breaks Block Kit's rules gets invalid_blocks with one line per problem.
func parseBlocks(raw string) (json.RawMessage, *blockError) {
	if raw == "" {
		return nil, nil
	}
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return nil, &blockError{code: "invalid_blocks_format",
			messages: []string{"blocks must be a JSON array of objects: " + err.Error()}}
	}
	var msgs []string
	bad := func(ptr, format string, args ...any) {
		msgs = append(msgs, fmt.Sprintf(format+" [json-pointer:/blocks%s]", append(args, ptr)...))
	}
	if len(blocks) > maxBlocks {
		bad("", "no more than %d items allowed", maxBlocks)
	}
	ids := map[string]bool{}
	for i, b := range blocks {
		at := fmt.Sprintf("/%d", i)
		var typ, id string
		if json.Unmarshal(b["type"], &typ) != nil || typ == "" {
			bad(at+"/type", "missing required field: type")
			continue
		}
		if !knownBlocks[typ] {
			bad(at+"/type", "unsupported type: %s", typ)
			continue
		}
		if _, ok := b["block_id"]; ok {
			if json.Unmarshal(b["block_id"], &id) != nil || utf8.RuneCountInString(id) > maxBlockID {
				bad(at+"/block_id", "must be a string of at most %d characters", maxBlockID)
			} else if ids[id] {
				bad(at+"/block_id", "duplicate block_id: %s", id)
			}
			ids[id] = true
		}
		// textObj checks a text object: its type, and 1 to max characters.
		textObj := func(ptr string, raw json.RawMessage, max int, plainOnly bool) {
			var t struct {
				Type string  `json:"type"`
				Text *string `json:"text"`
			}
			if json.Unmarshal(raw, &t) != nil || t.Text == nil {
				bad(ptr, "missing required field: text")
				return
			}
			switch {
			case t.Type != "plain_text" && t.Type != "mrkdwn":
				bad(ptr+"/type", "must be plain_text or mrkdwn")
			case plainOnly && t.Type != "plain_text":
				bad(ptr+"/type", "must be plain_text")
			}
			switch n := utf8.RuneCountInString(*t.Text); {
			case n == 0:
				bad(ptr+"/text", "must be more than 0 characters")
			case n > max:
				bad(ptr+"/text", "must be less than %d characters", max+1)
			}
		}
		element := func(ptr string, raw json.RawMessage) {
			var e map[string]json.RawMessage
			if json.Unmarshal(raw, &e) != nil {
				bad(ptr, "must be an object")
				return
			}
			var typ string
			_ = json.Unmarshal(e["type"], &typ)
			if id, ok := e["action_id"]; ok {
				var s string
				if json.Unmarshal(id, &s) != nil || utf8.RuneCountInString(s) > maxActionID {
					bad(ptr+"/action_id", "must be a string of at most %d characters", maxActionID)
				}
			}
			if typ == "overflow" {
				opts := arrayOf(e["options"])
				if n := len(opts); n == 0 || n > maxOverflowItems {
					bad(ptr+"/options", "must have between 1 and %d items", maxOverflowItems)
				}
				for j, o := range opts {
					var op map[string]json.RawMessage
					if json.Unmarshal(o, &op) != nil {
						bad(fmt.Sprintf("%s/options/%d", ptr, j), "must be an object")
						continue
					}
					textObj(fmt.Sprintf("%s/options/%d/text", ptr, j), op["text"], maxOptionText, true)
					var v string
					if json.Unmarshal(op["value"], &v) != nil || utf8.RuneCountInString(v) > maxOptionValue {
						bad(fmt.Sprintf("%s/options/%d/value", ptr, j), "must be a string of at most %d characters", maxOptionValue)
					}
				}
				return
			}
			if typ != "button" {
				return
			}
			textObj(ptr+"/text", e["text"], maxButtonText, true)
			for k, max := range map[string]int{"value": maxButtonValue, "url": maxButtonURL} {
				if v, ok := e[k]; ok {
					var s string
					if json.Unmarshal(v, &s) != nil || utf8.RuneCountInString(s) > max {
						bad(ptr+"/"+k, "must be a string of at most %d characters", max)
					}
				}
			}
			if c, ok := e["confirm"]; ok {
				var conf map[string]json.RawMessage
				if json.Unmarshal(c, &conf) != nil {
					bad(ptr+"/confirm", "must be an object")
					return
				}
				textObj(ptr+"/confirm/title", conf["title"], maxConfirmTitle, true)
				textObj(ptr+"/confirm/text", conf["text"], maxConfirmText, false)
				textObj(ptr+"/confirm/confirm", conf["confirm"], maxConfirmButton, true)
				textObj(ptr+"/confirm/deny", conf["deny"], maxConfirmButton, true)
			}
		}
		switch typ {
		case "section":
			_, hasText := textOf(b["text"])
			fields := arrayOf(b["fields"])
			if !hasText && len(fields) == 0 {
				bad(at, "must provide either text or fields")
			}
			if hasText {
				textObj(at+"/text", b["text"], maxSectionText, false)
			}
			if len(fields) > maxSectionFields {
				bad(at+"/fields", "no more than %d items allowed", maxSectionFields)
			}
			for j, f := range fields {
				textObj(fmt.Sprintf("%s/fields/%d", at, j), f, maxFieldText, false)
			}
			if acc, ok := b["accessory"]; ok {
				element(at+"/accessory", acc)
			}
		case "header":
			if _, ok := textOf(b["text"]); !ok {
				bad(at+"/text", "missing required field: text")
			} else {
				textObj(at+"/text", b["text"], maxHeaderText, true)
			}
		case "actions":
			els := arrayOf(b["elements"])
			if n := len(els); n == 0 || n > maxActions {
				bad(at+"/elements", "must have between 1 and %d items", maxActions)
			}
			for j, e := range els {
				element(fmt.Sprintf("%s/elements/%d", at, j), e)
			}
		case "context":
			els := arrayOf(b["elements"])
			if n := len(els); n == 0 || n > maxContextElems {
				bad(at+"/elements", "must have between 1 and %d items", maxContextElems)
			}
			for j, e := range els {
				var t struct{ Type string }
				if json.Unmarshal(e, &t) == nil && (t.Type == "plain_text" || t.Type == "mrkdwn") {
					textObj(fmt.Sprintf("%s/elements/%d", at, j), e, maxTextObject, false)
				}
			}
		}
	}
	if len(msgs) > 0 {
		return nil, &blockError{code: "invalid_blocks", messages: msgs}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err != nil {
		return nil, &blockError{code: "invalid_blocks_format", messages: []string{err.Error()}}
	}
	if buf.String() == "[]" {
		return nil, nil
	}
	return buf.Bytes(), nil
}

// fillBlockIDsLocked gives every block without a block_id a made-up one, as Slack does when it
// stores a message (button clicks always carry a block_id). Callers hold s.mu.
func (s *Server) fillBlockIDsLocked(blocks json.RawMessage) json.RawMessage {
	if len(blocks) == 0 {
		return blocks
	}
	var bs []map[string]json.RawMessage
	if json.Unmarshal(blocks, &bs) != nil {
		return blocks
	}
	changed := false
	for _, b := range bs {
		if _, ok := b["block_id"]; !ok {
			id, _ := json.Marshal(s.randLocked(alnum+"abcdefghijklmnopqrstuvwxyz", 5))
			b["block_id"] = id
			changed = true
		}
	}
	if !changed {
		return blocks
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(bs) != nil {
		return blocks
	}
	return bytes.TrimSpace(buf.Bytes())
}

// textOf returns a text object's "text", and whether the object was there.
func textOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var t struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return "", false
	}
	return t.Text, true
}

func arrayOf(raw json.RawMessage) []json.RawMessage {
	var a []json.RawMessage
	_ = json.Unmarshal(raw, &a)
	return a
}

// mentionRE matches Slack's notifying mention syntax: users, special mentions, usergroups.
var mentionRE = regexp.MustCompile(`<(?:@[UW][A-Z0-9]+|!(?:here|channel|everyone)|!subteam\^[A-Z0-9]+)(?:\|[^>]*)?>`)

// mentions finds every notifying mention in text and in the mrkdwn text objects of blocks,
// where Slack parses them (plain_text is shown as it is). (Block JSON from Go escapes "<" as
// \u003c, so the strings are decoded rather than searched raw.)
func mentions(text string, blocks json.RawMessage) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		for _, m := range mentionRE.FindAllString(s, -1) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	add(text)
	for _, s := range MrkdwnTexts(blocks) {
		add(s)
	}
	return out
}

// MrkdwnTexts returns the text of every mrkdwn text object in blocks: where Slack parses
// mentions, links and formatting.
func MrkdwnTexts(blocks json.RawMessage) []string {
	var out []string
	if len(blocks) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(blocks, &v) != nil {
		return nil
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			if v["type"] == "mrkdwn" {
				if s, ok := v["text"].(string); ok {
					out = append(out, s)
				}
			}
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// Check judges a message's text and blocks arguments as chat.postMessage does. It returns ""
// for a message Slack takes, else Slack's error code (invalid_blocks_format, invalid_blocks,
// no_text, msg_too_long) and, for blocks, one line per problem.
func Check(text, blocks string) (code string, problems []string) {
	b, berr := parseBlocks(blocks)
	switch {
	case berr != nil:
		return berr.code, berr.messages
	case text == "" && b == nil:
		return "no_text", nil
	case utf8.RuneCountInString(text) > maxTextLen:
		return "msg_too_long", nil
	}
	return "", nil
}

// findAction finds the interactive element with actionID in a message's blocks (in an actions
// block's elements or a section's accessory) and returns its block_id and the element.
func findAction(blocks json.RawMessage, actionID string) (blockID string, elem map[string]any, ok bool) {
	var bs []map[string]any
	if json.Unmarshal(blocks, &bs) != nil {
		return "", nil, false
	}
	for _, b := range bs {
		var candidates []any
		if els, ok := b["elements"].([]any); ok {
			candidates = append(candidates, els...)
		}
		if acc, ok := b["accessory"]; ok {
			candidates = append(candidates, acc)
		}
		for _, c := range candidates {
			e, ok := c.(map[string]any)
			if !ok || e["action_id"] != actionID {
				continue
			}
			id, _ := b["block_id"].(string)
			return id, e, true
		}
	}
	return "", nil, false
}
