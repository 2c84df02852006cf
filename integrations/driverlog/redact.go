package driverlog

import (
	"regexp"
	"strings"
)

// redaction masks the secret parts of one kind of match. secret lists the
// submatch indexes (into FindAllStringSubmatchIndex's pairs) to mask; 0 is
// the whole match.
type redaction struct {
	re     *regexp.Regexp
	hint   []string // lower-case; the rule runs only when the line contains one
	secret []int
	quoted bool // the secret may be wrapped in quotes to keep
	// exact: the secret must not run on into more base64 characters (an
	// AWS secret key is exactly 40 of them; a longer run is something else).
	exact bool
}

var redactions = []redaction{
	{ // scheme://user:password@host (the user stays)
		re:     regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@"'<>]*:([^\s/@"'<>]+)@`),
		hint:   []string{"://"},
		secret: []int{1},
	},
	{ // Authorization: Bearer|Basic|... credentials
		re:     regexp.MustCompile(`(?i)\bauthorization\\?"?\s*[:=]\s*\\?"?(?:(?:bearer|basic|digest|token|negotiate|aws4-hmac-sha256)\s+)?([^\s"'\\,;]+)`),
		hint:   []string{"authorization"},
		secret: []int{1},
	},
	{ // a bearer token anywhere else
		re:     regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)`),
		hint:   []string{"bearer"},
		secret: []int{1},
	},
	{ // key=value, key: value, "key":"value", key -> value (Scala maps), key => value;
		// covers sasl.jaas.config's password="..." and JSON-escaped \"...\"
		re:     regexp.MustCompile(`(?i)[\w.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key|signature)[\w.\-]*\\?"?\s*(?:=>|->|[=:])\s*(\\"[^"\\]*\\"|"[^"]*"|'[^']*'|[^\s,;&"'()<>{}\[\]\\]+)`),
		hint:   []string{"pass", "pwd", "secret", "token", "key", "signature"},
		secret: []int{1},
		quoted: true,
	},
	{ // AWS access key ids, long-term (AKIA) and temporary (ASIA); the prefix stays
		re:     regexp.MustCompile(`\b(?:AKIA|ASIA)([0-9A-Z]{16})\b`),
		hint:   []string{"akia", "asia"},
		secret: []int{1},
	},
	{ // an AWS secret access key: 40 base64 characters after a "secret ... key" label
		re:     regexp.MustCompile(`(?i)secret[\w.\-]{0,20}?key[\w.\-]*[^A-Za-z0-9/+=\n]{1,6}([A-Za-z0-9/+=]{40})`),
		hint:   []string{"secret"},
		secret: []int{1},
		exact:  true,
	},
	{ // Slack tokens: xoxb-, xoxp-, xoxa-, xapp- ...; the prefix stays
		re:     regexp.MustCompile(`\b(?:xox[a-z]|xapp)-([A-Za-z0-9\-]{3,})`),
		hint:   []string{"xox", "xapp-"},
		secret: []int{1},
	},
	{ // JSON Web Tokens
		re:     regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*`),
		hint:   []string{"eyj"},
		secret: []int{0},
	},
}

// Redact masks anything in line that looks like a secret: password=, secret=,
// token= and similar key/value pairs (including sasl.jaas.config's
// password="..."), Authorization headers and bearer tokens, AWS access key
// ids and secret keys, Slack xoxb-/xapp- tokens, JSON Web Tokens and the
// password of scheme://user:password@host URLs. Keys, labels and token
// prefixes stay so the reader still sees what was there.
//
// A mask is "***", or one "*" per character for shorter values, so Redact
// never makes a line longer; redacting twice changes nothing more.
func Redact(line string) string {
	var lower string
	for _, r := range redactions {
		if !r.applies(line, &lower) {
			continue
		}
		line = r.apply(line)
		lower = ""
	}
	return line
}

func (r redaction) applies(line string, lower *string) bool {
	if !isASCII(line) {
		return true // Unicode case folding: let the expression decide
	}
	if *lower == "" {
		*lower = strings.ToLower(line)
	}
	for _, h := range r.hint {
		if strings.Contains(*lower, h) {
			return true
		}
	}
	return false
}

func (r redaction) apply(line string) string {
	all := r.re.FindAllStringSubmatchIndex(line, -1)
	if all == nil {
		return line
	}
	var b strings.Builder
	b.Grow(len(line))
	last := 0
	for _, m := range all {
		for _, g := range r.secret {
			start, end := m[2*g], m[2*g+1]
			if start < last || start < 0 {
				continue
			}
			if r.exact && end < len(line) && isBase64(line[end]) {
				continue // longer than an AWS secret key: some other token
			}
			b.WriteString(line[last:start])
			b.WriteString(maskValue(line[start:end], r.quoted))
			last = end
		}
	}
	b.WriteString(line[last:])
	return b.String()
}

// maskValue masks a secret, keeping the quotes around it.
func maskValue(v string, quoted bool) string {
	if quoted {
		for _, q := range []string{`\"`, `"`, `'`} {
			if len(v) >= 2*len(q) && strings.HasPrefix(v, q) && strings.HasSuffix(v, q) {
				return q + mask(v[len(q):len(v)-len(q)]) + q
			}
		}
	}
	return mask(v)
}

// mask hides s without ever making it longer. An already masked value
// stays, and so does "null": Kafka prints unset passwords that way.
func mask(s string) string {
	if strings.Trim(s, "*") == "" || s == "null" {
		return s
	}
	if len(s) >= 3 {
		return "***"
	}
	return strings.Repeat("*", len(s))
}

func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}
