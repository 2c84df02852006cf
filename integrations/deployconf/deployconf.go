package deployconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Formats of a deployed options file.
const (
	FormatProperties    = "properties"
	FormatSparkDefaults = "spark-defaults"
	FormatYAML          = "yaml"
)

// Fields: the keys of Deployed.Sources and Deployed.Settings, and Difference.Field.
const (
	FieldGroup              = "group"
	FieldGroupIDPrefix      = "groupIdPrefix"
	FieldTopics             = "topics"
	FieldPattern            = "pattern"
	FieldBootstrap          = "bootstrap"
	FieldCheckpointLocation = "checkpointLocation"
	FieldFailOnDataLoss     = "failOnDataLoss"
)

// MaxFileSize bounds what Load reads: options files are a few kilobytes.
const MaxFileSize = 4 << 20

// Deployed is what a deployed job's options file sets for its Kafka source and checkpoint.
// The zero value is a file that sets nothing.
type Deployed struct {
	File   string // the name given to Parse, or the path given to Load
	Format string // FormatProperties, FormatSparkDefaults or FormatYAML

	GroupID       string   // kafka.group.id
	GroupIDPrefix string   // groupIdPrefix
	Topics        []string // subscribe, or the topics of assign, in the file's order (assign: sorted)
	Pattern       string   // subscribePattern
	Bootstrap     []string // kafka.bootstrap.servers, trimmed

	// CheckpointLocation is the checkpointLocation option or, without one, the
	// spark.sql.streaming.checkpointLocation root.
	CheckpointLocation string
	// CheckpointIsRoot says CheckpointLocation is spark.sql.streaming.checkpointLocation: the
	// root under which Spark checkpoints a query without its own option, in <root>/<queryName>.
	CheckpointIsRoot bool

	// FailOnDataLoss is the Kafka source's failOnDataLoss as written ("" when not set: Spark's
	// default, true).
	FailOnDataLoss string

	// Sources maps each Field* found to "file:line" where its value was read.
	Sources map[string]string
	// Settings maps each Field* found to the entry as written, "key=value" (or "--key value"),
	// for evidence.
	Settings map[string]string
	// Warnings are settings Spark would resolve in a way the file does not make obvious:
	// conflicting duplicates, options Spark ignores or rejects together.
	Warnings []Warning
}

// Warning is a setting Spark resolves in a way the file does not make obvious. Its Code says
// which, with the fields after it as its values; commands words it (commands/render_drift.go).
type Warning struct {
	Code WarningCode
	// Option is WarnConflict's option, as Spark spells it.
	Option string `json:",omitempty"`
	// Applied is WarnConflict's entry that applies, "file:line: key=value".
	Applied string `json:",omitempty"`
	// Others are WarnConflict's other entries ("file:line: key=value", at most 3, More beyond
	// them), or WarnStrategies' options set together.
	Others []string `json:",omitempty"`
	More   int      `json:",omitempty"`
	// N, Name and Line are WarnApps' count of SparkApplications and the name and line of the
	// first, which is read.
	N    int    `json:",omitempty"`
	Name string `json:",omitempty"`
	Line int    `json:",omitempty"`
}

// WarningCode says what a Warning is.
type WarningCode string

// The warnings, with the Warning fields each uses.
const (
	// WarnConflict: an option is set more than once with different values (Option, Applied,
	// Others, More).
	WarnConflict WarningCode = "conflict"
	// WarnPrefixIgnored: groupIdPrefix is set beside kafka.group.id, which Spark uses.
	WarnPrefixIgnored WarningCode = "prefix_ignored"
	// WarnStrategies: more than one of assign, subscribe and subscribePattern is set, which
	// Spark refuses (Others: those set).
	WarnStrategies WarningCode = "strategies"
	// WarnApps: a file holds N SparkApplications; the first (Name, at Line) is read.
	WarnApps WarningCode = "apps"
)

