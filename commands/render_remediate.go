package commands

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/internal/human"
)

// backUpAction is what `checkpoint backup` tries, for a refusal's sentence and its audit entry.
const backUpAction = "back up checkpoints"

// confirmAction is what confirming a plan of kind tries, for a refusal's sentence and its audit
// entry: "confirm checkpoint repairs".
func confirmAction(kind Kind) string {
	return "confirm checkpoint " + string(kind) + "s"
}

// backupText is the reply to `checkpoint backup`, also posted in the incident's thread.
func backupText(pipeline string, b *remediate.BackupResult) string {
	return fmt.Sprintf("Backed up %s: %d files, %d bytes to %s, verified against its manifest (SHA-256).", pipeline, b.Files, b.Bytes, b.Location)
}

// noteBy is a remediation's note in an incident's thread: who did it, and what happened.
func noteBy(actor, text string) string {
	return actor + ": " + text
}

// backupsReply lists the backups of pipeline for `checkpoint backups`, newest first, with
// their ages at now.
func backupsReply(pipeline string, list []remediate.BackupInfo, now time.Time) Reply {
	if len(list) == 0 {
		return Reply{Text: "No backups of " + pipeline + " yet: `checkpoint backup " + pipeline + "` takes one."}
	}
	lines := []string{fmt.Sprintf("%-28s %-10s %7s %10s  %-11s %s", "BACKUP", "AGE", "FILES", "SIZE", "QUARANTINE", "STATE")}
	for _, b := range list {
		lines = append(lines, fmt.Sprintf("%-28s %-10s %7d %10s  %-11s %s", b.Dir, human.Age(now.Sub(b.Created)), b.Files, bytesText(b.Bytes),
			fmt.Sprint(b.Quarantined), backupStateText(b)))
	}
	return Reply{Text: fmt.Sprintf("%d backup%s of %s, newest first", len(list), human.Plural(len(list)), pipeline),
		Sections: []Section{{Lines: lines, Pre: true}}}
}

// The usage errors of `checkpoint repair` and `checkpoint restore`.

func usageConfirmNeedsPlan(kind Kind, pipeline string) string {
	return fmt.Sprintf("--confirm needs the plan id the dry run showed (P-…): run `checkpoint %s %s` first", kind, pipeline)
}

func usageForceAfterConfirm() string { return "--force goes after --confirm PLAN" }

func usageForceNeedsReason() string {
	return "--force needs a reason, such as `--force query stopped by hand at 10:40, driver log still rotating`"
}

func usageUnknownArg(arg string) string { return fmt.Sprintf("unknown flag or argument %q", arg) }

// refusedNote tells the incident's thread that a confirmation was refused by who may confirm.
func refusedNote(kind Kind, pipeline, actor string, err error) string {
	return fmt.Sprintf("Refused a checkpoint %s of %s by %s: %v.", kind, pipeline, actor, err)
}

// failedNote tells the incident's thread that a confirmed plan was refused by a rule, or failed.
func failedNote(kind Kind, pipeline, plan, actor, outcome, why string) string {
	return fmt.Sprintf("Checkpoint %s of %s (plan %s) by %s %s: %s", kind, pipeline, plan, actor, outcome, why)
}

// planDetail is the audit entry's detail of a confirmation of plan: s, and the reason when it
// was forced.
func planDetail(plan, force, s string) string {
	s = "plan " + plan + ": " + s
	if force != "" {
		s += " [--force: " + force + "]"
	}
	return s
}

// confirmedText is the reply to a confirmed plan (OutcomeText), with who forced it, why and
// over what when it was forced.
func confirmedText(o *Outcome, actor, force string) string {
	text := OutcomeText(o)
	if force != "" && len(o.Forced) > 0 {
		text += " Forced by " + actor + " (" + force + ") over: " + strings.Join(aliveLines(o.Forced), "; ") + "."
	}
	return text
}

// doneDetail is what a confirmed plan did, for the audit: the files, and the signs of a live
// query it overrode.
func doneDetail(o *Outcome) string {
	done := strings.Join(o.Files, ", ")
	if len(o.Forced) > 0 {
		done += "; overrode: " + strings.Join(aliveLines(o.Forced), "; ")
	}
	return done
}

// restartHint follows a repair's outcome in the incident's thread; a restore has none.
func restartHint(kind Kind, pipeline string) string {
	if kind == KindRestore {
		return ""
	}
	return " Restart the query, then `watch " + pipeline + "`."
}

// proposalReply lays a dry run out: the plan's lines, what its id binds, the button that
// confirms it, and why a confirmation now would be refused.
func proposalReply(kind Kind, p *Proposal) Reply {
	var plan []string
	switch {
	case p.Repair != nil:
		plan = planLines(p.Repair)
	case p.Restore != nil:
		plan = restoreLines(p.Restore)
	}
	if p.ID == "" {
		what := "nothing in the checkpoint of " + p.Pipeline + " needs quarantining."
		if kind == KindRestore {
			what = "nothing to put back into the checkpoint of " + p.Pipeline + "."
		}
		return Reply{Text: "Dry run: " + what, Sections: []Section{{Lines: plan, Pre: true}}}
	}
	until := human.Clock(p.Expires)
	bound := []string{
		fmt.Sprintf("Plan %s, digest %.12s: the path, size, modification time (or S3 ETag) and SHA-256 of every file above.", p.ID, p.Digest),
		"Confirming re-reads them and refuses, moving nothing, when any differs; so does a plan older than " + until + ".",
	}
	reply := Reply{Sections: []Section{{Lines: plan, Pre: true}, {Title: "Bound to what you see", Lines: bound}}}
	confirm := fmt.Sprintf("checkpoint %s %s --confirm %s", kind, p.Pipeline, p.ID)
	switch kind {
	case KindRepair:
		reply.Text = fmt.Sprintf("Dry run %s: %d file(s) of %s would move to the newest verified backup's quarantine/ (nothing is deleted). Only remediators of %s may confirm, until %s.",
			p.ID, p.Files, p.Pipeline, p.Pipeline, until)
		reply.Actions = []Action{{ID: "repair_confirm", Label: fmt.Sprintf("Quarantine %d file(s)", p.Files), Command: confirm, Danger: true,
			Confirm: fmt.Sprintf("Move exactly the %d file(s) of plan %s out of the checkpoint of %s into the backup's quarantine/?", p.Files, p.ID, p.Pipeline)}}
	case KindRestore:
		reply.Text = fmt.Sprintf("Dry run %s: %d file(s) would go back from %s's quarantine into the checkpoint of %s (nothing is overwritten). Only remediators of %s may confirm, until %s.",
			p.ID, p.Files, p.Backup, p.Pipeline, p.Pipeline, until)
		reply.Actions = []Action{{ID: "restore_confirm", Label: fmt.Sprintf("Restore %d file(s)", p.Files), Command: confirm, Danger: true,
			Confirm: fmt.Sprintf("Put exactly the %d file(s) of plan %s back into the checkpoint of %s?", p.Files, p.ID, p.Pipeline)}}
	}
	if len(p.Alive) > 0 {
		reply.Sections = append(reply.Sections, Section{Title: "A confirmation now would be refused", Lines: append(aliveLines(p.Alive), stopAdvice(p.QuietFor)...)})
	}
	return reply
}

// bytesText is a size for the backups table.
func bytesText(n int64) string {
	switch {
	case n < 10<<10:
		return fmt.Sprintf("%d B", n)
	case n < 10<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	case n < 10<<30:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d GiB", n>>30)
}
