package config

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The decoder walks yaml.Node trees itself, driven by the Config types, instead of using
// yaml.Unmarshal: Unmarshal stops at the first type error and knows nothing of YAML paths.

var (
	durationType  = reflect.TypeFor[time.Duration]()
	regexpMapType = reflect.TypeFor[map[string]*regexp.Regexp]()
)

type decoder struct {
	errs Errors
	// lines maps the YAML path of every key and list element present in the document to its
	// line; validation uses it both for line numbers and to tell "absent" from "empty".
	lines map[string]int
	// auto are the paths of durations written "auto" (checkpoint.stale_after only).
	auto map[string]bool
}

func newDecoder() *decoder { return &decoder{lines: map[string]int{}, auto: map[string]bool{}} }

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, FieldError{Path: path, Msg: fmt.Sprintf(format, args...), Line: line})
}

func reflectValue(cfg *Config) reflect.Value { return reflect.ValueOf(cfg).Elem() }

// deref follows aliases. Cycles cannot recurse forever here because the walk is bounded by the
// depth of the Go types.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// value decodes n into v. A null node leaves v as it is, so an empty key keeps its default.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	n = deref(n)
	if isNull(n) {
		return
	}
	t := v.Type()
	switch {
	case t == durationType:
		d.duration(n, v, path)
	case t == regexpMapType:
		d.regexps(n, v, path)
	case t.Kind() == reflect.String:
		if s, ok := d.str(n, path); ok {
			v.SetString(s)
		}
	case t.Kind() == reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
			d.errorf(n, path, "expected true or false%s", got(n))
			return
		}
		v.SetBool(b)
	case t.Kind() == reflect.Int64:
		var i int64
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
			d.errorf(n, path, "expected an integer%s", got(n))
			return
		}
		v.SetInt(i)
	case t.Kind() == reflect.Slice:
		d.list(n, v, path)
	case t.Kind() == reflect.Map:
		d.mapping(n, v, path)
	case t.Kind() == reflect.Struct:
		d.fields(n, v, path)
	default:
		panic(fmt.Sprintf("config: no decoder for %s at %s", t, path))
	}
}

// got describes a bad scalar for an error message; lists and mappings are described by kind.
func got(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return fmt.Sprintf(", got %q", n.Value)
	case yaml.SequenceNode:
		return ", got a list"
	case yaml.MappingNode:
		return ", got a mapping"
	}
	return ""
}

// str accepts any scalar as a string: `version: 3.6` means "3.6", as a reader would expect.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.errorf(n, path, "expected a string%s", got(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, "expected a duration such as \"10s\"%s", got(n))
		return
	}
	if n.Value == "auto" && strings.HasSuffix(path, ".checkpoint.stale_after") {
		d.auto[path] = true // the default stays as the fallback until an interval is learned
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.errorf(n, path, "invalid duration %q (want a Go duration such as \"10s\" or \"5m\")", n.Value)
		return
	}
	v.SetInt(int64(dur))
}

func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) {
	elem := v.Type().Elem()
	if n.Kind != yaml.SequenceNode {
		if elem.Kind() == reflect.String {
			d.errorf(n, path, "expected a list of strings")
		} else {
			d.errorf(n, path, "expected a list")
		}
		return
	}
	out := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		d.lines[p] = item.Line
		out = reflect.Append(out, d.element(item, elem, p))
	}
	v.Set(out)
}

// element decodes a list element or mapping value into a new value of type t. A null struct
// element gets its defaults; a null string element is an error (it is almost always a typo).
func (d *decoder) element(n *yaml.Node, t reflect.Type, path string) reflect.Value {
	ev := reflect.New(t).Elem()
	if t.Kind() == reflect.Struct {
		applyDefaults(ev)
	}
	if isNull(deref(n)) && t.Kind() == reflect.String {
		d.errorf(deref(n), path, "expected a string, got null")
		return ev
	}
	d.value(n, ev, path)
	return ev
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	elem := v.Type().Elem()
	if n.Kind != yaml.MappingNode {
		if elem.Kind() == reflect.String {
			d.errorf(n, path, "expected a mapping of strings")
		} else {
			d.errorf(n, path, "expected a mapping")
		}
		return
	}
	out := reflect.MakeMap(v.Type())
	for _, kv := range d.pairs(n, path) {
		p := keyPath(path, kv.key.Value)
		d.lines[p] = kv.key.Line
		out.SetMapIndex(reflect.ValueOf(kv.key.Value), d.element(kv.val, elem, p))
	}
	v.Set(out)
}

