package commands

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
	"github.com/streamwatch/streamwatch/state"
)

// ProbeMessage words what a probe stores and posts (pipeline.Probes.Words): the title of
// incident probe:<name>, its thread notes and resolve, and the channel's notices.
func ProbeMessage(m pipeline.ProbeMessage) string {
	switch m.Kind {
	case pipeline.ProbeReason:
		if m.Result == nil {
			return ""
		}
		return ProbeReason(*m.Result)
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
		detail := StepDetail(s)
		lines = append(lines, strings.TrimRight(fmt.Sprintf("%s %-13s %7s  %s", mark, s.Name, took, detail), " "))
		if !s.OK && !s.Skipped && s.Err != "" && s.Err != detail {
			lines = append(lines, "    error: "+s.Err)
		}
	}
	if o := r.Owner; o != nil {
		lines = append(lines, OwnershipLine(*o))
	}
	lines = append(lines, accessLines(r.Access)...)
	verdict := string(r.Status)
	if r.Class != probe.ClassNone {
		verdict += " " + string(r.Class)
	}
	return append(lines, fmt.Sprintf("%s: %s (took %s)", verdict, ProbeReason(r), human.Took(r.Took)))
}

// ProbeReason is one sentence saying why a probe's status is what it is, e.g. "permission
// denied writing /var/lib/spark/checkpoints/sms-replies/_streamwatch_probe/probe-<id>"; an
// earlier version's result has its own words.
func ProbeReason(r probe.Result) string {
	if len(r.Why) == 0 {
		return r.Reason
	}
	return probeWhy(r.Why, r.Access)
}

// probeWhy words a result's findings, joined by "; "; a refusal by the access check is worded
// as the check's reason.
func probeWhy(why []probe.Finding, a *access.Report) string {
	parts := make([]string, 0, len(why))
	for _, f := range why {
		if f.Code == probe.CodeAccessRefused && a != nil {
			parts = append(parts, AccessReason(a))
			continue
		}
		parts = append(parts, ProbeFinding(f))
	}
	return strings.Join(parts, "; ")
}

// StepDetail says what a probe's step found, or why it failed; "skipped" for a step after
// the failed one.
func StepDetail(s probe.Step) string {
	switch {
	case s.Found != nil:
		return ProbeFinding(*s.Found)
	case s.Skipped && s.Detail == "":
		return "skipped"
	}
	return s.Detail
}

// stepVerbs say what a step was doing, for findings: "permission denied writing <path>".
var stepVerbs = map[string]string{
	probe.StepStat:         "checking",
	probe.StepList:         "listing",
	probe.StepReadMetadata: "reading",
	probe.StepReadOffsets:  "reading",
	probe.StepReadCommits:  "reading",
	probe.StepWrite:        "writing",
	probe.StepReadBack:     "reading back",
	probe.StepDelete:       "deleting",
}

// ProbeFinding words one finding of a probe.
func ProbeFinding(f probe.Finding) string {
	verb := stepVerbs[f.Step]
	switch f.Code {
	case probe.CodeDirExists:
		return "directory exists"
	case probe.CodeListed:
		parts := []string{fmt.Sprintf("%d entries", f.N)}
		for _, d := range f.Logs {
			switch {
			case !d.Present:
				parts = append(parts, d.Dir+"/ absent")
			case d.Files == 0:
				parts = append(parts, d.Dir+"/ empty")
			default:
				parts = append(parts, fmt.Sprintf("%s/ %d..%d (%d files)", d.Dir, d.First, d.Last, d.Files))
			}
		}
		if f.NoMetadata {
			parts = append(parts, "no metadata")
		}
		return strings.Join(parts, ", ")
	case probe.CodeNoMetadata:
		return "no metadata file (Spark writes a new query id on restart)"
	case probe.CodeQueryID:
		return "query id " + f.ID
	case probe.CodeNoBatchPlanned:
		return "no batch planned yet"
	case probe.CodeOffsetsRead:
		s := fmt.Sprintf("offsets/%d: %d source(s)", f.Batch, f.N)
		if !f.At.IsZero() {
			s += fmt.Sprintf(", planned %s (%s ago)", f.At.UTC().Format(time.RFC3339), human.Took(f.Age))
		}
		return s
	case probe.CodeNoBatchCommitted:
		return "no batch committed yet"
	case probe.CodeCommitRead:
		return fmt.Sprintf("commits/%d: committed %s (%s ago)", f.Batch, f.At.UTC().Format(time.RFC3339), human.Took(f.Age))
	case probe.CodeWrote:
		return fmt.Sprintf("wrote %d bytes to %s", f.N, f.Path)
	case probe.CodeBytesMatch:
		return fmt.Sprintf("%d bytes match", f.N)
	case probe.CodeDeleted:
		return "deleted " + f.Path
	case probe.CodeCleanup:
		s := "cleanup after the failed read back"
		if f.Of != nil {
			s += ": " + ProbeFinding(*f.Of)
		}
		return s
	case probe.CodeCorruptFile:
		return fmt.Sprintf("corrupt %s: line %d: %s", f.Path, f.Line, f.Problem)
	case probe.CodeCancelled:
		return fmt.Sprintf("the probe was cancelled while %s %s", verb, f.Path)
	case probe.CodeTimedOut:
		return fmt.Sprintf("timed out %s %s", verb, f.Path)
	case probe.CodePermissionDenied:
		return fmt.Sprintf("permission denied %s %s", verb, f.Path)
	case probe.CodeNotFound:
		return fmt.Sprintf("%s not found while %s it", f.Path, verb)
	case probe.CodeStepFailed:
		return fmt.Sprintf("%s %s failed: %s", verb, f.Path, f.Cause)
	case probe.CodeCannotOpen:
		return fmt.Sprintf("cannot open checkpoint location %q: %s", f.Path, f.Cause)
	case probe.CodeNoLocation:
		return fmt.Sprintf("no checkpoint at %s: the location does not exist", f.Path)
	case probe.CodeIsFile:
		return fmt.Sprintf("no checkpoint at %s: it is a file, not a directory", f.Path)
	case probe.CodeNoCheckpointFiles:
		return fmt.Sprintf("no checkpoint at %s: it holds no metadata, offsets/ or commits/", f.Path)
	case probe.CodeBadProbePath:
		return fmt.Sprintf("cannot use probe path %q: %s", f.Path, f.Cause)
	case probe.CodeNoProbeName:
		return "cannot name the probe object: " + f.Cause
	case probe.CodeReadBackDiffers:
		return fmt.Sprintf("reading back %s returned other bytes than were written", f.Path)
	case probe.CodeCrashed:
		return fmt.Sprintf("the probe of %s crashed: %s", f.Path, f.Cause)
	case probe.CodeAccessRefused:
		return "the access check judged the location not writable"
	case probe.CodeHealthy:
		what := "readable"
		if f.Write {
			what = "readable and writable"
		}
		s := fmt.Sprintf("the checkpoint at %s is %s", f.Path, what)
		if f.Committed {
			s += fmt.Sprintf("; the newest commit is %s old", human.Took(f.Age))
		}
		return s
	case probe.CodeStale:
		return fmt.Sprintf("the checkpoint is stale: the newest commit, commits/%d, is %s old (stale after %s)",
			f.Batch, human.Took(f.Age), human.Took(f.After))
	case probe.CodeNeverCommitted:
		return fmt.Sprintf("the checkpoint is stale: no batch has been committed yet (stale after %s)", human.Took(f.After))
	case probe.CodeSlow:
		slow := make([]string, 0, len(f.Slow))
		for _, s := range f.Slow {
			slow = append(slow, fmt.Sprintf("%s took %s", s.Step, human.Took(s.Took)))
		}
		return fmt.Sprintf("the storage is slow: %s (slow after %s)", strings.Join(slow, ", "), human.Took(f.After))
	}
	return string(f.Code) + " " + f.Path
}