// ParseError is a file that cannot be read as its format. Line is 0 when the cause has no line.
type ParseError struct {
	File   string
	Line   int
	Reason string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

// Load reads and parses the options file at path, refusing files over MaxFileSize.
func Load(path string) (Deployed, error) {
	f, err := os.Open(path)
	if err != nil {
		return Deployed{}, fmt.Errorf("read deployed options: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return Deployed{}, fmt.Errorf("read deployed options %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return Deployed{}, &ParseError{File: path, Reason: fmt.Sprintf("larger than %d bytes; not a job options file", MaxFileSize)}
	}
	return Parse(path, data)
}

// Parse reads a deployed job's options file. name gives the format by its extension and names
// the file in Sources, evidence and errors; content settles what the extension does not (see the
// package doc). Errors are *ParseError, naming the file and, where there is one, the line.
func Parse(name string, data []byte) (Deployed, error) {
	d := Deployed{File: name, Format: detectFormat(name, data)}
	var (
		settings []setting
		warnings []Warning
		err      error
	)
	if d.Format == FormatYAML {
		settings, warnings, err = yamlSettings(name, data)
	} else {
		settings, err = propertiesSettings(name, data)
	}
	if err != nil {
		return Deployed{}, err
	}
	d.Warnings = warnings
	d.resolve(settings)
	return d, nil
}

// setting is one entry of the file that names an option.
type setting struct {
	opt     option
	rank    int
	line    int
	written string   // "key=value" as written, for evidence
	value   string   // the value, trimmed; for assign the JSON text
	list    []string // for subscribe, bootstrap and assign: the parsed list
}

// canonical is the value as Spark reads it, to tell real conflicts from respellings.
func (s setting) canonical() string {
	if s.list != nil {
		return strings.Join(s.list, ",")
	}
	return s.value
}

// newSetting parses value for opt; assign's JSON is checked here, where the line is known.
func newSetting(file string, opt option, rank, line int, written, value string) (setting, error) {
	s := setting{opt: opt, rank: rank, line: line, written: written, value: strings.TrimSpace(value)}
	switch {
	case opt.isList():
		s.list = splitList(s.value)
	case opt == optAssign && s.value != "":
		topics, err := assignTopics(s.value)
		if err != nil {
			return s, &ParseError{File: file, Line: line, Reason: err.Error()}
		}
		s.list = topics
	}
	return s, nil
}

// splitList splits as Spark splits subscribe and Kafka splits bootstrap.servers: on commas,
// trimming, dropping empty entries.
func splitList(v string) []string {
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// assignTopics lists the topics of Spark's assign option, {"topicA":[0,1],"topicB":[2,4]}.
func assignTopics(v string) ([]string, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(v))
	if err := dec.Decode(&m); err != nil || dec.More() {
		if err == nil {
			err = fmt.Errorf("text after the object")
		}
		return nil, fmt.Errorf(`assign is not a JSON object of topics to partitions ({"topic":[0,1]}): %v`, err)
	}
	if m == nil {
		return nil, fmt.Errorf(`assign is not a JSON object of topics to partitions ({"topic":[0,1]}): null`)
	}
	topics := make([]string, 0, len(m))
	for t := range m {
		if t != "" {
			topics = append(topics, t)
		}
	}
	slices.Sort(topics)
	return topics, nil
}

// resolve fills d from the settings, in the file's order: a direct spelling beats a suffix
// match; of direct spellings the later wins, as it does in Java properties and spark-submit; of
// suffix matches the first wins, since a job's file names its source before its sink.
func (d *Deployed) resolve(settings []setting) {
	chosen := map[option]setting{}
	for _, s := range settings {
		if c, ok := chosen[s.opt]; !ok || s.rank < c.rank || (s.rank == c.rank && s.rank == rankDirect) {
			chosen[s.opt] = s
		}
	}
	for opt := optGroupID; opt <= optLast; opt++ {
		c, ok := chosen[opt]
		if !ok {
			continue
		}
		var others []string
		for _, s := range settings {
			if s.opt == opt && s.canonical() != c.canonical() {
				others = append(others, d.source(s.line)+": "+s.written)
			}
		}
		if len(others) > 0 {
			w := Warning{Code: WarnConflict, Option: opt.spelling(), Applied: d.source(c.line) + ": " + c.written, Others: others}
			if len(others) > 3 {
				w.Others, w.More = others[:3], len(others)-3
			}
			d.Warnings = append(d.Warnings, w)
		}
	}

	use := func(field string, s setting) {
		if d.Sources == nil {
			d.Sources, d.Settings = map[string]string{}, map[string]string{}
		}
		d.Sources[field] = d.source(s.line)
		d.Settings[field] = s.written
	}
	if s, ok := chosen[optGroupID]; ok {
		d.GroupID = s.value
		use(FieldGroup, s)
	}
	if s, ok := chosen[optGroupIDPrefix]; ok {
		d.GroupIDPrefix = s.value
		use(FieldGroupIDPrefix, s)
		if _, both := chosen[optGroupID]; both {
			d.Warnings = append(d.Warnings, Warning{Code: WarnPrefixIgnored})
		}
	}
	if s, ok := chosen[optSubscribe]; ok {
		d.Topics = s.list
		use(FieldTopics, s)
	} else if s, ok := chosen[optAssign]; ok {
		d.Topics = s.list
		use(FieldTopics, s)
	}
	if s, ok := chosen[optSubscribePattern]; ok {
		d.Pattern = s.value
		use(FieldPattern, s)
	}
	var strategies []string
	for _, opt := range []option{optAssign, optSubscribe, optSubscribePattern} {
		if _, ok := chosen[opt]; ok {
			strategies = append(strategies, opt.spelling())
		}
	}
	if len(strategies) > 1 {
		d.Warnings = append(d.Warnings, Warning{Code: WarnStrategies, Others: strategies})
	}
	if s, ok := chosen[optBootstrap]; ok {
		d.Bootstrap = s.list
		use(FieldBootstrap, s)
	}
	if s, ok := chosen[optCheckpoint]; ok {
		d.CheckpointLocation = s.value
		use(FieldCheckpointLocation, s)
	} else if s, ok := chosen[optCheckpointRoot]; ok {
		d.CheckpointLocation = s.value
		d.CheckpointIsRoot = true
		use(FieldCheckpointLocation, s)
	}
	if s, ok := chosen[optFailOnDataLoss]; ok {
		d.FailOnDataLoss = s.value
		use(FieldFailOnDataLoss, s)
	}
}

// FailsOnDataLoss says whether the query fails, rather than skips, when offsets it would read
// are gone: Spark's failOnDataLoss, true unless the file sets it to false.
func (d Deployed) FailsOnDataLoss() bool {
	return !strings.EqualFold(strings.TrimSpace(d.FailOnDataLoss), "false")
}

func (d *Deployed) source(line int) string { return d.File + ":" + strconv.Itoa(line) }

// detectFormat reads the extension, then the content.
func detectFormat(name string, data []byte) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return FormatYAML
	case ".properties":
		return FormatProperties
	case ".conf":
		return sniffProperties(data)
	}
	if looksLikeYAML(data) {
		return FormatYAML
	}
	return sniffProperties(data)
}

