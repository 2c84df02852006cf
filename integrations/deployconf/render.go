package deployconf

import (
	"strconv"
	"strings"
	"unicode"
)

// Lines renders what the file sets, one line per field, then its warnings, as plain text.
func (d Deployed) Lines() []string {
	name := d.File
	if name == "" {
		name = "deployed options"
	}
	lines := []string{oneLine(name)}
	if d.Format != "" {
		lines[0] += " (" + d.Format + ")"
	}
	field := func(label, field, value string) {
		lines = append(lines, label+": "+show(value)+" ("+oneLine(d.evidence(field))+")")
	}
	switch {
	case d.GroupID != "" || d.Sources[FieldGroup] != "":
		field("group", FieldGroup, d.GroupID)
	case d.GroupIDPrefix != "":
		lines = append(lines, "group: not set (Spark generates "+oneLine(d.GroupIDPrefix)+"-<uuid>-… groups)")
	default:
		lines = append(lines, "group: not set (Spark generates "+sparkDefaultGroupPrefix+"-<uuid>-… groups)")
	}
	if d.GroupIDPrefix != "" || d.Sources[FieldGroupIDPrefix] != "" {
		field("groupIdPrefix", FieldGroupIDPrefix, d.GroupIDPrefix)
	}
	switch {
	case len(d.Topics) > 0 || d.Sources[FieldTopics] != "":
		field("topics", FieldTopics, strings.Join(d.Topics, ", "))
	case d.Pattern == "":
		lines = append(lines, "topics: not set")
	}
	if d.Pattern != "" || d.Sources[FieldPattern] != "" {
		field("subscribePattern", FieldPattern, d.Pattern)
	}
	if len(d.Bootstrap) > 0 || d.Sources[FieldBootstrap] != "" {
		field("bootstrap", FieldBootstrap, strings.Join(d.Bootstrap, ", "))
	} else {
		lines = append(lines, "bootstrap: not set")
	}
	switch {
	case d.CheckpointIsRoot:
		field("checkpoint root", FieldCheckpointLocation, d.CheckpointLocation)
	case d.CheckpointLocation != "" || d.Sources[FieldCheckpointLocation] != "":
		field("checkpointLocation", FieldCheckpointLocation, d.CheckpointLocation)
	default:
		lines = append(lines, "checkpointLocation: not set")
	}
	if d.FailOnDataLoss != "" {
		field("failOnDataLoss", FieldFailOnDataLoss, d.FailOnDataLoss)
	}
	for _, w := range d.Warnings {
		lines = append(lines, "warning: "+oneLine(w))
	}
	return lines
}

// Lines renders each difference on one line of plain text:
//
//	group mismatch: documented sms-replies-prod, deployed sms-replies-v2 (sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2). The job consumes as …
func Lines(diffs []Difference) []string {
	var lines []string
	for _, d := range diffs {
		deployed := "not set"
		if d.Deployed != "" {
			deployed = show(d.Deployed)
		}
		line := d.Field + " " + d.Severity + ": documented " + show(d.Documented) + ", deployed " + deployed
		if d.Evidence != "" {
			line += " (" + oneLine(d.Evidence) + ")"
		}
		if d.Reason != "" {
			line += ". " + oneLine(d.Reason)
		}
		lines = append(lines, line)
	}
	return lines
}

// show quotes values a reader could misread: empty, padded, or holding control characters.
func show(s string) string {
	if s == "" || strings.TrimSpace(s) != s || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// oneLine keeps a rendering on its line whatever a file's value holds.
func oneLine(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}