// OwnershipLine renders who owns a local directory and who the probe runs as, on one line:
// "dir /var/lib/spark/checkpoints/sms-replies owner spark:spark mode drwxr-xr-x; probe runs
// as uid 1000 groups [1000]".
func OwnershipLine(o probe.Ownership) string {
	s := fmt.Sprintf("dir %s owner %s:%s mode %s; probe runs as uid %d groups %v", o.Dir, o.Owner, o.Group, o.Mode, o.ProcUID, o.ProcGroups)
	if !o.CanWrite {
		s += " (the mode bits do not let it write there)"
	}
	return s
}

// accessLines lay the access judgment out: one line when the user may write; else the verdict
// and a line per directory it may not write.
func accessLines(r *access.Report) []string {
	if r == nil {
		return nil
	}
	if !r.Judged() {
		return []string{"access of " + r.Who() + ": not judged: " + AccessNotJudged(r)}
	}
	if r.Identity != "" { // an object store's judgment (gs://): "access of streamwatch's identity: …"
		mark := "✓"
		if !r.Writable {
			mark = "✗"
		}
		return []string{mark + " access of " + r.Identity + " (judged without writing): " + strings.TrimPrefix(AccessReason(r), r.Identity+" "),
			"  " + AccessNote(r)}
	}
	if r.Writable {
		return []string{"✓ access (judged without writing): " + AccessReason(r)}
	}
	lines := []string{fmt.Sprintf("✗ access (judged without writing): %s may not create files", r.User)}
	if r.Blocked != nil {
		return append(lines, "  "+AccessReason(r))
	}
	for _, d := range r.Dirs {
		if d.Writable {
			continue
		}
		l := fmt.Sprintf("  ✗ %s: %s", d.Dir.Path, DirDescribe(d.Dir))
		if why := DirWhy(d); why != "" {
			l += ": " + why
		}
		lines = append(lines, l)
	}
	return lines
}

// probeReply is the `probe` reply: each pipeline's status in one line, then every step of its
// probe (results[i] is names[i]'s).
func probeReply(names []string, results []probe.Result) Reply {
	if len(names) == 0 {
		return Reply{Text: "No pipeline has a checkpoint to probe."}
	}
	var r Reply
	for i, n := range names {
		res := results[i]
		r.Sections = append(r.Sections, Section{Title: fmt.Sprintf("%s: %s", n, res.Status), Lines: ProbeLines(res), Pre: true})
		if r.Text != "" {
			r.Text += "; "
		}
		r.Text += fmt.Sprintf("%s %s", n, res.Status)
	}
	return r
}

// probeHistoryReply is the `probe history` reply: the pipeline's stored probe records as a
// table, or that it has none.
func probeHistoryReply(pipeline string, recs []state.ProbeRecord) Reply {
	if len(recs) == 0 {
		return Reply{Text: pipeline + " has not been probed yet."}
	}
	lines := []string{fmt.Sprintf("%-20s %-9s %-18s %8s  %s", "TIME", "STATUS", "CLASS", "TOOK", "REASON")}
	for _, r := range recs {
		var res probe.Result
		_ = json.Unmarshal(r.Result, &res)
		lines = append(lines, fmt.Sprintf("%-20s %-9s %-18s %8s  %s", human.Stamp(r.At), r.Status, dash(r.Class),
			res.Took.Round(1e6), r.Reason))
	}
	return Reply{Text: fmt.Sprintf("Last %d probes of %s", len(recs), pipeline), Sections: []Section{{Lines: lines, Pre: true}}}
}
