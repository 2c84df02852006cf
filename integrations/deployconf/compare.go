package deployconf

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Documented is what streamwatch's configuration says of a pipeline: pipelines[].kafka.group,
// .topics, the cluster's brokers and pipelines[].checkpoint.location.
type Documented struct {
	Group              string
	Topics             []string
	Brokers            []string
	CheckpointLocation string
}

// Severities of a Difference.
const (
	SeverityMismatch = "mismatch" // the file sets the field to something else
	SeverityMissing  = "missing"  // the file does not set the field
)

// Difference is one field on which a deployed job departs from its documentation. Why says
// what follows from it, with the fields after it as its values; commands words it
// (commands/render_drift.go).
type Difference struct {
	Field      string // FieldGroup, FieldTopics, FieldBootstrap or FieldCheckpointLocation
	Documented string
	Deployed   string // "" when not set
	Evidence   string // "sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2"
	Severity   string // SeverityMismatch or SeverityMissing
	Why        Why    `json:",omitempty"` // what follows from it, or ""

	Prefix        string   `json:",omitempty"` // WhyPrefix, WhyGenerated: the generated groups' prefix
	NotRead       []string `json:",omitempty"` // WhyTopics: documented topics the job does not read
	NotDocumented []string `json:",omitempty"` // WhyTopics: topics the job reads that are not documented
	Unmatched     []string `json:",omitempty"` // WhyPatternUnmatched: documented topics the pattern misses
	PatternErr    string   `json:",omitempty"` // WhyPatternUnreadable: why Go cannot compile the pattern
}

// Why says what follows from a Difference.
type Why string

// The reasons, with the Difference fields each uses.
const (
	// WhyOtherGroup: the job consumes as another group, so the lag streamwatch reports is not
	// the job's (Deployed, Documented).
	WhyOtherGroup Why = "other_group"
	// WhyPrefix: only groupIdPrefix is set, Spark generates <Prefix>-<uuid>-<hash> groups, and
	// the documented group does not start with it (Prefix, Documented).
	WhyPrefix Why = "prefix"
	// WhyGenerated: neither kafka.group.id nor groupIdPrefix is set: Spark generates
	// <Prefix>-<uuid>-<hash> groups (Prefix: SparkDefaultGroupPrefix, Documented).
	WhyGenerated Why = "generated"
	// WhyTopics: the job reads other topics (NotRead, NotDocumented).
	WhyTopics Why = "topics"
	// WhyPatternUnreadable: Go cannot compile subscribePattern (PatternErr, Documented).
	WhyPatternUnreadable Why = "pattern_unreadable"
	// WhyPatternUnmatched: subscribePattern misses documented topics (Unmatched).
	WhyPatternUnmatched Why = "pattern_unmatched"
	// WhyNoTopics: the file names no topics, which Spark refuses unless the code sets them.
	WhyNoTopics Why = "no_topics"
	// WhyOtherCluster: the bootstrap lists share no broker.
	WhyOtherCluster Why = "other_cluster"
	// WhyRoot: spark.sql.streaming.checkpointLocation is a root (Deployed) the documented
	// location is not directly under.
	WhyRoot Why = "root"
	// WhyOtherCheckpoint: the job checkpoints elsewhere than streamwatch reads and probes.
	WhyOtherCheckpoint Why = "other_checkpoint"
)

// SparkDefaultGroupPrefix is what Spark prefixes its generated groups with when groupIdPrefix is
// not set.
const SparkDefaultGroupPrefix = "spark-kafka-source"

// Compare lists the fields where dep departs from doc, one Difference each, in the order group,
// topics, bootstrap, checkpointLocation; none when they agree. Fields doc leaves empty are not
// judged.
func Compare(doc Documented, dep Deployed) []Difference {
	var diffs []Difference
	for _, judge := range []func(Documented, Deployed) (Difference, bool){compareGroup, compareTopics, compareBootstrap, compareCheckpoint} {
		if d, ok := judge(doc, dep); ok {
			diffs = append(diffs, d)
		}
	}
	return diffs
}

