package deployconf

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Separators between a property's key and value.
const (
	sepNone   = iota // a key alone
	sepEquals        // "=" or ":", possibly with whitespace around
	sepSpace         // whitespace only: spark-defaults style
)

// propertyEntry is one logical line of a Java properties file.
type propertyEntry struct {
	key, value string
	line       int // the natural line the entry starts on
	sep        int
}

// propertiesSettings reads the options from a Java properties or spark-defaults file.
func propertiesSettings(name string, data []byte) ([]setting, error) {
	entries, err := propertyEntries(name, data)
	if err != nil {
		return nil, err
	}
	var out []setting
	for _, e := range entries {
		opt, rank := matchKey(e.key)
		if opt == optNone {
			continue
		}
		// Spark decodes spark-defaults as UTF-8, replacing what is not.
		key := strings.ToValidUTF8(e.key, "\uFFFD")
		value := strings.ToValidUTF8(strings.TrimSpace(e.value), "\uFFFD")
		s, err := newSetting(name, opt, rank, e.line, key+"="+value, value)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// propertyEntries splits data into entries as java.util.Properties.load does.
func propertyEntries(name string, data []byte) ([]propertyEntry, error) {
	lines := naturalLines(data)
	var entries []propertyEntry
	for i := 0; i < len(lines); i++ {
		start := i + 1
		logical := trimLeadingSpace(string(lines[i]))
		if logical == "" || logical[0] == '#' || logical[0] == '!' {
			continue // comments do not continue, even after a backslash
		}
		if continues(logical) {
			var b strings.Builder
			for continues(logical) {
				b.WriteString(logical[:len(logical)-1])
				if i+1 == len(lines) {
					logical = "" // Java drops a backslash at the end of the file
					break
				}
				i++
				logical = trimLeadingSpace(string(lines[i]))
			}
			b.WriteString(logical)
			logical = b.String()
		}
		if t := strings.TrimRight(logical, " \t\f"); t == "}" || strings.HasSuffix(t, "{") {
			return nil, &ParseError{File: name, Line: start,
				Reason: "a { } block: this reads like HOCON or JSON, not Java properties, spark-defaults or YAML"}
		}
		e, err := splitEntry(logical)
		if err != nil {
			return nil, &ParseError{File: name, Line: start, Reason: err.Error()}
		}
		e.line = start
		entries = append(entries, e)
	}
	return entries, nil
}

func isPropertySpace(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingSpace(s string) string {
	i := 0
	for i < len(s) && isPropertySpace(s[i]) {
		i++
	}
	return s[i:]
}

// splitEntry separates key and value: the key ends at the first unescaped '=', ':' or
// whitespace; whitespace and at most one '=' or ':' follow before the value.
func splitEntry(l string) (propertyEntry, error) {
	e := propertyEntry{sep: sepNone}
	keyEnd, valueStart := len(l), len(l)
	escaped := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !escaped && (c == '=' || c == ':') {
			keyEnd, valueStart, e.sep = i, i+1, sepEquals
			break
		}
		if !escaped && isPropertySpace(c) {
			keyEnd, valueStart = i, i+1
			break
		}
		escaped = c == '\\' && !escaped
	}
	for valueStart < len(l) {
		c := l[valueStart]
		if !isPropertySpace(c) {
			if e.sep != sepEquals && (c == '=' || c == ':') {
				e.sep = sepEquals
			} else {
				break
			}
		}
		valueStart++
	}
	if e.sep == sepNone && valueStart < len(l) {
		e.sep = sepSpace
	}
	var err error
	if e.key, err = unescape(l[:keyEnd]); err != nil {
		return e, fmt.Errorf("key: %w", err)
	}
	if e.value, err = unescape(l[valueStart:]); err != nil {
		return e, fmt.Errorf("value of %s: %w", e.key, err)
	}
	return e, nil
}

// unescape applies Java properties escapes. Bytes outside escapes pass through untouched.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch c = s[i]; c {
		case 'u':
			r, err := hex4(s[i+1:])
			if err != nil {
				return "", err
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if r2, err := hex4(strings.TrimPrefix(s[i+1:], `\u`)); err == nil && strings.HasPrefix(s[i+1:], `\u`) {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			b.WriteRune(r) // a lone surrogate becomes U+FFFD
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func hex4(s string) (rune, error) {
	if len(s) < 4 {
		return 0, fmt.Errorf(`malformed \uxxxx escape \u%s: want four hex digits`, strings.ToValidUTF8(s, "?"))
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, fmt.Errorf(`malformed \uxxxx escape \u%s: want four hex digits`, strings.ToValidUTF8(s[:4], "?"))
		}
		r = r<<4 | rune(v)
	}
	return r, nil
}
