package alerts

import (
	"net"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxURL is the longest link SafeURL keeps (Slack's limit on a button's url).
const MaxURL = 3000

// hostPattern is a DNS name (or an IPv4 address).
var hostPattern = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?\.)*[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$`)

// SafeURL returns a link an alert's sender gave in a form fit to show people, or "" when it
// is not one: only http and https URLs with a plain host name, without credentials, spaces,
// control characters or the characters that end a link in Slack and Markdown (< > " `), at
// most MaxURL bytes.
func SafeURL(u string) string {
	u = strings.TrimSpace(u)
	if u == "" || len(u) > MaxURL || !utf8.ValidString(u) || strings.ContainsFunc(u, func(r rune) bool {
		return r <= ' ' || unicode.IsControl(r) || unicode.IsSpace(r) || strings.ContainsRune("<>\"`\\", r) || r == '\u2028' || r == '\u2029'
	}) {
		return ""
	}
	p, err := url.Parse(u)
	if err != nil || p.User != nil || p.Opaque != "" || (!hostPattern.MatchString(p.Hostname()) && net.ParseIP(p.Hostname()) == nil) {
		return ""
	}
	if s := strings.ToLower(p.Scheme); s != "http" && s != "https" {
		return ""
	}
	if port := p.Port(); port != "" && strings.Trim(port, "0123456789") != "" {
		return ""
	}
	if out := p.String(); len(out) <= MaxURL {
		return out
	}
	return ""
}
