package commands

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
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

// TestPlanFileText: why each kind of planned file is moved, in full, and a plan an earlier
// version stored keeps its words.
func TestPlanFileText(t *testing.T) {
	empty := &remediate.Damage{Path: "offsets/8", Problem: spark.ProblemEmpty, Line: 1}
	for _, c := range []struct {
		f    remediate.PlanFile
		want string
	}{
		{remediate.PlanFile{Path: "commits/8", Cause: remediate.CauseCorruptCommit, Batch: 8, Damage: &remediate.Damage{Path: "commits/8", Problem: spark.ProblemEmpty}},
			"commits/8 is empty: Spark cannot parse it on restart; without it Spark re-runs batch 8 into the sink"},
		{remediate.PlanFile{Path: "offsets/8", Cause: remediate.CauseCorruptOffsets, Batch: 8, Damage: empty},
			"offsets/8 is empty: Spark cannot parse it on restart; without it Spark plans batch 8 again"},
		{remediate.PlanFile{Path: "offsets/..9.3f2a.tmp.crc", Cause: remediate.CauseTempChecksum, Target: "offsets/.9.3f2a.tmp"},
			"offsets/..9.3f2a.tmp.crc is the checksum of the temp file offsets/.9.3f2a.tmp, which is moved aside"},
		{remediate.PlanFile{Path: "offsets/.8.crc", Cause: remediate.CauseChecksum, Target: "offsets/8"},
			"offsets/.8.crc is the checksum of offsets/8, which is moved aside: left behind it would block Spark from writing offsets/8 again"},
		{remediate.PlanFile{Path: "commits/..7.gone.tmp.crc", Cause: remediate.CauseGoneTempChecksum, Age: 50 * time.Hour},
			"commits/..7.gone.tmp.crc is the checksum of a temp file that is gone, 2 days old"},
		{remediate.PlanFile{Path: "commits/.8.crc", Cause: remediate.CauseOrphanChecksum, Target: "commits/8", Batch: 8},
			"commits/.8.crc is a checksum without commits/8: it would block Spark from writing batch 8 ('Multiple streaming queries are concurrently using')"},
		{remediate.PlanFile{Path: "commits/.8.77aa.TID12.tmp", Cause: remediate.CauseTempFile, Age: 3*time.Hour + 59*time.Minute},
			"commits/.8.77aa.TID12.tmp is the temp file of an interrupted write, 3 hours old"},
		{remediate.PlanFile{Path: ".metadata.5e6f.tmp", Cause: remediate.CauseTempFile, Age: 7*time.Minute + 30*time.Second},
			".metadata.5e6f.tmp is the temp file of an interrupted write, 7 minutes old"},
		{remediate.PlanFile{Path: "offsets/8", Reason: "offsets/8 is empty: Spark cannot parse it on restart"},
			"offsets/8 is empty: Spark cannot parse it on restart"},
	} {
		if got := planFileText(c.f); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.f.Cause, got, c.want)
		}
	}
}

// TestDamageText: what makes a file unreadable for Spark, for each parse problem.
func TestDamageText(t *testing.T) {
	for _, c := range []struct {
		d    remediate.Damage
		want string
	}{
		{remediate.Damage{Path: "offsets/8", Problem: spark.ProblemEmpty, Line: 1, Detail: "Spark: Incomplete log file"}, "offsets/8 is empty"},
		{remediate.Damage{Path: "offsets/8", Problem: spark.ProblemTruncated, Line: 3, Detail: "unexpected end of JSON input"},
			"offsets/8 is truncated (line 3: unexpected end of JSON input)"},
		{remediate.Damage{Path: "offsets/8", Problem: spark.ProblemMalformedVersion, Line: 1}, "offsets/8 has a malformed version line (line 1)"},
		{remediate.Damage{Path: "commits/8", Problem: spark.ProblemUnsupportedVersion, Line: 1}, "commits/8 has an unsupported version (line 1)"},
		{remediate.Damage{Path: "metadata", Problem: spark.ProblemBadJSON, Line: 1}, "metadata holds unparseable JSON (line 1)"},
		{remediate.Damage{Path: "commits/8", Problem: spark.ProblemInvalid, Line: 2}, "commits/8 is not what Spark writes (line 2)"},
		{remediate.Damage{Path: "commits/8", Problem: "odd", Line: 2}, "commits/8 is corrupt (odd) (line 2)"},
		{remediate.Damage{Path: "offsets/8", Sources: 1, Ref: "offsets/7", RefSources: 2}, "offsets/8 has 1 source line where offsets/7 has 2: it was cut short"},
		{remediate.Damage{Path: "offsets/8", Err: "read: boom"}, "offsets/8 cannot be parsed (read: boom)"},
	} {
		if got := damageText(&c.d); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.d, got, c.want)
		}
	}
}

