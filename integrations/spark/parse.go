package spark

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Problem is what is wrong with a file that failed to parse.
type Problem string

// The problems a parser reports.
const (
	ProblemEmpty              Problem = "empty"               // zero bytes
	ProblemTruncated          Problem = "truncated"           // a line or the JSON on it ends early
	ProblemMalformedVersion   Problem = "malformed version"   // first line is not v<k>
	ProblemUnsupportedVersion Problem = "unsupported version" // v<k> higher than any Spark wrote
	ProblemBadJSON            Problem = "unparseable JSON"
	ProblemInvalid            Problem = "invalid" // well-formed, but not the shape Spark writes
)

// ParseError is a file that is not what Spark writes. Its message names the file and the line:
// "offsets/42 line 2: truncated: unexpected end of JSON input".
type ParseError struct {
	File    string
	Line    int // 1-based
	Problem Problem
	Detail  string
}

func (e *ParseError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Problem)
	}
	return fmt.Sprintf("%s line %d: %s: %s", e.File, e.Line, e.Problem, e.Detail)
}

// Highest versions this package reads. Offsets v2 is Spark 4.1+'s opt-in log for named sources,
// read on a best-effort basis.
const (
	MaxOffsetsVersion          = 2
	MaxCommitsVersion          = 2
	MaxOperatorMetadataVersion = 2
	MaxKafkaInitialVersion     = 1
)

// OffsetSeq is one offsets/<N> file: what batch N reads.
type OffsetSeq struct {
	Version int
	// Metadata is line 2. HasMetadata is false for the empty line of very old logs.
	Metadata    BatchMetadata
	HasMetadata bool
	Sources     []SourceOffset // one per source, in plan order (= sources/<i>)
}

// BatchMetadata is line 2 of an offsets file.
type BatchMetadata struct {
	WatermarkMs int64             `json:"batchWatermarkMs"`
	TimestampMs int64             `json:"batchTimestampMs"`
	Conf        map[string]string `json:"conf"` // nil in Spark 2.1.0 files
}

// SourceKind is what a source offset line looks like.
type SourceKind string

// The kinds recognised.
const (
	SourceNone  SourceKind = "none"  // "-": the source has no offset yet
	SourceKafka SourceKind = "kafka" // {"topic":{"partition":offset}}
	SourceFile  SourceKind = "file"  // {"logOffset":n}
	SourceLong  SourceKind = "long"  // a bare integer (MemoryStream, rate)
	SourceOther SourceKind = "other" // any other JSON
)

// SourceOffset is one source line of an offsets file.
type SourceOffset struct {
	Index     int
	Name      string // offsets v2 "<name>:<json>" lines only
	Kind      SourceKind
	Raw       string       // the JSON as stored ("" for SourceNone)
	Kafka     KafkaOffsets // SourceKafka
	LogOffset int64        // SourceFile
	Long      int64        // SourceLong
}

// KafkaOffsets is topic -> partition -> the next offset to read (the exclusive end of a batch).
type KafkaOffsets map[string]map[int32]int64

// CommitMetadata is one commits/<N> file: batch N finished.
type CommitMetadata struct {
	Version         int
	NextWatermarkMs int64 `json:"nextBatchWatermarkMs"`
	// StateUniqueIDs (v2, RocksDB state checkpoint format v2): operator id -> partition ->
	// one unique id per state store of the partition, naming state files <N+1>_<id>.zip|.changelog.
	StateUniqueIDs map[string][][]string `json:"stateUniqueIds"`
}

// StreamMetadata is the checkpoint's metadata file.
type StreamMetadata struct {
	ID string `json:"id"` // the query id, stable across restarts
}

// OperatorMetadata is state/<op>/_metadata/metadata (v1, Spark 3.5+) or a file in
// state/<op>/_metadata/v2/ (Spark 4.0+).
type OperatorMetadata struct {
	Version  int
	Operator struct {
		ID   int    `json:"operatorId"`
		Name string `json:"operatorName"`
	} `json:"operatorInfo"`
	Stores []struct {
		Name             string `json:"storeName"`
		NumColsPrefixKey int    `json:"numColsPrefixKey"`
		NumPartitions    int    `json:"numPartitions"`
	} `json:"stateStoreInfo"`
	PropertiesJSON string `json:"operatorPropertiesJson"`
}