func (d *decoder) regexps(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping of strings")
		return
	}
	out := map[string]*regexp.Regexp{}
	for _, kv := range d.pairs(n, path) {
		p := keyPath(path, kv.key.Value)
		d.lines[p] = kv.key.Line
		val := deref(kv.val)
		src, ok := d.str(val, p)
		if !ok {
			continue
		}
		// Compile the expression as written first, so the error quotes what the user wrote.
		if _, err := regexp.Compile(src); err != nil {
			d.errorf(val, p, "invalid regexp %q: %v", src, err)
			continue
		}
		re, err := regexp.Compile("^(?:" + src + ")$")
		if err != nil {
			d.errorf(val, p, "invalid regexp %q: %v", src, err)
			continue
		}
		out[kv.key.Value] = re
	}
	v.Set(reflect.ValueOf(out))
}

func (d *decoder) fields(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping%s", got(n))
		return
	}
	t := v.Type()
	for _, kv := range d.pairs(n, path) {
		p := keyPath(path, kv.key.Value)
		i, ok := fieldIndex(t, kv.key.Value)
		if !ok {
			msg := fmt.Sprintf("unknown key %q", kv.key.Value)
			if s := suggest(kv.key.Value, yamlKeys(t)); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			d.errorf(kv.key, p, "%s", msg)
			continue
		}
		d.lines[p] = kv.key.Line
		d.value(kv.val, v.Field(i), p)
	}
}

type pair struct{ key, val *yaml.Node }

// pairs lists a mapping's key/value pairs, reporting non-string and duplicate keys, and
// expanding merge keys (<<: *anchor): keys written in the mapping win over merged ones, and
// earlier merges win over later ones.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	var out []pair
	seen := map[string]bool{}
	visited := map[*yaml.Node]bool{}
	var add func(m *yaml.Node, merged bool)
	add = func(m *yaml.Node, merged bool) {
		visited[m] = true
		first := map[string]int{}
		var merges []*yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, val := m.Content[i], m.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				merges = append(merges, val)
				continue
			}
			// Problems inside a merged mapping are reported where that mapping is decoded.
			if k.Kind != yaml.ScalarNode || isNull(k) {
				if !merged {
					d.errorf(k, path, "keys must be strings")
				}
				continue
			}
			if line, dup := first[k.Value]; dup {
				if !merged {
					d.errorf(k, keyPath(path, k.Value), "duplicate key (first at line %d)", line)
				}
				continue
			}
			first[k.Value] = k.Line
			if merged && seen[k.Value] {
				continue
			}
			seen[k.Value] = true
			out = append(out, pair{k, val})
		}
		for _, mv := range merges {
			mv = deref(mv)
			sources := []*yaml.Node{mv}
			if mv.Kind == yaml.SequenceNode {
				sources = mv.Content
			}
			for _, s := range sources {
				s = deref(s)
				if s == nil || s.Kind != yaml.MappingNode {
					d.errorf(mv, path, "<< must merge a mapping or a list of mappings")
					break
				}
				if !visited[s] {
					add(s, true)
				}
			}
		}
	}
	add(n, false)
	return out
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// keyPath appends a mapping key to a YAML path: a.b for plain keys, a["x.y"] otherwise.
func keyPath(path, key string) string {
	if !plainKey.MatchString(key) {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// parentPath strips the last step of a YAML path built by keyPath or list.
func parentPath(p string) string {
	if strings.HasSuffix(p, `"]`) {
		if i := strings.LastIndex(p, `["`); i >= 0 {
			return p[:i]
		}
	}
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

func fieldIndex(t reflect.Type, key string) (int, bool) {
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" && name != "-" && name == key {
			return i, true
		}
	}
	return 0, false
}

func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	sort.Strings(keys)
	return keys
}

// suggest returns the known key closest to key, if it is close enough to be a typo.
func suggest(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if dist := editDistance(strings.ToLower(key), k); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// applyDefaults sets every field of a struct that has a `default` tag, recursing into nested
// structs. Elements of lists and maps get theirs when the decoder creates them.
func applyDefaults(v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if def, ok := f.Tag.Lookup("default"); ok {
			setDefault(fv, def, f.Name)
			continue
		}
		if f.Type.Kind() == reflect.Struct {
			applyDefaults(fv)
		}
	}
}

// setDefault panics on a malformed tag: that is a programming error the tests catch.
func setDefault(v reflect.Value, def, name string) {
	var err error
	switch {
	case v.Type() == durationType:
		var dur time.Duration
		dur, err = time.ParseDuration(def)
		v.SetInt(int64(dur))
	case v.Kind() == reflect.String:
		v.SetString(def)
	case v.Kind() == reflect.Bool:
		var b bool
		b, err = strconv.ParseBool(def)
		v.SetBool(b)
	case v.Kind() == reflect.Int64:
		var i int64
		i, err = strconv.ParseInt(def, 10, 64)
		v.SetInt(i)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		v.Set(reflect.ValueOf(strings.Split(def, ",")))
	default:
		err = fmt.Errorf("unsupported type %s", v.Type())
	}
	if err != nil {
		panic(fmt.Sprintf("config: bad default for %s: %v", name, err))
	}
}