// TestRemarkText: every remark of a plan, in full.
func TestRemarkText(t *testing.T) {
	trunc := &remediate.Damage{Path: "offsets/7", Problem: spark.ProblemTruncated, Line: 3}
	for _, c := range []struct {
		r    remediate.Remark
		want string
	}{
		{remediate.Remark{Code: remediate.RemarkOddName, Path: "offsets/08", Batch: 8},
			"offsets/08 is not a name Spark writes but Spark reads it as batch 8; left alone"},
		{remediate.Remark{Code: remediate.RemarkCommittedCorrupt, Batch: 8, Damage: &remediate.Damage{Path: "offsets/8", Problem: spark.ProblemEmpty}},
			"offsets/8 is empty: batch 8 is committed, so it is not moved; Spark reads it on restart and will fail: restore it from a backup"},
		{remediate.Remark{Code: remediate.RemarkRerun, Path: "offsets/8", Batch: 8},
			"offsets/8 is valid and batch 8 has no valid commit: kept, Spark runs batch 8 again on restart"},
		{remediate.Remark{Code: remediate.RemarkTooManyCorrupt, Count: 4, Dir: "commits", From: "commits/4", To: "commits/7"},
			"the newest 4 files of commits/ are corrupt (commits/4 ... commits/7): more than an interrupted write leaves, so no offsets or commits file is planned; restore the checkpoint from a backup or repair it by hand"},
		{remediate.Remark{Code: remediate.RemarkRepeated, Batches: []int64{8}},
			"moving commits aside makes Spark run batch 8 again: the sink must tolerate a repeated batch"},
		{remediate.Remark{Code: remediate.RemarkRepeated, Batches: []int64{7, 8}},
			"moving commits aside makes Spark run batches 7, 8 again: the sink must tolerate a repeated batch"},
		{remediate.Remark{Code: remediate.RemarkNoMetadata},
			"the checkpoint has no metadata file: Spark writes a new one with a new query id on restart; nothing to move"},
		{remediate.Remark{Code: remediate.RemarkMetadataCorrupt, Damage: &remediate.Damage{Path: "metadata", Problem: spark.ProblemBadJSON, Line: 1}},
			"metadata holds unparseable JSON (line 1): metadata is never moved by a repair; restore it from a backup (Spark fails with 'Error reading stream metadata')"},
		{remediate.Remark{Code: remediate.RemarkEmptyCommitted, Path: "offsets/4", Batch: 4},
			"offsets/4 is empty but batch 4 is committed history: not moved; restore it from a backup if Spark needs it"},
		{remediate.Remark{Code: remediate.RemarkNoOffsetsLeft},
			"no offsets file remains: Spark starts the query from its startingOffsets option, as a new query would"},
		{remediate.Remark{Code: remediate.RemarkRestartUncommitted, Batch: 8},
			"after the move Spark restarts at batch 8, planned but not committed (it is run again)"},
		{remediate.Remark{Code: remediate.RemarkRestartAfterCommit, Batch: 7},
			"after the move Spark restarts after batch 7, the latest commit, and plans batch 8"},
		{remediate.Remark{Code: remediate.RemarkRestartBroken, Path: "offsets/6", Batch: 7},
			"after the move the newest offsets file is offsets/6 but commits/7 exists: Spark will not restart cleanly; repair by hand"},
		{remediate.Remark{Code: remediate.RemarkPreviousMissing, Path: "offsets/7", Batch: 8},
			"offsets/7 is missing: Spark needs it to restart at batch 8 ('batch 7 doesn't exist'); restore it from a backup"},
		{remediate.Remark{Code: remediate.RemarkPreviousCorrupt, Batch: 8, Damage: trunc},
			"offsets/7 is truncated (line 3): Spark reads it to restart at batch 8; it is not moved, restore it from a backup"},
		{remediate.Remark{Code: remediate.RemarkYoung, Count: 1, Age: remediate.TempFileMinAge, Path: "offsets/.9.1f2e.tmp"},
			"1 temp or checksum file younger than 5m0s left alone (offsets/.9.1f2e.tmp): a write may be in progress; is the query running?"},
		{remediate.Remark{Code: remediate.RemarkYoung, Count: 2, Age: remediate.TempFileMinAge, Path: "offsets/.9.1f2e.tmp"},
			"2 temp or checksum files younger than 5m0s left alone (offsets/.9.1f2e.tmp): a write may be in progress; is the query running?"},
	} {
		if got := remarkText(c.r); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.r.Code, got, c.want)
		}
	}
}

