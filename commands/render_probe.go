package commands

import (
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// ProbeMessage words what a probe stores and posts (pipeline.Probes.Words): the title of
// incident probe:<name>, its thread notes and resolve, and the channel's notices.
func ProbeMessage(m pipeline.ProbeMessage) string {
	switch m.Kind {
	case pipeline.ProbeTitle:
		return "Checkpoint probe failed for " + m.Pipeline + ": " + m.Reason
	case pipeline.ProbeFailingAgain:
		return fmt.Sprintf("Failing again since %s: %s", human.Clock(m.At), m.Failure)
	case pipeline.ProbeFailsDifferently:
		return fmt.Sprintf("The probe now fails differently (%s): %s\nbefore: %s", human.Clock(m.At), m.Failure, m.Before)
	case pipeline.ProbeFailed:
		return fmt.Sprintf("Checkpoint probe of %s FAILED (%s): %s", m.Pipeline, m.Class, m.Reason)
	case pipeline.ProbeOKAgain:
		return fmt.Sprintf("checkpoint probe of %s is %s again (%s)", m.Pipeline, m.Status, human.Clock(m.At))
	case pipeline.ProbeRecovered:
		return fmt.Sprintf("Checkpoint probe of %s recovered: %s", m.Pipeline, m.Status)
	}
	return string(m.Kind) + ": " + m.Pipeline
}

// ProbeLines lays a probe result out for a reply or a terminal: a heading, one line per step
// (✓ passed, ✗ failed, - skipped) with its timing, the ownership of a local directory, the
// access judgment, and the verdict.
func ProbeLines(r probe.Result) []string {
	heading := "probe of " + r.Location
	if r.Pipeline != "" {
		heading = fmt.Sprintf("probe of %s at %s", r.Pipeline, r.Location)
	}
	lines := []string{heading}
	for _, s := range r.Steps {
		mark, took := "✓", human.Took(s.Took)
		switch {
		case s.Skipped:
			mark, took = "-", ""
		case !s.OK:
			mark = "✗"
		}
		lines = append(lines, strings.TrimRight(fmt.Sprintf("%s %-13s %7s  %s", mark, s.Name, took, s.Detail), " "))
		if !s.OK && !s.Skipped && s.Err != "" && s.Err != s.Detail {
			lines = append(lines, "    error: "+s.Err)
		}
	}
	if o := r.Owner; o != nil {
		lines = append(lines, o.Line())
	}
	lines = append(lines, accessLines(r.Access)...)
	verdict := string(r.Status)
	if r.Class != probe.ClassNone {
		verdict += " " + string(r.Class)
	}
	return append(lines, fmt.Sprintf("%s: %s (took %s)", verdict, r.Reason, human.Took(r.Took)))
}

// accessLines lay the access judgment out: one line when the user may write; else the verdict
// and a line per directory it may not write.
func accessLines(r *access.Report) []string {
	if r == nil {
		return nil
	}
	if r.Err != "" {
		return []string{"access of " + r.Who() + ": not judged: " + r.Err}
	}
	if r.Identity != "" { // an object store's judgment (gs://): "access of streamwatch's identity: …"
		mark := "✓"
		if !r.Writable {
			mark = "✗"
		}
		return []string{mark + " access of " + r.Identity + " (judged without writing): " + strings.TrimPrefix(r.Reason, r.Identity+" "),
			"  " + r.Note}
	}
	if r.Writable {
		return []string{"✓ access (judged without writing): " + r.Reason}
	}
	lines := []string{fmt.Sprintf("✗ access (judged without writing): %s may not create files", r.User)}
	if r.Blocked != nil {
		return append(lines, "  "+r.Reason)
	}
	for _, d := range r.Dirs {
		if d.Writable {
			continue
		}
		l := fmt.Sprintf("  ✗ %s: %s", d.Dir.Path, d.Dir.Describe())
		if d.Why != "" {
			l += ": " + d.Why
		}
		lines = append(lines, l)
	}
	return lines
}
