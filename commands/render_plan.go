package commands

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/internal/human"
)

// planLines lay a repair plan out as sentences, for a message asking a person to confirm it.
func planLines(p *remediate.Plan) []string {
	var out []string
	if p.Empty {
		out = append(out, fmt.Sprintf("Nothing to move aside in %s.", p.Location))
	} else {
		var total int64
		for _, f := range p.Files {
			total += f.Size
		}
		out = append(out, fmt.Sprintf("Move %d %s (%s) out of %s into the backup's %s/:",
			len(p.Files), human.Noun(len(p.Files), "file"), human.Bytes(total), p.Location, remediate.QuarantineDir))
		for _, f := range p.Files {
			out = append(out, fmt.Sprintf("%s [%s]", planFileText(f), human.Bytes(f.Size)))
		}
	}
	for _, r := range p.Remarks {
		out = append(out, "Note: "+remarkText(r))
	}
	for _, n := range p.Notes { // a plan stored by an earlier version
		out = append(out, "Note: "+n)
	}
	return out
}

// planFileText says why a planned file is moved.
func planFileText(f remediate.PlanFile) string {
	switch f.Cause {
	case "":
		return f.Reason // a plan stored by an earlier version
	case remediate.CauseCorruptCommit:
		return fmt.Sprintf("%s: Spark cannot parse it on restart; without it Spark re-runs batch %d into the sink", damageText(f.Damage), f.Batch)
	case remediate.CauseCorruptOffsets:
		return fmt.Sprintf("%s: Spark cannot parse it on restart; without it Spark plans batch %d again", damageText(f.Damage), f.Batch)
	case remediate.CauseTempChecksum:
		return fmt.Sprintf("%s is the checksum of the temp file %s, which is moved aside", f.Path, f.Target)
	case remediate.CauseChecksum:
		return fmt.Sprintf("%s is the checksum of %s, which is moved aside: left behind it would block Spark from writing %s again",
			f.Path, f.Target, f.Target)
	case remediate.CauseGoneTempChecksum:
		return fmt.Sprintf("%s is the checksum of a temp file that is gone, %s old", f.Path, planAge(f.Age))
	case remediate.CauseOrphanChecksum:
		return fmt.Sprintf("%s is a checksum without %s: it would block Spark from writing batch %d ('Multiple streaming queries are concurrently using')",
			f.Path, f.Target, f.Batch)
	case remediate.CauseTempFile:
		return fmt.Sprintf("%s is the temp file of an interrupted write, %s old", f.Path, planAge(f.Age))
	}
	return f.Path + " (" + string(f.Cause) + ")"
}

// remarkText words what a plan leaves alone and why, or what Spark will do after it.
func remarkText(r remediate.Remark) string {
	switch r.Code {
	case remediate.RemarkOddName:
		return fmt.Sprintf("%s is not a name Spark writes but Spark reads it as batch %d; left alone", r.Path, r.Batch)
	case remediate.RemarkCommittedCorrupt:
		return fmt.Sprintf("%s: batch %d is committed, so it is not moved; Spark reads it on restart and will fail: restore it from a backup", damageText(r.Damage), r.Batch)
	case remediate.RemarkRerun:
		return fmt.Sprintf("%s is valid and batch %d has no valid commit: kept, Spark runs batch %d again on restart", r.Path, r.Batch, r.Batch)
	case remediate.RemarkTooManyCorrupt:
		return fmt.Sprintf("the newest %d files of %s/ are corrupt (%s ... %s): more than an interrupted write leaves, so no offsets or commits file is planned; restore the checkpoint from a backup or repair it by hand",
			r.Count, r.Dir, r.From, r.To)
	case remediate.RemarkRepeated:
		return fmt.Sprintf("moving commits aside makes Spark run %s again: the sink must tolerate a repeated batch", batchList(r.Batches))
	case remediate.RemarkNoMetadata:
		return "the checkpoint has no metadata file: Spark writes a new one with a new query id on restart; nothing to move"
	case remediate.RemarkMetadataCorrupt:
		return fmt.Sprintf("%s: metadata is never moved by a repair; restore it from a backup (Spark fails with 'Error reading stream metadata')", damageText(r.Damage))
	case remediate.RemarkEmptyCommitted:
		return fmt.Sprintf("%s is empty but batch %d is committed history: not moved; restore it from a backup if Spark needs it", r.Path, r.Batch)
	case remediate.RemarkNoOffsetsLeft:
		return "no offsets file remains: Spark starts the query from its startingOffsets option, as a new query would"
	case remediate.RemarkRestartUncommitted:
		return fmt.Sprintf("after the move Spark restarts at batch %d, planned but not committed (it is run again)", r.Batch)
	case remediate.RemarkRestartAfterCommit:
		return fmt.Sprintf("after the move Spark restarts after batch %d, the latest commit, and plans batch %d", r.Batch, r.Batch+1)
	case remediate.RemarkRestartBroken:
		return fmt.Sprintf("after the move the newest offsets file is %s but commits/%d exists: Spark will not restart cleanly; repair by hand", r.Path, r.Batch)
	case remediate.RemarkPreviousMissing:
		return fmt.Sprintf("%s is missing: Spark needs it to restart at batch %d ('batch %d doesn't exist'); restore it from a backup", r.Path, r.Batch, r.Batch-1)
	case remediate.RemarkPreviousCorrupt:
		return fmt.Sprintf("%s: Spark reads it to restart at batch %d; it is not moved, restore it from a backup", damageText(r.Damage), r.Batch)
	case remediate.RemarkYoung:
		return fmt.Sprintf("%d temp or checksum %s younger than %s left alone (%s): a write may be in progress; is the query running?",
			r.Count, human.Noun(r.Count, "file"), r.Age, r.Path)
	}
	return string(r.Code)
}

