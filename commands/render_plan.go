package commands

import (
	"fmt"

	"github.com/streamwatch/streamwatch/integrations/remediate"
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
			out = append(out, fmt.Sprintf("%s [%s]", f.Reason, human.Bytes(f.Size)))
		}
	}
	for _, n := range p.Notes {
		out = append(out, "Note: "+n)
	}
	return out
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
		out = append(out, fmt.Sprintf("%s [%s, SHA-256 %.12s… verified against the %s]", f.Path, human.Bytes(f.Source.Size), f.Source.SHA256, f.VerifiedBy))
	}
	for _, pr := range p.Problems {
		out = append(out, "Stays: "+pr)
	}
	return out
}
