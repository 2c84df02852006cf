package deployconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Bounds on walking a YAML document: options files are small, and aliases can make a small
// file a huge (or, through an anchor that contains its alias, endless) tree.
const (
	maxYAMLNodes = 100_000
	maxYAMLDepth = 64
)

// yamlSettings reads the options from the SparkApplication in data or, without one, from the
// first document that names an option.
func yamlSettings(name string, data []byte) (settings []setting, warnings []Warning, err error) {
	if err := checkYAMLText(name, data); err != nil {
		return nil, nil, err
	}
	docs, err := yamlDocuments(name, data)
	if err != nil {
		return nil, nil, err
	}
	var apps []*yaml.Node
	for _, doc := range docs {
		if kind := scalarAt(doc, "kind"); kind == "SparkApplication" || kind == "ScheduledSparkApplication" {
			apps = append(apps, doc)
		}
	}
	if len(apps) > 0 {
		if len(apps) > 1 {
			warnings = append(warnings, Warning{Code: WarnApps, N: len(apps), Name: scalarAt(valueAt(apps[0], "metadata"), "name"), Line: apps[0].Line})
		}
		w := walker{file: name}
		err := w.sparkApplication(apps[0])
		return w.settings, warnings, err
	}
	for _, doc := range docs {
		w := walker{file: name}
		if err := w.walk(doc, "", 0); err != nil {
			return nil, nil, err
		}
		if len(w.settings) > 0 {
			return w.settings, nil, nil
		}
	}
	return nil, nil, nil
}

// yamlDocuments decodes every document of the stream into its root node.
func yamlDocuments(name string, data []byte) ([]*yaml.Node, error) {
	docs, err := decodeYAML(data)
	if err == nil {
		return docs, nil
	}
	msg := err.Error()
	reported := 0
	if m := yamlLineError.FindStringSubmatch(msg); m != nil {
		reported, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	reason := "invalid YAML: " + msg
	if strings.Contains(msg, "end of stream") {
		reason += " (an unclosed quote or bracket?)"
	}
	return nil, &ParseError{File: name, Line: locateYAMLError(data, reported, msg), Reason: reason}
}

// decodeYAML decodes every document of the stream into its root node.
func decodeYAML(data []byte) (docs []*yaml.Node, err error) {
	defer func() {
		// The parser is third-party code fed whatever file a job ships; a panic in it must
		// not take the bot down.
		if r := recover(); r != nil {
			docs, err = nil, fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
			docs = append(docs, doc.Content[0])
		}
	}
}

var yamlLineError = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)

// locateYAMLError finds the line a YAML error is on. The parser reports the line where the
// enclosing construct starts (0-based, at that), or none on the first line: "spec:" for a
// mis-indented key twenty lines below it. The first lines that fail alone with the same message
// end on the culprit; parsing from the reported line on, a binary search finds them.
func locateYAMLError(data []byte, reported int, msg string) int {
	var ends []int // ends[i] is the offset just past line i+1, its line break included
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\n', data[i] == '\r' && (i+1 == len(data) || data[i+1] != '\n'):
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(data) {
		ends = append(ends, len(data))
	}
	lo := max(reported, 1)
	if lo > len(ends) {
		return len(ends) // past the end: the error is the end of the stream
	}
	fails := func(n int) bool {
		_, err := decodeYAML(data[:ends[n-1]])
		return err != nil && strings.HasSuffix(err.Error(), msg)
	}
	n := lo + sort.Search(len(ends)-lo+1, func(i int) bool { return fails(lo + i) })
	if n > len(ends) {
		return min(reported, len(ends))
	}
	return n
}

// checkYAMLText finds, with their line, the characters YAML refuses, which the parser reports
// without one.
func checkYAMLText(name string, data []byte) error {
	for i, line := range naturalLines(data) {
		for len(line) > 0 {
			r, size := utf8.DecodeRune(line)
			switch {
			case r == utf8.RuneError && size <= 1:
				return &ParseError{File: name, Line: i + 1, Reason: "not UTF-8 text"}
			case !yamlPrintable(r):
				return &ParseError{File: name, Line: i + 1, Reason: fmt.Sprintf("control character %U, which YAML does not allow", r)}
			}
			line = line[size:]
		}
	}
	return nil
}