// TestStayText: why a quarantined file stays, and what its copy was verified against.
func TestStayText(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 40, 5, 0, time.UTC)
	for _, c := range []struct {
		s    remediate.Stay
		want string
	}{
		{remediate.Stay{Code: remediate.StayBadPath, Path: "state/0/1/8.delta", Err: "state/0/1/8.delta is outside the root, offsets/ and commits/; a repair never moves it"},
			"quarantine/state/0/1/8.delta: state/0/1/8.delta is outside the root, offsets/ and commits/; a repair never moves it"},
		{remediate.Stay{Code: remediate.StayUnlisted, Path: "offsets/9"},
			"offsets/9: neither the quarantine record nor the backup's manifest lists it, so its copy cannot be verified"},
		{remediate.Stay{Code: remediate.StayMismatch, Path: ".metadata.5e6f.tmp", By: remediate.VerifiedByRecord,
			Found: remediate.FileState{Size: 18, SHA256: "9f86d081884c7d659a2feaa0c55ad015"}, WantSize: 1, WantSHA256: "021fb596db81e6d02bf3d2586ee3981f"},
			".metadata.5e6f.tmp: the quarantined copy does not match the quarantine record (18 bytes, SHA-256 9f86d081884c…; recorded 1 bytes, 021fb596db81…)"},
		{remediate.Stay{Code: remediate.StayMismatch, Path: "offsets/8", By: remediate.VerifiedByManifest,
			Found: remediate.FileState{Size: 2, SHA256: "9f86d081884c7d659a2feaa0c55ad015"}, WantSize: 0, WantSHA256: "e3b0c44298fc1c149afbf4c8996fb924"},
			"offsets/8: the quarantined copy does not match the backup's manifest (2 bytes, SHA-256 9f86d081884c…; recorded 0 bytes, e3b0c44298fc…)"},
		{remediate.Stay{Code: remediate.StayOccupied, Path: "offsets/8", Found: remediate.FileState{Size: 6, ModTime: at}},
			"offsets/8 exists in the checkpoint again (6 bytes, modified 2026-11-30 10:40:05.000Z): a restore never overwrites it"},
	} {
		if got := stayText(c.s); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.s.Code, got, c.want)
		}
	}
	for v, want := range map[remediate.Verifier]string{
		remediate.VerifiedByRecord: "quarantine record", remediate.VerifiedByManifest: "backup's manifest",
		"backup's manifest": "backup's manifest", // a plan stored by an earlier version
	} {
		if got := verifierText(v); got != want {
			t.Errorf("verifier %q: %q, want %q", v, got, want)
		}
	}
}

// TestBackupStateText: a backup's state in `checkpoint backups`.
func TestBackupStateText(t *testing.T) {
	for _, c := range []struct {
		b    remediate.BackupInfo
		want string
	}{
		{remediate.BackupInfo{State: remediate.BackupVerified, Verified: true}, "verified"},
		{remediate.BackupInfo{State: remediate.BackupNoManifest}, "no manifest.json: the backup failed or is still copying"},
		{remediate.BackupInfo{State: remediate.BackupManifestUnreadable, Problem: "unexpected end of JSON input"},
			"manifest.json cannot be read: unexpected end of JSON input"},
		{remediate.BackupInfo{State: remediate.BackupMarkerUnreadable, Problem: "permission denied"}, "verified.json cannot be read: permission denied"},
		{remediate.BackupInfo{State: remediate.BackupUnverified},
			"not verified: no verified.json that vouches for its manifest (the copy failed verification, is running, or the manifest changed)"},
	} {
		if got := backupStateText(c.b); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.b.State, got, c.want)
		}
	}
}

