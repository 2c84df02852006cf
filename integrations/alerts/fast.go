package alerts

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The fast path decodes an Alertmanager or Grafana payload in one pass over
// the body, straight into the fields the decoder reads. It accepts only what
// the careful decoder (json.go) accepts, with the same result: when it meets
// anything wrong, or anything it does not handle, it gives up and the careful
// decoder decodes the body again and words the error. Webhooks arrive by the
// thousand in a storm, nearly all of them well formed; the careful decoder
// re-reads the body once per nesting level. FuzzFastMatchesCareful holds the
// two to the same answers.

// fastAlertmanagerShape returns ok false when the careful decoder must decide.
func fastAlertmanagerShape(body []byte, source string) (out []Alert, ok bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	s := scan{b: body, src: string(body)}
	var groupStatus string
	var list []amFields
	ok = s.object(func(key string) bool {
		switch key {
		case "status":
			v, ok := s.optStr()
			groupStatus = v
			return ok
		case "alerts":
			list = list[:0] // of duplicate keys the last wins
			return s.array(func() bool {
				if len(list) == MaxAlertsPerPayload {
					return false
				}
				list = append(list, amFields{})
				return s.amAlert(&list[len(list)-1], source)
			})
		}
		return s.skip()
	})
	if s.ws(); !ok || s.i != len(body) || len(list) == 0 {
		return nil, false
	}
	var group Status
	if groupStatus != "" {
		st, err := parseStatus(groupStatus, "", "status")
		if err != nil {
			return nil, false
		}
		group = st
	}
	out = make([]Alert, len(list))
	for i := range list {
		if !list[i].build(&out[i], source, group) {
			return nil, false
		}
	}
	return out, true
}

// amFields are the fields of one alert the decoder reads.
type amFields struct {
	status                        string
	labels, annotations           map[string]string
	startsAt, endsAt, fingerprint string
	urls                          [4]string // in the order of urlKeys(source)
}

// urlKeys are the link fields a sender's alerts carry. Alertmanager sends
// only generatorURL; Grafana adds its own.
func urlKeys(source string) []string {
	if source == SourceGrafana {
		return grafanaURLKeys
	}
	return alertmanagerURLKeys
}

var (
	alertmanagerURLKeys = []string{"generatorURL"}
	grafanaURLKeys      = []string{"panelURL", "dashboardURL", "generatorURL", "silenceURL"}
)

// setLink files the value of the link field key.
func setLink(l *Links, key, v string) {
	switch key {
	case "generatorURL":
		l.Generator = v
	case "dashboardURL":
		l.Dashboard = v
	case "panelURL":
		l.Panel = v
	case "silenceURL":
		l.Silence = v
	}
}

// primaryURL is Alert.URL: Grafana's panel shows the graph that fired, which
// an on-call person wants first; generatorURL is the rule's page.
func primaryURL(l Links) string {
	for _, u := range []string{l.Panel, l.Dashboard, l.Generator} {
		if u != "" {
			return u
		}
	}
	return ""
}

func (s *scan) amAlert(f *amFields, source string) bool {
	keys := urlKeys(source)
	return s.object(func(k string) bool {
		var ok bool
		switch k {
		case "status":
			f.status, ok = s.optStr()
		case "labels":
			f.labels, ok = s.stringMap()
		case "annotations":
			f.annotations, ok = s.stringMap()
		case "startsAt":
			f.startsAt, ok = s.optStr()
		case "endsAt":
			f.endsAt, ok = s.optStr()
		case "fingerprint":
			f.fingerprint, ok = s.optStr()
		default:
			for i, u := range keys {
				if k == u {
					f.urls[i], ok = s.optStr()
					return ok
				}
			}
			ok = s.skip()
		}
		return ok
	})
}

// build fills a as decodeAlertmanagerAlert would; false where that returns an error.
func (f *amFields) build(a *Alert, source string, group Status) bool {
	*a = Alert{Source: source, Labels: f.labels, Annotations: f.annotations, Fingerprint: f.fingerprint}
	switch {
	case f.status != "":
		st, err := parseStatus(f.status, "", "status")
		if err != nil {
			return false
		}
		a.Status = st
	case group != "":
		a.Status = group
	default:
		return false
	}
	if a.Labels == nil {
		a.Labels = map[string]string{}
	}
	if a.Annotations == nil {
		a.Annotations = map[string]string{}
	}
	a.Title = strings.TrimSpace(a.Annotations["summary"])
	if a.Title == "" {
		a.Title = strings.TrimSpace(a.Labels["alertname"])
	}
	if a.Title == "" {
		return false
	}
	var err error
	if a.StartsAt, err = parseTimestamp(f.startsAt); err != nil {
		return false
	}
	if a.EndsAt, err = parseTimestamp(f.endsAt); err != nil {
		return false
	}
	for i, key := range urlKeys(source) {
		setLink(&a.Links, key, f.urls[i])
	}
	a.Links.Runbook = a.Annotations["runbook_url"]
	a.URL = primaryURL(a.Links)
	if a.Fingerprint == "" {
		a.Fingerprint = labelsFingerprint(a.Labels, "", false)
	}
	a.Severity = severityFrom(a.Labels, a.Annotations)
	return true
}