func compareGroup(doc Documented, dep Deployed) (Difference, bool) {
	if doc.Group == "" {
		return Difference{}, false
	}
	d := Difference{Field: FieldGroup, Documented: doc.Group, Severity: SeverityMismatch}
	switch {
	case dep.GroupID != "":
		if dep.GroupID == doc.Group {
			return d, false
		}
		d.Deployed, d.Evidence, d.Why = dep.GroupID, dep.Evidence(FieldGroup), WhyOtherGroup
	case dep.GroupIDPrefix != "":
		if strings.HasPrefix(doc.Group, dep.GroupIDPrefix) {
			return d, false
		}
		d.Deployed, d.Evidence = dep.GroupIDPrefix+"-<uuid>-…", dep.Evidence(FieldGroupIDPrefix)
		d.Why, d.Prefix = WhyPrefix, dep.GroupIDPrefix
	default:
		d.Severity = SeverityMissing
		d.Deployed = SparkDefaultGroupPrefix + "-<uuid>-…"
		d.Evidence = dep.absent("kafka.group.id", "groupIdPrefix")
		d.Why, d.Prefix = WhyGenerated, SparkDefaultGroupPrefix
	}
	return d, true
}

func compareTopics(doc Documented, dep Deployed) (Difference, bool) {
	documented := topicSet(doc.Topics)
	if len(documented) == 0 {
		return Difference{}, false
	}
	d := Difference{Field: FieldTopics, Documented: strings.Join(documented, ", "), Severity: SeverityMismatch}
	switch {
	case len(dep.Topics) > 0:
		deployed := topicSet(dep.Topics)
		if slices.Equal(documented, deployed) {
			return d, false
		}
		d.Deployed, d.Evidence = strings.Join(deployed, ", "), dep.Evidence(FieldTopics)
		d.Why, d.NotRead, d.NotDocumented = WhyTopics, without(documented, deployed), without(deployed, documented)
	case dep.Pattern != "":
		d.Deployed, d.Evidence = "subscribePattern "+dep.Pattern, dep.Evidence(FieldPattern)
		re, err := regexp.Compile(`^(?:` + dep.Pattern + `)$`)
		if err != nil {
			d.Why, d.PatternErr = WhyPatternUnreadable, err.Error()
			return d, true
		}
		var unmatched []string
		for _, t := range documented {
			if !re.MatchString(t) {
				unmatched = append(unmatched, t)
			}
		}
		if len(unmatched) == 0 {
			return d, false
		}
		d.Why, d.Unmatched = WhyPatternUnmatched, unmatched
	default:
		d.Severity, d.Evidence = SeverityMissing, dep.absent("subscribe", "subscribePattern", "assign")
		d.Why = WhyNoTopics
	}
	return d, true
}

func compareBootstrap(doc Documented, dep Deployed) (Difference, bool) {
	if len(doc.Brokers) == 0 {
		return Difference{}, false
	}
	d := Difference{Field: FieldBootstrap, Documented: strings.Join(doc.Brokers, ", "), Severity: SeverityMismatch}
	if len(dep.Bootstrap) == 0 {
		d.Severity, d.Evidence = SeverityMissing, dep.absent("kafka.bootstrap.servers")
		return d, true
	}
	documented := map[string]bool{}
	for _, b := range doc.Brokers {
		documented[normalizeBroker(b)] = true
	}
	for _, b := range dep.Bootstrap {
		if documented[normalizeBroker(b)] {
			return d, false // bootstrap lists are seeds: one shared broker reaches the same cluster
		}
	}
	d.Deployed, d.Evidence, d.Why = strings.Join(dep.Bootstrap, ", "), dep.Evidence(FieldBootstrap), WhyOtherCluster
	return d, true
}