// TestFileChangeText: how a file differs from what a dry run saw, one line a file (the lines
// remediate's TestDigestAndDiff asserted before commands worded them).
func TestFileChangeText(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	at := now.Add(-time.Minute)
	a := []remediate.FileState{{Path: "offsets/8", Size: 0, ModTime: at, SHA256: "e3b0c44298fc"}, {Path: "offsets/.8.crc", Size: 12, ModTime: at, SHA256: "aa"},
		{Path: "offsets/.8.crc.x", Absent: true}, {Path: "commits/8", Size: 3, ModTime: at}, {Path: "s3obj", Size: 3, ModTime: at, ETag: `"a1"`}}
	c := []remediate.FileState{{Path: "offsets/8", Size: 312, ModTime: now, SHA256: "9f86d081884c"}, {Path: "offsets/9", Size: 5, ModTime: now},
		{Path: "offsets/.8.crc.x", Size: 2048, ModTime: now}, {Path: "commits/8", Absent: true}, {Path: "s3obj", Size: 3, ModTime: at, ETag: `"b2"`}}
	var got []string
	for _, ch := range remediate.Diff(a, c) {
		got = append(got, fileChangeText(ch))
	}
	want := []string{
		"offsets/8: size 0 → 312 bytes, modified 2026-11-30 10:40:05.000Z → 2026-11-30 10:41:05.000Z, SHA-256 e3b0c44298fc… → 9f86d081884c…",
		"offsets/.8.crc: no longer looked at",
		"offsets/.8.crc.x: did not exist, now exists (2048 bytes, modified 2026-11-30 10:41:05.000Z)",
		"commits/8: gone",
		`s3obj: ETag "a1" → "b2"`,
		"offsets/9: not in the plan that was shown, now part of it",
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPlanLinesOfACheckpoint: the plan of a checkpoint Spark left with an empty newest offsets
// file, an old temp file and a young one reads as the dry run shows it.
func TestPlanLinesOfACheckpoint(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 41, 5, 0, time.UTC)
	dir := t.TempDir()
	s := sparktest.Spec{LatestBatch: 8, LatestCommit: 7, Checksums: true,
		Topics:   []sparktest.Topic{{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 10}},
		Files:    map[string]string{"offsets/8": "", "offsets/.9.3f2a.tmp": "v1\n{", "commits/.8.77aa.tmp": ""},
		ModTimes: map[string]time.Time{"offsets/.9.3f2a.tmp": now.Add(-3 * time.Hour), "commits/.8.77aa.tmp": now.Add(-time.Minute)}}
	if err := sparktest.WriteCheckpoint(dir, s); err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := remediate.PlanRepair(t.Context(), store, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Move 3 files (12 bytes) out of " + store.Location() + " into the backup's quarantine/:",
		"offsets/.8.crc is the checksum of offsets/8, which is moved aside: left behind it would block Spark from writing offsets/8 again [8 bytes]",
		"offsets/.9.3f2a.tmp is the temp file of an interrupted write, 3 hours old [4 bytes]",
		"offsets/8 is empty: Spark cannot parse it on restart; without it Spark plans batch 8 again [0 bytes]",
		"Note: after the move Spark restarts after batch 7, the latest commit, and plans batch 8",
		"Note: 1 temp or checksum file younger than 5m0s left alone (commits/.8.77aa.tmp): a write may be in progress; is the query running?",
	}
	if got := planLines(p); !slices.Equal(got, want) {
		t.Errorf("plan lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPlanLinesOfAnEarlierVersion: plans as the version before codes stored them (JSON with the
// words in Reason, Notes, VerifiedBy and Problems) decode and read as they did.
func TestPlanLinesOfAnEarlierVersion(t *testing.T) {
	const repair = `{"Location":"/cp","At":"2026-11-30T10:41:05Z","Files":[{"Path":"offsets/8","Size":0,` +
		`"SHA256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","Kind":"corrupt offsets",` +
		`"Reason":"offsets/8 is empty: Spark cannot parse it on restart; without it Spark plans batch 8 again"}],"Empty":false,` +
		`"Notes":["after the move Spark restarts after batch 7, the latest commit, and plans batch 8"],"LatestValidCommit":7}`
	var p remediate.Plan
	if err := json.Unmarshal([]byte(repair), &p); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Move 1 file (0 bytes) out of /cp into the backup's quarantine/:",
		"offsets/8 is empty: Spark cannot parse it on restart; without it Spark plans batch 8 again [0 bytes]",
		"Note: after the move Spark restarts after batch 7, the latest commit, and plans batch 8",
	}
	if got := planLines(&p); !slices.Equal(got, want) {
		t.Errorf("plan lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	const restore = `{"Location":"/cp","Backup":"sms-replies/20261130T104105Z","Files":[{"Path":"offsets/8",` +
		`"Source":{"path":"sms-replies/20261130T104105Z/quarantine/offsets/8","size":0,"sha256":"e3b0c44298fc1c149afbf4c8996fb924"},` +
		`"Target":{"path":"offsets/8","absent":true,"size":0},"VerifiedBy":"quarantine record"}],` +
		`"Problems":["offsets/9 exists in the checkpoint again (6 bytes, modified 2026-11-30 10:40:05.000Z): a restore never overwrites it"]}`
	var rp remediate.RestorePlan
	if err := json.Unmarshal([]byte(restore), &rp); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"Put back 1 file from sms-replies/20261130T104105Z/quarantine/ into /cp:",
		"offsets/8 [0 bytes, SHA-256 e3b0c44298fc… verified against the quarantine record]",
		"Stays: offsets/9 exists in the checkpoint again (6 bytes, modified 2026-11-30 10:40:05.000Z): a restore never overwrites it",
	}
	if got := restoreLines(&rp); !slices.Equal(got, want) {
		t.Errorf("restore lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