// damageText says what makes a file unreadable: "offsets/7 is empty", "offsets/7 is truncated
// (line 3: ...)".
func damageText(d *remediate.Damage) string {
	switch {
	case d == nil:
		return "a file is damaged"
	case d.Err != "":
		return fmt.Sprintf("%s cannot be parsed (%s)", d.Path, d.Err)
	case d.Ref != "":
		return fmt.Sprintf("%s has %d source %s where %s has %d: it was cut short",
			d.Path, d.Sources, human.Noun(d.Sources, "line"), d.Ref, d.RefSources)
	}
	what := map[spark.Problem]string{
		spark.ProblemEmpty:              "is empty",
		spark.ProblemTruncated:          "is truncated",
		spark.ProblemMalformedVersion:   "has a malformed version line",
		spark.ProblemUnsupportedVersion: "has an unsupported version",
		spark.ProblemBadJSON:            "holds unparseable JSON",
		spark.ProblemInvalid:            "is not what Spark writes",
	}[d.Problem]
	if what == "" {
		what = "is corrupt (" + string(d.Problem) + ")"
	}
	if d.Problem == spark.ProblemEmpty {
		return d.Path + " " + what
	}
	if d.Detail == "" {
		return fmt.Sprintf("%s %s (line %d)", d.Path, what, d.Line)
	}
	return fmt.Sprintf("%s %s (line %d: %s)", d.Path, what, d.Line, d.Detail)
}

// planAge is a file's age as people say it: "7 minutes", "3 hours", "12 days".
func planAge(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
}

// batchList is "batch 8" or "batches 8, 9".
func batchList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	if len(ids) == 1 {
		return "batch " + s[0]
	}
	return "batches " + strings.Join(s, ", ")
}

// restoreLines lay a restore plan out as sentences.
func restoreLines(p *remediate.RestorePlan) []string {
	var out []string
	if len(p.Files) == 0 {
		out = append(out, "Nothing to put back from "+p.Backup+"'s quarantine.")
	} else {
		out = append(out, fmt.Sprintf("Put back %d %s from %s/%s/ into %s:", len(p.Files), human.Noun(len(p.Files), "file"), p.Backup, remediate.QuarantineDir, p.Location))
	}
	for _, f := range p.Files {
		out = append(out, fmt.Sprintf("%s [%s, SHA-256 %.12s… verified against the %s]", f.Path, human.Bytes(f.Source.Size), f.Source.SHA256, verifierText(f.VerifiedBy)))
	}
	for _, s := range p.Stays {
		out = append(out, "Stays: "+stayText(s))
	}
	for _, pr := range p.Problems { // a plan stored by an earlier version
		out = append(out, "Stays: "+pr)
	}
	return out
}

// verifierText names what a quarantined copy was verified against.
func verifierText(v remediate.Verifier) string {
	switch v {
	case remediate.VerifiedByRecord:
		return "quarantine record"
	case remediate.VerifiedByManifest:
		return "backup's manifest"
	}
	return string(v) // a plan stored by an earlier version holds the words
}

// stayText says why a quarantined file stays where it is.
func stayText(s remediate.Stay) string {
	switch s.Code {
	case remediate.StayBadPath:
		return remediate.QuarantineDir + "/" + s.Path + ": " + s.Err
	case remediate.StayUnlisted:
		return s.Path + ": neither the quarantine record nor the backup's manifest lists it, so its copy cannot be verified"
	case remediate.StayMismatch:
		return fmt.Sprintf("%s: the quarantined copy does not match the %s (%d bytes, SHA-256 %.12s…; recorded %d bytes, %.12s…)",
			s.Path, verifierText(s.By), s.Found.Size, s.Found.SHA256, s.WantSize, s.WantSHA256)
	case remediate.StayOccupied:
		return fmt.Sprintf("%s exists in the checkpoint again (%s, modified %s): a restore never overwrites it",
			s.Path, human.Bytes(s.Found.Size), human.StampMilli(s.Found.ModTime))
	}
	return s.Path + ": " + string(s.Code)
}

// backupStateText says whether a backup is verified, or why not, for `checkpoint backups`.
func backupStateText(b remediate.BackupInfo) string {
	switch b.State {
	case remediate.BackupNoManifest:
		return "no manifest.json: the backup failed or is still copying"
	case remediate.BackupManifestUnreadable:
		return "manifest.json cannot be read: " + b.Problem
	case remediate.BackupMarkerUnreadable:
		return "verified.json cannot be read: " + b.Problem
	case remediate.BackupUnverified:
		return "not verified: no verified.json that vouches for its manifest (the copy failed verification, is running, or the manifest changed)"
	}
	return string(b.State) // "verified"
}
