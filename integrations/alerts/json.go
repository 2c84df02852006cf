package alerts

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// Payloads are decoded in two steps. parseJSON checks the whole body once:
// the limits that must hold before any parsing (UTF-8, nesting depth) and
// the JSON syntax. Then each level is decoded into a map of json.RawMessage
// and every field the decoder reads is checked on its own, so that a type
// error names its exact path (alerts[2].labels.severity), keys match exactly
// (not case-insensitively, as struct fields would), and fields the decoder
// does not know stay raw bytes: a hostile body costs a few copies of itself,
// not the tens that decoding it into generic values would.

// parseJSON validates body and returns its top-level value.
func parseJSON(body []byte) (json.RawMessage, error) {
	if len(bytes.Trim(body, jsonSpace)) == 0 {
		return nil, &DecodeError{Reason: "empty body"}
	}
	if off := invalidUTF8Offset(body); off >= 0 {
		return nil, decodeErrorf("invalid UTF-8 at byte offset %d", off)
	}
	if off := tooDeepOffset(body); off >= 0 {
		return nil, decodeErrorf("JSON nested deeper than %d levels at byte offset %d", MaxNestingDepth, off)
	}
	// A Decoder, unlike Unmarshal, tells truncation (io.ErrUnexpectedEOF)
	// from other syntax errors.
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			// Offset counts the bytes read, the offending one included.
			return nil, decodeErrorf("invalid JSON at byte offset %d: %s", max(syn.Offset-1, 0), syn.Error())
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, decodeErrorf("invalid JSON: unexpected end of input at byte offset %d", len(body))
		default:
			return nil, decodeErrorf("invalid JSON: %v", err)
		}
	}
	if rest := bytes.TrimLeft(body[dec.InputOffset():], jsonSpace); len(rest) > 0 {
		return nil, decodeErrorf("invalid JSON at byte offset %d: unexpected data after the top-level value", len(body)-len(rest))
	}
	return raw, nil
}

const jsonSpace = " \t\r\n"

// invalidUTF8Offset returns the offset of the first byte that is not part of
// valid UTF-8, or -1.
func invalidUTF8Offset(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// tooDeepOffset returns the offset of the first bracket that opens a container
// deeper than MaxNestingDepth, or -1. It does not validate the JSON: the
// decoder does that afterwards.
func tooDeepOffset(b []byte) int {
	depth := 0
	inString, escaped := false, false
	for i, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > MaxNestingDepth {
				return i
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return -1
}

// JSON paths in error reasons.

// at joins a path and an object key; an empty key leaves the path as is.
// Decoders build paths only for errors, not for every field they read.
func at(path, key string) string {
	if key == "" {
		return path
	}
	if !isIdent(key) {
		return path + "[" + quoteExcerpt(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// describe names a path at the start of a reason.
func describe(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func isIdent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// quoteExcerpt quotes at most the first 64 bytes of s (cut on a rune
// boundary), so that a reason never echoes a large or unprintable input.
func quoteExcerpt(s string) string {
	const limit = 64
	if len(s) <= limit {
		return strconv.Quote(s)
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// Raw values. Every json.RawMessage handled below comes out of a body that
// parseJSON validated, so its first byte tells its type, and unmarshalling
// it into the matching Go type cannot fail.

// absent reports whether a field was left out or is null: both read as the
// field's zero value.
func absent(raw json.RawMessage) bool { return len(raw) == 0 || raw[0] == 'n' }

func typeName(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func expected(path, want string, got json.RawMessage) *DecodeError {
	return decodeErrorf("%s: expected %s, got %s", describe(path), want, typeName(got))
}

// unmarshal decodes a raw value whose type the caller has checked.
func unmarshal(raw json.RawMessage, v any, path string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return decodeErrorf("%s: %v", describe(path), err)
	}
	return nil
}

// fields decodes a required object into its raw fields. Of duplicate keys
// the last wins.
func fields(raw json.RawMessage, path string) (map[string]json.RawMessage, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, expected(path, "an object", raw)
	}
	var m map[string]json.RawMessage
	if err := unmarshal(raw, &m, path); err != nil {
		return nil, err
	}
	return m, nil
}

// str decodes an optional string of at most MaxStringBytes, the field key
// of the object at path; absent reads as "".
func str(raw json.RawMessage, path, key string) (string, error) {
	if absent(raw) {
		return "", nil
	}
	if raw[0] != '"' {
		return "", expected(at(path, key), "a string", raw)
	}
	var s string
	if bytes.IndexByte(raw, '\\') < 0 {
		// Without escapes, a validated JSON string is its quoted bytes.
		s = string(raw[1 : len(raw)-1])
	} else if err := unmarshal(raw, &s, at(path, key)); err != nil {
		return "", err
	}
	if len(s) > MaxStringBytes {
		return "", decodeErrorf("%s: %d bytes, more than the limit of %d", describe(at(path, key)), len(s), MaxStringBytes)
	}
	return s, nil
}

// timestamp decodes an optional RFC 3339 time. Absent, "" and Go's zero time
// ("0001-01-01T00:00:00Z", which senders written in Go emit for "none") all
// read as the zero time.
func timestamp(raw json.RawMessage, path, key string) (time.Time, error) {
	s, err := str(raw, path, key)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := parseTimestamp(s)
	if err != nil {
		return time.Time{}, decodeErrorf("%s: invalid time %s (want RFC 3339)", at(path, key), quoteExcerpt(s))
	}
	return t, nil
}

// parseTimestamp parses an RFC 3339 time; "" and Go's zero time read as the
// zero time.
func parseTimestamp(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.IsZero() {
		return time.Time{}, err
	}
	return t, nil
}

// stringMap decodes optional labels or annotations; absent reads as an empty
// map. When several entries are at fault, the one with the smallest name is
// reported, so the reason does not depend on map order.
func stringMap(raw json.RawMessage, parent, key string) (map[string]string, error) {
	if absent(raw) {
		return map[string]string{}, nil
	}
	path := at(parent, key)
	m, err := fields(raw, path)
	if err != nil {
		return nil, err
	}
	if len(m) > MaxLabelsPerAlert {
		return nil, decodeErrorf("%s: %d entries, more than the limit of %d", path, len(m), MaxLabelsPerAlert)
	}
	out := make(map[string]string, len(m))
	var firstErr error
	var firstName string
	for name, v := range m {
		var err error
		if len(name) > MaxStringBytes {
			err = decodeErrorf("%s: a name of %d bytes, more than the limit of %d", path, len(name), MaxStringBytes)
		} else if absent(v) {
			// null is a wrong type here, not an absent entry.
			err = expected(at(path, name), "a string", v)
		} else {
			out[name], err = str(v, path, name)
		}
		if err != nil && (firstErr == nil || name < firstName) {
			firstErr, firstName = err, name
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// alertList decodes a required, non-empty list of at most MaxAlertsPerPayload
// alerts.
func alertList(raw json.RawMessage, path string) ([]json.RawMessage, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, expected(path, "an array", raw)
	}
	var list []json.RawMessage
	if err := unmarshal(raw, &list, path); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, decodeErrorf("%s: empty alerts list", describe(path))
	}
	if len(list) > MaxAlertsPerPayload {
		return nil, decodeErrorf("%s: %d alerts, more than the limit of %d", describe(path), len(list), MaxAlertsPerPayload)
	}
	return list, nil
}