func compareCheckpoint(doc Documented, dep Deployed) (Difference, bool) {
	if doc.CheckpointLocation == "" {
		return Difference{}, false
	}
	d := Difference{Field: FieldCheckpointLocation, Documented: doc.CheckpointLocation, Severity: SeverityMismatch}
	if dep.CheckpointLocation == "" {
		d.Severity, d.Evidence = SeverityMissing, dep.absent("checkpointLocation", "spark.sql.streaming.checkpointLocation")
		return d, true
	}
	documented, deployed := normalizeLocation(doc.CheckpointLocation), normalizeLocation(dep.CheckpointLocation)
	if documented == deployed || (dep.CheckpointIsRoot && parentLocation(documented) == deployed) {
		return d, false
	}
	d.Deployed, d.Evidence, d.Why = dep.CheckpointLocation, dep.Evidence(FieldCheckpointLocation), WhyOtherCheckpoint
	if dep.CheckpointIsRoot {
		d.Why = WhyRoot
	}
	return d, true
}

// Evidence is "file:line: key=value" for a field the file sets, else the file's name.
func (d Deployed) Evidence(field string) string {
	src, ok := d.Sources[field]
	if !ok {
		return d.File
	}
	if w := d.Settings[field]; w != "" {
		return src + ": " + w
	}
	return src
}

// absent is the evidence for options the file does not set.
func (d Deployed) absent(keys ...string) string {
	name := d.File
	if name == "" {
		name = "the deployed options"
	}
	switch len(keys) {
	case 1:
		return name + ": no " + keys[0]
	case 2:
		return name + ": no " + keys[0] + " or " + keys[1]
	}
	return name + ": no " + strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

// topicSet sorts and deduplicates, dropping blanks.
func topicSet(topics []string) []string {
	var out []string
	for _, t := range topics {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// without is a less b; both sorted.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}

// normalizeBroker drops a listener prefix (SASL_SSL://) and case, which Kafka ignores.
func normalizeBroker(b string) string {
	b = strings.TrimSpace(b)
	if _, rest, ok := strings.Cut(b, "://"); ok {
		b = rest
	}
	return strings.ToLower(strings.TrimSuffix(b, "/"))
}

// normalizeLocation makes file:///p, file:/p and /p/ the same path, and s3a:// and s3n:// the
// s3:// they are to streamwatch.
func normalizeLocation(loc string) string {
	s := strings.TrimSpace(loc)
	if scheme, rest, ok := strings.Cut(s, "://"); ok && isScheme(scheme) {
		switch scheme = strings.ToLower(scheme); scheme {
		case "s3a", "s3n":
			scheme = "s3"
		case "file":
			if strings.HasPrefix(rest, "/") {
				return path.Clean(rest)
			}
			if host, p, _ := strings.Cut(rest, "/"); strings.EqualFold(host, "localhost") {
				return path.Clean("/" + p)
			}
		}
		host, p, _ := strings.Cut(rest, "/")
		if p = strings.TrimPrefix(path.Clean("/"+p), "/"); p != "" {
			return scheme + "://" + host + "/" + p
		}
		return scheme + "://" + host
	}
	if len(s) > 5 && strings.EqualFold(s[:5], "file:") {
		s = s[5:] // Hadoop's file:/p
	}
	if s == "" {
		return ""
	}
	return path.Clean(s)
}

// parentLocation is the location one level up, or "" at the top.
func parentLocation(norm string) string {
	if scheme, rest, ok := strings.Cut(norm, "://"); ok {
		host, p, found := strings.Cut(rest, "/")
		if !found {
			return ""
		}
		if dir := path.Dir("/" + p); dir != "/" {
			return scheme + "://" + host + dir
		}
		return scheme + "://" + host
	}
	if norm == "/" || norm == "." || norm == "" {
		return ""
	}
	return path.Dir(norm)
}

var schemePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

func isScheme(s string) bool { return schemePattern.MatchString(s) }