// scan reads JSON from b, validating as it goes. Every method returns false
// on anything that is not valid JSON of the expected type. src is b as one
// string, which the strings read are cut from: one copy of the body, not one
// per string.
type scan struct {
	b     []byte
	src   string
	i     int
	depth int
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *scan) peek() byte {
	if s.ws(); s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// rawStr reads a string and returns its contents: a cut of src when it has
// no escapes, else the unescaped string.
func (s *scan) rawStr() (string, bool) { return s.str(true) }

// str reads a string; with decode false it only checks it (and returns "").
func (s *scan) str(decode bool) (string, bool) {
	if s.peek() != '"' {
		return "", false
	}
	start := s.i + 1
	escaped := false
	for j := start; ; {
		for j < len(s.b) && plain[s.b[j]] {
			j++
		}
		if j >= len(s.b) {
			return "", false
		}
		switch s.b[j] {
		case '"':
			s.i = j + 1
			if !decode {
				return "", true
			}
			if !escaped {
				return s.src[start:j], true
			}
			var out string
			if json.Unmarshal(s.b[start-1:j+1], &out) != nil {
				return "", false
			}
			return out, true
		case '\\':
			if j+1 >= len(s.b) || !validEscape(s.b[j+1:]) {
				return "", false
			}
			escaped = true
			j += 2 // the escaped byte (the hex digits of \u are plain bytes)
		default: // a control character
			return "", false
		}
	}
}

// plain marks the bytes a JSON string holds as they are: not '"', '\\' or a
// control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func validEscape(b []byte) bool {
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(b) < 5 {
			return false
		}
		for _, c := range b[1:5] {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// optStr reads a string of at most MaxStringBytes, or null as "".
func (s *scan) optStr() (string, bool) {
	if s.peek() == 'n' {
		return "", s.lit("null")
	}
	v, ok := s.rawStr()
	if !ok || len(v) > MaxStringBytes {
		return "", false
	}
	return v, true
}

// stringMap reads labels or annotations: an object of strings, or null.
func (s *scan) stringMap() (map[string]string, bool) {
	if s.peek() == 'n' {
		return map[string]string{}, s.lit("null")
	}
	m := map[string]string{}
	ok := s.object(func(name string) bool {
		if len(name) > MaxStringBytes || s.peek() != '"' {
			return false
		}
		v, ok := s.optStr()
		m[name] = v
		return ok
	})
	return m, ok && len(m) <= MaxLabelsPerAlert
}

// object reads an object, handing each key to field, which must read the value.
func (s *scan) object(field func(key string) bool) bool {
	return s.container('{', '}', func() bool {
		key, ok := s.rawStr()
		if !ok || s.peek() != ':' {
			return false
		}
		s.i++
		return field(key)
	})
}

// array reads an array, calling elem to read each element.
func (s *scan) array(elem func() bool) bool { return s.container('[', ']', elem) }

// container reads the bracket begin, items separated by commas, and the bracket end.
func (s *scan) container(begin, end byte, item func() bool) bool {
	if s.peek() != begin || !s.enter() {
		return false
	}
	if s.peek() == end {
		return s.leave()
	}
	for {
		if !item() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case end:
			return s.leave()
		default:
			return false
		}
	}
}

func (s *scan) enter() bool {
	s.i++
	s.depth++
	return s.depth <= MaxNestingDepth
}

func (s *scan) leave() bool {
	s.i++
	s.depth--
	return true
}

// skip reads any value.
func (s *scan) skip() bool {
	switch s.peek() {
	case '"':
		_, ok := s.str(false)
		return ok
	case '{':
		return s.object(func(string) bool { return s.skip() })
	case '[':
		return s.array(s.skip)
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	return s.number()
}

func (s *scan) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scan) number() bool {
	b, i := s.b, s.i
	digits := func() bool {
		start := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	s.i = i
	return true
}
