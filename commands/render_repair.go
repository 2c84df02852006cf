package commands

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/internal/human"
	"github.com/streamwatch/streamwatch/pipeline"
)

// RefusalText words a refused remediation (pipeline.RefusalError): the sentence that says
// which rule refused it and what to do, and the evidence's lines (the writes that make the
// query look alive, the files that changed since the dry run).
func RefusalText(e *RefusalError) (string, []string) {
	again := fmt.Sprintf("run `checkpoint %s %s` again", e.Kind, e.Pipeline)
	switch e.Code {
	case pipeline.RefusedNoBackupLocation:
		return "pipelines[" + e.Pipeline + "].checkpoint.backup_location is not set: no backup, no repair", nil
	case pipeline.RefusedBusy:
		return fmt.Sprintf("another remediation of %s is running (%s); one at a time per pipeline: try again when it is done", e.Pipeline, e.Holder), nil
	case pipeline.RefusedBackupName:
		return fmt.Sprintf("%q is not a backup name such as 20261130T104105Z: see `checkpoint backups %s`", e.Backup, e.Pipeline), nil
	case pipeline.RefusedNoSuchBackup:
		return fmt.Sprintf("%s has no backup %s: see `checkpoint backups %s`", e.Pipeline, e.Backup, e.Pipeline), nil
	case pipeline.RefusedNothingQuarantined:
		return fmt.Sprintf("no backup of %s holds quarantined files: there is nothing to restore", e.Pipeline), nil
	case pipeline.RefusedUnknownPlan:
		return fmt.Sprintf("plan %s is unknown, expired (plans last %s, repair.confirm_within) or already carried out: %s", e.Plan, e.Limit, again), nil
	case pipeline.RefusedOtherPlan:
		return fmt.Sprintf("plan %s is a %s of %s, not a %s of %s", e.Plan, e.PlanKind, e.PlanPipeline, e.Kind, e.Pipeline), nil
	case pipeline.RefusedMoved:
		return fmt.Sprintf("plan %s was made for %s; the checkpoint is now %s: %s", e.Plan, e.PlanLocation, e.Location, again), nil
	case pipeline.RefusedAlive:
		details := append([]string{"Seen within " + e.Limit.String() + " (repair.quiet_for):"}, aliveLines(e.Alive)...)
		return fmt.Sprintf("%s looks alive: a checkpoint %s now could break the running query; nothing was changed", e.Pipeline, e.Kind),
			append(details, stopAdvice(e.Limit)...)
	case pipeline.RefusedNoVerifiedBackup:
		return "no verified backup of " + e.Pipeline + ": run `checkpoint backup " + e.Pipeline + "` first", nil
	case pipeline.RefusedOldBackup:
		return fmt.Sprintf("the newest verified backup of %s is %s old, older than repair.backup_max_age (%s): back up again first",
			e.Pipeline, e.Age.Round(time.Second), e.Limit), nil
	case pipeline.RefusedChanged:
		if e.Kind == KindRestore {
			return fmt.Sprintf("the quarantine or the checkpoint of %s changed since dry run %s (digest %.12s): nothing was put back; %s", e.Pipeline, e.Plan, e.Digest, again),
				planChangeLines(e.Changes)
		}
		return fmt.Sprintf("the checkpoint of %s changed since dry run %s (digest %.12s): nothing was moved; %s and look at the new plan", e.Pipeline, e.Plan, e.Digest, again),
			planChangeLines(e.Changes)
	}
	return e.Error(), nil
}

// planChangeLines are a plan's changes since its dry run, one line each.
func planChangeLines(c pipeline.PlanChanges) []string {
	var out []string
	for _, f := range c.Files {
		out = append(out, fileChangeText(f))
	}
	for _, f := range c.Added {
		out = append(out, f.Path+": not in the plan that was shown, the checkpoint now needs it moved too ("+planFileText(f)+")")
	}
	for _, p := range c.Dropped {
		out = append(out, p+": in the plan that was shown, no longer one to move")
	}
	return out
}

// fileChangeText says how a file differs from what the dry run saw.
func fileChangeText(c remediate.FileChange) string {
	switch c.Code {
	case remediate.ChangeUnseen:
		return c.Path + ": no longer looked at"
	case remediate.ChangeAppeared:
		return fmt.Sprintf("%s: did not exist, now exists (%s, modified %s)", c.Path, human.Bytes(c.Now.Size), human.StampMilli(c.Now.ModTime))
	case remediate.ChangeGone:
		return c.Path + ": gone"
	case remediate.ChangeAdded:
		return c.Path + ": not in the plan that was shown, now part of it"
	case remediate.ChangeModified:
		what := make([]string, 0, len(c.Changed))
		for _, f := range c.Changed {
			switch f {
			case remediate.FieldSize:
				what = append(what, fmt.Sprintf("size %d → %d bytes", c.Was.Size, c.Now.Size))
			case remediate.FieldModTime:
				what = append(what, fmt.Sprintf("modified %s → %s", human.StampMilli(c.Was.ModTime), human.StampMilli(c.Now.ModTime)))
			case remediate.FieldETag:
				what = append(what, fmt.Sprintf("ETag %s → %s", c.Was.ETag, c.Now.ETag))
			case remediate.FieldSHA256:
				what = append(what, fmt.Sprintf("SHA-256 %.12s… → %.12s…", c.Was.SHA256, c.Now.SHA256))
			}
		}
		return c.Path + ": " + strings.Join(what, ", ")
	}
	return c.Path + ": " + string(c.Code)
}

// aliveLines word the signs that the query runs, one line each.
func aliveLines(signs []pipeline.AliveSign) []string {
	out := make([]string, 0, len(signs))
	for _, s := range signs {
		ago := fmt.Sprintf("%s ago (%s)", s.Ago.Round(time.Second), human.Clock(s.At))
		switch s.Kind {
		case pipeline.SignProbeCommit:
			out = append(out, fmt.Sprintf("the probe of %s saw a commit written %s", human.Clock(s.Probed), ago))
		case pipeline.SignDriverLog:
			out = append(out, fmt.Sprintf("the driver log %s was written %s", s.Path, ago))
		default:
			out = append(out, fmt.Sprintf("%s was written %s", s.Path, ago))
		}
	}
	return out
}

// stopAdvice is what to do about a query that looks alive.
func stopAdvice(quiet time.Duration) []string {
	return []string{
		"Stop the query first: query.stop() in the driver, or stop the job (spark-submit --kill, yarn application -kill, kubectl delete sparkapplication).",
		fmt.Sprintf("Then wait until nothing is written for %s (repair.quiet_for) and confirm again; `--force REASON` (remediators, audited) overrides.", quiet),
	}
}

// OutcomeText words what a confirmed repair or restore did, for the reply and the thread.
func OutcomeText(o *Outcome) string {
	files := strings.Join(o.Files, ", ")
	if o.Kind == KindRestore {
		return fmt.Sprintf("Restored %d file(s) of %s from %s (plan %s), each verified against the quarantine's manifest: %s.",
			len(o.Files), o.Pipeline, o.From, o.Plan, files)
	}
	return fmt.Sprintf("Quarantined %d file(s) of %s into %s (plan %s): %s. Backup %s was verified before the move.",
		len(o.Files), o.Pipeline, o.Quarantine, o.Plan, files, o.Backup)
}

// errText is an error's text, with a refusal in it worded (RefusalText).
func errText(err error) string {
	var re *RefusalError
	if !errors.As(err, &re) {
		return err.Error()
	}
	text, _ := RefusalText(re)
	return strings.Replace(err.Error(), re.Error(), text, 1)
}