// ParseOffsets parses an offsets/<N> file. file names it in errors.
func ParseOffsets(file string, data []byte) (*OffsetSeq, error) {
	lines, err := splitLines(file, data)
	if err != nil {
		return nil, err
	}
	version, err := parseVersion(file, lines[0], MaxOffsetsVersion)
	if err != nil {
		return nil, err
	}
	seq := &OffsetSeq{Version: version}
	if len(lines) < 2 {
		return nil, &ParseError{File: file, Line: 2, Problem: ProblemTruncated, Detail: "no batch metadata line"}
	}
	if lines[1] != "" {
		if err := decodeLine(file, 2, lines[1], &seq.Metadata); err != nil {
			return nil, err
		}
		seq.HasMetadata = true
	}
	if len(lines) < 3 {
		return nil, &ParseError{File: file, Line: 3, Problem: ProblemTruncated, Detail: "no source offset lines"}
	}
	for i, line := range lines[2:] {
		src, err := parseSourceLine(file, i+3, i, line, version)
		if err != nil {
			return nil, err
		}
		seq.Sources = append(seq.Sources, src)
	}
	return seq, nil
}

var namedSource = regexp.MustCompile(`^([A-Za-z0-9_.\-]+):(.*)$`)

func parseSourceLine(file string, lineNo, index int, line string, version int) (SourceOffset, error) {
	src := SourceOffset{Index: index}
	if version >= 2 {
		if m := namedSource.FindStringSubmatch(line); m != nil {
			src.Name, line = m[1], m[2]
		}
	}
	if line == "-" {
		src.Kind = SourceNone
		return src, nil
	}
	if strings.TrimSpace(line) == "" {
		return src, &ParseError{File: file, Line: lineNo, Problem: ProblemInvalid, Detail: "empty source offset"}
	}
	src.Raw = line
	var v any
	if err := decodeJSON(line, &v); err != nil {
		return src, jsonError(file, lineNo, line, err)
	}
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			src.Kind, src.Long = SourceLong, n
			return src, nil
		}
	case map[string]any:
		if k, ok := kafkaOffsets(x); ok {
			src.Kind, src.Kafka = SourceKafka, k
			return src, nil
		}
		if n, ok := x["logOffset"].(json.Number); ok && len(x) == 1 {
			if l, err := n.Int64(); err == nil {
				src.Kind, src.LogOffset = SourceFile, l
				return src, nil
			}
		}
	}
	src.Kind = SourceOther
	return src, nil
}

// kafkaOffsets recognises {"topic":{"partition":offset,...},...}.
func kafkaOffsets(m map[string]any) (KafkaOffsets, bool) {
	if len(m) == 0 {
		return nil, false
	}
	out := KafkaOffsets{}
	for topic, v := range m {
		parts, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		offs := make(map[int32]int64, len(parts))
		for p, o := range parts {
			pn, err := strconv.ParseInt(p, 10, 32)
			if err != nil {
				return nil, false
			}
			num, ok := o.(json.Number)
			if !ok {
				return nil, false
			}
			off, err := num.Int64()
			if err != nil {
				return nil, false
			}
			offs[int32(pn)] = off
		}
		out[topic] = offs
	}
	return out, true
}

