package commands

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
)

// DriftReason words what follows from a difference between a deployed job's options and
// streamwatch's documentation of the pipeline; "" when nothing more than the difference.
func DriftReason(d deployconf.Difference) string {
	switch d.Why {
	case deployconf.WhyOtherGroup:
		return fmt.Sprintf("The job consumes as %s; streamwatch watches %s, so the lag it reports is not the job's.", d.Deployed, d.Documented)
	case deployconf.WhyPrefix:
		return fmt.Sprintf("kafka.group.id is not set, so Spark generates the group, %s-<uuid>-<hash> for each query; %s does not start with the prefix and will never see the job's commits.",
			d.Prefix, d.Documented)
	case deployconf.WhyGenerated:
		return fmt.Sprintf("Neither kafka.group.id nor groupIdPrefix is set, so Spark generates %s-<uuid>-<hash> groups; the documented group %s will never see commits.",
			d.Prefix, d.Documented)
	case deployconf.WhyTopics:
		var parts []string
		if len(d.NotRead) > 0 {
			parts = append(parts, "documented but not read by the job: "+strings.Join(d.NotRead, ", "))
		}
		if len(d.NotDocumented) > 0 {
			parts = append(parts, "read by the job but not documented: "+strings.Join(d.NotDocumented, ", "))
		}
		s := strings.Join(parts, "; ")
		if s != "" {
			s = strings.ToUpper(s[:1]) + s[1:]
		}
		return s + "."
	case deployconf.WhyPatternUnreadable:
		return fmt.Sprintf("streamwatch cannot evaluate this pattern (%s); check by hand that it matches %s.", d.PatternErr, d.Documented)
	case deployconf.WhyPatternUnmatched:
		return fmt.Sprintf("The pattern does not match the documented %s, so the job does not read it.", strings.Join(d.Unmatched, ", "))
	case deployconf.WhyNoTopics:
		return "The file names no topics; Spark refuses to start a Kafka query without one of them, unless the job sets it in code."
	case deployconf.WhyOtherCluster:
		return "No broker in common: the job may read another cluster than the one streamwatch watches."
	case deployconf.WhyRoot:
		return fmt.Sprintf("spark.sql.streaming.checkpointLocation is a root: Spark checkpoints the query in %s/<queryName>, and the documented location is not directly under it.",
			strings.TrimSuffix(d.Deployed, "/"))
	case deployconf.WhyOtherCheckpoint:
		return "streamwatch reads and probes a checkpoint the job does not write."
	}
	return ""
}

// DeployWarning words a setting Spark resolves in a way the file does not make obvious.
func DeployWarning(w deployconf.Warning) string {
	switch w.Code {
	case deployconf.WarnConflict:
		others := w.Others
		if w.More > 0 {
			others = append(others[:len(others):len(others)], fmt.Sprintf("%d more", w.More))
		}
		return fmt.Sprintf("%s is set more than once with different values; %s applies, not %s.", w.Option, w.Applied, strings.Join(others, ", "))
	case deployconf.WarnPrefixIgnored:
		return "groupIdPrefix is ignored: Spark uses kafka.group.id when both are set."
	case deployconf.WarnStrategies:
		return fmt.Sprintf("%s are set together: Spark refuses to start a query with more than one of assign, subscribe and subscribePattern.",
			strings.Join(w.Others, ", "))
	case deployconf.WarnApps:
		return fmt.Sprintf("%d SparkApplications in one file: read the first, %q at line %d.", w.N, w.Name, w.Line)
	}
	return string(w.Code)
}

// DeployedLines lays out what a deployed options file sets, one line per field, then its
// warnings, as plain text.
func DeployedLines(d deployconf.Deployed) []string {
	name := d.File
	if name == "" {
		name = "deployed options"
	}
	lines := []string{onItsLine(name)}
	if d.Format != "" {
		lines[0] += " (" + d.Format + ")"
	}
	field := func(label, field, value string) {
		lines = append(lines, label+": "+quoteUnclear(value)+" ("+onItsLine(d.Evidence(field))+")")
	}
	switch {
	case d.GroupID != "" || d.Sources[deployconf.FieldGroup] != "":
		field("group", deployconf.FieldGroup, d.GroupID)
	case d.GroupIDPrefix != "":
		lines = append(lines, "group: not set (Spark generates "+onItsLine(d.GroupIDPrefix)+"-<uuid>-… groups)")
	default:
		lines = append(lines, "group: not set (Spark generates "+deployconf.SparkDefaultGroupPrefix+"-<uuid>-… groups)")
	}
	if d.GroupIDPrefix != "" || d.Sources[deployconf.FieldGroupIDPrefix] != "" {
		field("groupIdPrefix", deployconf.FieldGroupIDPrefix, d.GroupIDPrefix)
	}
	switch {
	case len(d.Topics) > 0 || d.Sources[deployconf.FieldTopics] != "":
		field("topics", deployconf.FieldTopics, strings.Join(d.Topics, ", "))
	case d.Pattern == "":
		lines = append(lines, "topics: not set")
	}
	if d.Pattern != "" || d.Sources[deployconf.FieldPattern] != "" {
		field("subscribePattern", deployconf.FieldPattern, d.Pattern)
	}
	if len(d.Bootstrap) > 0 || d.Sources[deployconf.FieldBootstrap] != "" {
		field("bootstrap", deployconf.FieldBootstrap, strings.Join(d.Bootstrap, ", "))
	} else {
		lines = append(lines, "bootstrap: not set")
	}
	switch {
	case d.CheckpointIsRoot:
		field("checkpoint root", deployconf.FieldCheckpointLocation, d.CheckpointLocation)
	case d.CheckpointLocation != "" || d.Sources[deployconf.FieldCheckpointLocation] != "":
		field("checkpointLocation", deployconf.FieldCheckpointLocation, d.CheckpointLocation)
	default:
		lines = append(lines, "checkpointLocation: not set")
	}
	if d.FailOnDataLoss != "" {
		field("failOnDataLoss", deployconf.FieldFailOnDataLoss, d.FailOnDataLoss)
	}
	for _, w := range d.Warnings {
		lines = append(lines, "warning: "+onItsLine(DeployWarning(w)))
	}
	return lines
}

// DriftLines lays out each difference on one line of plain text:
//
//	group mismatch: documented sms-replies-prod, deployed sms-replies-v2 (sms-replies.conf:12: spark.kafka.group.id=sms-replies-v2). The job consumes as …
func DriftLines(diffs []deployconf.Difference) []string {
	var lines []string
	for _, d := range diffs {
		deployed := "not set"
		if d.Deployed != "" {
			deployed = quoteUnclear(d.Deployed)
		}
		line := d.Field + " " + d.Severity + ": documented " + quoteUnclear(d.Documented) + ", deployed " + deployed
		if d.Evidence != "" {
			line += " (" + onItsLine(d.Evidence) + ")"
		}
		if r := DriftReason(d); r != "" {
			line += ". " + onItsLine(r)
		}
		lines = append(lines, line)
	}
	return lines
}

// quoteUnclear quotes values a reader could misread: empty, padded, or holding control
// characters.
func quoteUnclear(s string) string {
	if s == "" || strings.TrimSpace(s) != s || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// onItsLine keeps a rendering on its line whatever a file's value holds: each control
// character becomes U+FFFD.
func onItsLine(s string) string {
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
