package commands

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/remediate"
)

// TestPlanLines: a repair plan and a restore plan as the sentences a dry run shows.
func TestPlanLines(t *testing.T) {
	p := &remediate.Plan{Location: "/cp/sms-replies", Files: []remediate.PlanFile{
		{Path: "offsets/8", Size: 0, Reason: "offsets/8 is empty: Spark cannot parse it on restart"},
		{Path: "offsets/.8.crc", Size: 12, Reason: "offsets/.8.crc belongs to offsets/8"}},
		Notes: []string{"Spark plans batch 8 again on restart"}}
	want := []string{
		"Move 2 files (12 bytes) out of /cp/sms-replies into the backup's quarantine/:",
		"offsets/8 is empty: Spark cannot parse it on restart [0 bytes]",
		"offsets/.8.crc belongs to offsets/8 [12 bytes]",
		"Note: Spark plans batch 8 again on restart",
	}
	if got := planLines(p); !slices.Equal(got, want) {
		t.Errorf("plan lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := planLines(&remediate.Plan{Location: "/cp", Empty: true}); got[0] != "Nothing to move aside in /cp." {
		t.Errorf("empty plan: %q", got)
	}
	rp := &remediate.RestorePlan{Location: "/cp", Backup: "sms-replies/20261130T104105Z", Problems: []string{"offsets/9: something stands there"}}
	rp.Files = append(rp.Files, remediate.RestoreFile{Path: "offsets/8", VerifiedBy: "quarantine record",
		Source: remediate.FileState{Path: "sms-replies/20261130T104105Z/quarantine/offsets/8", Size: 1, SHA256: "e3b0c44298fc1c149afbf4c8996fb924"}})
	want = []string{
		"Put back 1 file from sms-replies/20261130T104105Z/quarantine/ into /cp:",
		"offsets/8 [1 byte, SHA-256 e3b0c44298fc… verified against the quarantine record]",
		"Stays: offsets/9: something stands there",
	}
	if got := restoreLines(rp); !slices.Equal(got, want) {
		t.Errorf("restore lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := restoreLines(&remediate.RestorePlan{Backup: "b"}); got[0] != "Nothing to put back from b's quarantine." {
		t.Errorf("empty restore: %q", got)
	}
}