// ParseKafkaOffsets parses a Kafka source offset JSON, as on a source line of an offsets file.
// Spark's own message for a bad one is `Expected e.g. {"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}, got <str>`.
func ParseKafkaOffsets(file string, data []byte) (KafkaOffsets, error) {
	s := strings.TrimRight(string(data), "\r\n")
	if s == "" {
		return nil, &ParseError{File: file, Line: 1, Problem: ProblemEmpty}
	}
	var v any
	if err := decodeJSON(s, &v); err != nil {
		return nil, jsonErrorAt(file, s, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ParseError{File: file, Line: 1, Problem: ProblemInvalid, Detail: `want {"topic":{"partition":offset}}`}
	}
	k, ok := kafkaOffsets(m)
	if !ok {
		return nil, &ParseError{File: file, Line: 1, Problem: ProblemInvalid, Detail: `want {"topic":{"partition":offset}}`}
	}
	return k, nil
}

// ParseKafkaInitialOffsets parses sources/<i>/0 of a Kafka source: one byte Spark skips, then
// either "v1\n" and the offsets JSON (Spark 2.1.1+), or the JSON directly (Spark 2.1.0).
func ParseKafkaInitialOffsets(file string, data []byte) (KafkaOffsets, int, error) {
	if len(data) == 0 {
		return nil, 0, &ParseError{File: file, Line: 1, Problem: ProblemEmpty}
	}
	content := data[1:]
	if len(content) == 0 {
		return nil, 0, &ParseError{File: file, Line: 1, Problem: ProblemTruncated, Detail: "only the leading byte"}
	}
	if content[0] != 'v' {
		k, err := ParseKafkaOffsets(file, content)
		return k, 0, err
	}
	nl := bytes.IndexByte(content, '\n')
	if nl < 0 {
		return nil, 0, &ParseError{File: file, Line: 1, Problem: ProblemTruncated, Detail: "version line without the offsets that follow it"}
	}
	version, err := parseVersion(file, strings.TrimSuffix(string(content[:nl]), "\r"), MaxKafkaInitialVersion)
	if err != nil {
		return nil, 0, err
	}
	k, err := ParseKafkaOffsets(file, content[nl+1:])
	if pe, ok := err.(*ParseError); ok {
		pe.Line++
	}
	return k, version, err
}

// ParseCommit parses a commits/<N> file. The JSON line is optional (missing = {}).
func ParseCommit(file string, data []byte) (*CommitMetadata, error) {
	lines, err := splitLines(file, data)
	if err != nil {
		return nil, err
	}
	version, err := parseVersion(file, lines[0], MaxCommitsVersion)
	if err != nil {
		return nil, err
	}
	c := &CommitMetadata{}
	if len(lines) > 1 && lines[1] != "" {
		if err := decodeLine(file, 2, lines[1], c); err != nil {
			return nil, err
		}
	}
	c.Version = version
	return c, nil
}

// ParseMetadata parses the checkpoint's metadata file ({"id":"<uuid>"}, no version line).
func ParseMetadata(file string, data []byte) (*StreamMetadata, error) {
	if len(data) == 0 {
		return nil, &ParseError{File: file, Line: 1, Problem: ProblemEmpty}
	}
	var raw map[string]json.RawMessage
	if err := decodeJSON(string(data), &raw); err != nil {
		return nil, jsonErrorAt(file, string(data), err)
	}
	m := &StreamMetadata{}
	id, ok := raw["id"]
	if !ok {
		return nil, &ParseError{File: file, Line: 1, Problem: ProblemInvalid, Detail: "no query id"}
	}
	if err := json.Unmarshal(id, &m.ID); err != nil || m.ID == "" {
		return nil, &ParseError{File: file, Line: 1, Problem: ProblemInvalid, Detail: "query id is not a non-empty string"}
	}
	return m, nil
}

// ParseOperatorMetadata parses state/<op>/_metadata/metadata or a _metadata/v2/<batch> file.
func ParseOperatorMetadata(file string, data []byte) (*OperatorMetadata, error) {
	lines, err := splitLines(file, data)
	if err != nil {
		return nil, err
	}
	version, err := parseVersion(file, lines[0], MaxOperatorMetadataVersion)
	if err != nil {
		return nil, err
	}
	if len(lines) < 2 || lines[1] == "" {
		return nil, &ParseError{File: file, Line: 2, Problem: ProblemTruncated, Detail: "no operator metadata line"}
	}
	m := &OperatorMetadata{}
	if err := decodeLine(file, 2, lines[1], m); err != nil {
		return nil, err
	}
	m.Version = version
	return m, nil
}

// splitLines splits as Spark's line reader does (\n or \r\n); a final newline ends the last
// line rather than starting an empty one.
func splitLines(file string, data []byte) ([]string, error) {
	if len(data) == 0 {
		return nil, &ParseError{File: file, Line: 1, Problem: ProblemEmpty, Detail: "Spark: Incomplete log file"}
	}
	s := strings.TrimSuffix(string(data), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines, nil
}

// parseVersion checks a "v<k>" line as Spark's MetadataVersionUtil does.
func parseVersion(file, line string, max int) (int, error) {
	if !strings.HasPrefix(line, "v") {
		return 0, &ParseError{File: file, Line: 1, Problem: ProblemMalformedVersion, Detail: fmt.Sprintf("want v1..v%d, got %s", max, quoteShort(line))}
	}
	v, err := strconv.Atoi(line[1:])
	if err != nil || v <= 0 {
		if err != nil && errors.Is(err, strconv.ErrRange) {
			return 0, &ParseError{File: file, Line: 1, Problem: ProblemUnsupportedVersion, Detail: fmt.Sprintf("%s; this reader supports up to v%d", quoteShort(line), max)}
		}
		return 0, &ParseError{File: file, Line: 1, Problem: ProblemMalformedVersion, Detail: fmt.Sprintf("want v1..v%d, got %s", max, quoteShort(line))}
	}
	if v > max {
		return 0, &ParseError{File: file, Line: 1, Problem: ProblemUnsupportedVersion, Detail: fmt.Sprintf("v%d; this reader supports up to v%d (written by a newer Spark?)", v, max)}
	}
	return v, nil
}

// decodeLine decodes one line of JSON into v.
func decodeLine(file string, lineNo int, line string, v any) error {
	if err := decodeJSON(line, v); err != nil {
		return jsonError(file, lineNo, line, err)
	}
	return nil
}

// decodeJSON decodes exactly one JSON value, with numbers kept exact.
func decodeJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func jsonError(file string, lineNo int, line string, err error) error {
	problem := ProblemBadJSON
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		problem = ProblemTruncated
	case errors.As(err, &te):
		problem = ProblemInvalid
	}
	return &ParseError{File: file, Line: lineNo, Problem: problem, Detail: fmt.Sprintf("%v in %s", err, quoteShort(line))}
}

// jsonErrorAt is jsonError for a multi-line document: the line comes from the error offset.
func jsonErrorAt(file, doc string, err error) error {
	line := 1
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && int(se.Offset) <= len(doc) {
		line += strings.Count(doc[:se.Offset], "\n")
	} else if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line += strings.Count(strings.TrimRight(doc, "\n"), "\n")
	}
	lines := strings.Split(doc, "\n")
	return jsonError(file, line, lines[min(line, len(lines))-1], err)
}