// looksLikeYAML finds what Java properties never have: a document marker, a flow collection,
// a list item or a key whose value is an indented block.
func looksLikeYAML(data []byte) bool {
	var prev, prevRaw string // the previous significant line, trimmed on the right and not
	for _, raw := range naturalLines(data) {
		line := strings.TrimRight(string(raw), " \t")
		trimmed := strings.TrimLeft(line, " \t\f")
		if continues(prevRaw) {
			prev, prevRaw = line, string(raw)
			continue
		}
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == '!' {
			continue
		}
		switch {
		case trimmed == "---", strings.HasPrefix(trimmed, "--- "), strings.HasPrefix(trimmed, "%YAML"):
			return true
		case prev == "" && (trimmed[0] == '{' || trimmed[0] == '['):
			return true
		case trimmed == "-" || strings.HasPrefix(trimmed, "- "):
			return true
		case prev != "" && strings.HasSuffix(prev, ":") && len(line) > len(trimmed):
			return true
		}
		prev, prevRaw = line, string(raw)
	}
	return false
}

// sniffProperties tells spark-defaults (every entry "key<whitespace>value") from Java properties.
func sniffProperties(data []byte) string {
	entries, err := propertyEntries("", data)
	if err != nil {
		return FormatProperties // parsing as properties reports the error
	}
	spaced := 0
	for _, e := range entries {
		switch e.sep {
		case sepEquals:
			return FormatProperties
		case sepSpace:
			spaced++
		}
	}
	if spaced > 0 {
		return FormatSparkDefaults
	}
	return FormatProperties
}

// naturalLines splits on \n, \r\n and \r, as Java's LineReader does.
func naturalLines(data []byte) [][]byte {
	var lines [][]byte
	for len(data) > 0 {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i])
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return lines
}

// continues says whether a properties line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for n < len(line) && line[len(line)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}