// yamlPrintable is YAML 1.2's c-printable, less the line breaks naturalLines removed.
func yamlPrintable(r rune) bool {
	return r == '\t' || (r >= 0x20 && r <= 0x7E) || r == 0x85 || (r >= 0xA0 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// walker collects the settings of a YAML tree.
type walker struct {
	file      string
	settings  []setting
	visited   int
	expanding int // the line of the alias being expanded, for errors; 0 outside aliases
}

// enter notes that walking n expands an alias, unless one is already being expanded; the
// returned func ends it.
func (w *walker) enter(n *yaml.Node) func() {
	if n == nil || n.Kind != yaml.AliasNode || w.expanding != 0 {
		return func() {}
	}
	w.expanding = n.Line
	return func() { w.expanding = 0 }
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxYAMLDepth; i++ {
		n = n.Alias
	}
	return n
}

// valueAt is the value of key in mapping n, or nil.
func valueAt(n *yaml.Node, key string) *yaml.Node {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolveAlias(n.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.Value == key {
			return resolveAlias(n.Content[i+1])
		}
	}
	return nil
}

func scalarAt(n *yaml.Node, key string) string {
	if v := valueAt(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// sparkApplication reads spec.sparkConf, spec.hadoopConf and spec.arguments, in that order.
func (w *walker) sparkApplication(app *yaml.Node) error {
	spec := valueAt(app, "spec")
	if scalarAt(app, "kind") == "ScheduledSparkApplication" {
		spec = valueAt(spec, "template")
	}
	for _, section := range []string{"sparkConf", "hadoopConf"} {
		if m := valueAt(spec, section); m != nil && m.Kind == yaml.MappingNode {
			if err := w.walk(m, "", 1); err != nil {
				return err
			}
		}
	}
	if args := valueAt(spec, "arguments"); args != nil && args.Kind == yaml.SequenceNode {
		return w.arguments(args)
	}
	return nil
}

// arguments reads "--key=value", "--key value" (one item or two) and "--conf key=value".
func (w *walker) arguments(seq *yaml.Node) error {
	var items []*yaml.Node
	for _, c := range seq.Content {
		if c = resolveAlias(c); c != nil && c.Kind == yaml.ScalarNode {
			items = append(items, c)
		}
	}
	for i := 0; i < len(items); i++ {
		item := items[i]
		arg := strings.TrimSpace(item.Value)
		if !strings.HasPrefix(arg, "--") {
			continue // the value of an option we do not read, or a positional argument
		}
		key, value, written := arg[2:], "", arg
		if j := strings.IndexAny(key, "= \t"); j >= 0 {
			key, value = key[:j], key[j+1:]
		} else if i+1 < len(items) && !strings.HasPrefix(strings.TrimSpace(items[i+1].Value), "--") {
			i++
			value = items[i].Value
			written = arg + " " + value
		}
		if strings.EqualFold(key, "conf") {
			k, v, ok := strings.Cut(strings.TrimSpace(value), "=")
			if !ok {
				continue
			}
			key, value = k, v
		}
		opt, rank := matchKey(key)
		if opt == optNone {
			continue
		}
		s, err := newSetting(w.file, opt, rank, item.Line, written, value)
		if err != nil {
			return err
		}
		w.settings = append(w.settings, s)
	}
	return nil
}

func (w *walker) count(n *yaml.Node, depth int) error {
	w.visited++
	line := n.Line
	if w.expanding != 0 {
		line = w.expanding
	}
	switch {
	case w.visited > maxYAMLNodes:
		return &ParseError{File: w.file, Line: line, Reason: fmt.Sprintf("more than %d YAML nodes, aliases expanded; not a job options file", maxYAMLNodes)}
	case depth > maxYAMLDepth:
		return &ParseError{File: w.file, Line: line, Reason: fmt.Sprintf("nested more than %d levels deep (or an alias inside its own anchor); not a job options file", maxYAMLDepth)}
	}
	return nil
}

// walk reads a flat or nested map of options; path is the dotted key of n.
func (w *walker) walk(n *yaml.Node, path string, depth int) error {
	defer w.enter(n)()
	n = resolveAlias(n)
	if n == nil {
		return nil
	}
	if err := w.count(n, depth); err != nil {
		return err
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolveAlias(n.Content[i])
			if k == nil || k.Kind != yaml.ScalarNode {
				continue
			}
			if k.Tag == "!!merge" {
				if err := w.walk(n.Content[i+1], path, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := w.entry(join(path, k.Value), k, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := w.walk(c, join(path, strconv.Itoa(i)), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// entry reads key: v, where k is the key's node, for its line.
func (w *walker) entry(key string, k, v *yaml.Node, depth int) error {
	defer w.enter(v)()
	v = resolveAlias(v)
	if v == nil {
		return nil
	}
	opt, rank := matchKey(key)
	if opt == optNone {
		return w.walk(v, key, depth)
	}
	if err := w.count(v, depth); err != nil {
		return err
	}
	switch v.Kind {
	case yaml.ScalarNode:
		value := v.Value
		if v.Tag == "!!null" {
			value = ""
		}
		return w.add(opt, rank, k.Line, key+"="+value, value)
	case yaml.SequenceNode:
		var items []string
		for _, c := range v.Content {
			if c = resolveAlias(c); c == nil || c.Kind != yaml.ScalarNode {
				items = nil
				break
			}
			items = append(items, c.Value)
		}
		if opt.isList() && (items != nil || len(v.Content) == 0) {
			value := strings.Join(items, ",")
			return w.add(opt, rank, k.Line, key+"=["+strings.Join(items, ", ")+"]", value)
		}
	case yaml.MappingNode:
		if opt == optAssign {
			var topics []string
			for i := 0; i+1 < len(v.Content); i += 2 {
				if t := resolveAlias(v.Content[i]); t != nil && t.Kind == yaml.ScalarNode && t.Value != "" {
					topics = append(topics, t.Value)
				}
			}
			slices.Sort(topics)
			w.settings = append(w.settings, setting{opt: opt, rank: rank, line: k.Line,
				written: key + "={" + strings.Join(topics, ", ") + "}", value: strings.Join(topics, ","), list: topics})
			return nil
		}
		if rank == rankSuffix {
			return w.walk(v, key, depth) // only looks like an option
		}
	}
	if rank == rankSuffix {
		return nil
	}
	return &ParseError{File: w.file, Line: k.Line, Reason: fmt.Sprintf("%s is a %s; want %s", key, kindName(v.Kind), want(opt))}
}

func (w *walker) add(opt option, rank, line int, written, value string) error {
	s, err := newSetting(w.file, opt, rank, line, written, value)
	if err != nil {
		return err
	}
	w.settings = append(w.settings, s)
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	}
	return "YAML node"
}

func want(opt option) string {
	switch {
	case opt.isList():
		return "a comma-separated string or a list of strings"
	case opt == optAssign:
		return `a JSON string or a map of topics to partitions`
	}
	return "a single value"
}