func quoteShort(s string) string {
	const max = 80
	if len(s) > max {
		return strconv.Quote(s[:max]) + "..."
	}
	return strconv.Quote(s)
}

// ParseBatchID reads a metadata-log file name as Spark does (Long.parseLong of the name): only
// such names are batches; ".0.crc", temp files and anything else are not.
func ParseBatchID(name string) (int64, bool) {
	if name == "" {
		return 0, false
	}
	id, err := strconv.ParseInt(name, 10, 64)
	return id, err == nil
}

// IsTempFile reports whether name is a hidden temp file of an atomic write,
// .<final-name>.<uuid>[.TID<n>].tmp.
func IsTempFile(name string) bool {
	return len(name) > len("..tmp") && strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp")
}

// IsChecksumFile reports whether name is a Hadoop checksum sidecar, .<name>.crc; CRCTarget is
// the file it belongs to.
func IsChecksumFile(name string) bool {
	return len(name) > len("..crc") && strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".crc")
}

// CRCTarget is the name of the file a checksum sidecar belongs to.
func CRCTarget(name string) string { return strings.TrimSuffix(strings.TrimPrefix(name, "."), ".crc") }

// StateFileKind is the kind of a state store file.
type StateFileKind string

// The state file kinds.
const (
	StateDelta     StateFileKind = "delta"     // HDFS provider: changes of one version
	StateSnapshot  StateFileKind = "snapshot"  // HDFS provider: full state at a version
	StateZip       StateFileKind = "zip"       // RocksDB checkpoint of a version
	StateChangelog StateFileKind = "changelog" // RocksDB changelog of a version
)

// StateFile is a parsed state store file name: <v>.<kind> or <v>_<uniqueId>.<kind>.
type StateFile struct {
	Version  int64
	Kind     StateFileKind
	UniqueID string // RocksDB state checkpoint format v2 only
}

// ParseStateFileName recognises the state store file names of both providers.
func ParseStateFileName(name string) (StateFile, bool) {
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return StateFile{}, false
	}
	kind := StateFileKind(name[dot+1:])
	switch kind {
	case StateDelta, StateSnapshot, StateZip, StateChangelog:
	default:
		return StateFile{}, false
	}
	base, id, hasID := strings.Cut(name[:dot], "_")
	if hasID && (id == "" || kind == StateDelta || kind == StateSnapshot) {
		return StateFile{}, false
	}
	if base == "" || base[0] < '0' || base[0] > '9' {
		return StateFile{}, false
	}
	v, err := strconv.ParseInt(base, 10, 64)
	if err != nil {
		return StateFile{}, false
	}
	return StateFile{Version: v, Kind: kind, UniqueID: id}, true
}
