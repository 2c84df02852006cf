package remediate_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/remediate"
	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
)

func TestPlanHealthyCheckpointIsEmpty(t *testing.T) {
	t.Parallel()
	for name, mod := range map[string]func(*sparktest.Spec){
		"batch in flight":   func(*sparktest.Spec) {},
		"all committed":     func(s *sparktest.Spec) { s.LatestCommit = 8 },
		"nothing committed": func(s *sparktest.Spec) { s.LatestCommit = -1; s.State = nil },
		"retention window":  func(s *sparktest.Spec) { s.FirstBatch = 400; s.LatestBatch = 505; s.LatestCommit = 504 },
		"no checksums":      func(s *sparktest.Spec) { s.Checksums = false },
		"young temp file": func(s *sparktest.Spec) {
			s.Files["offsets/.9.1f2e.tmp"] = "v1\n"
			s.ModTimes = map[string]time.Time{"offsets/.9.1f2e.tmp": now.Add(-time.Minute)}
		},
		"commit v2 + rocksdb": func(s *sparktest.Spec) { s.CommitVersion = 2; s.State.Provider = sparktest.RocksDB },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := spec()
			mod(&s)
			p := plan(t, open(t, writeCheckpoint(t, s)))
			if !p.Empty || len(p.Files) != 0 {
				t.Fatalf("plan of a healthy checkpoint: %+v", p)
			}
			if name == "young temp file" && !hasRemark(p, remediate.Remark{Code: remediate.RemarkYoung, Count: 1, Path: "offsets/.9.1f2e.tmp", Age: remediate.TempFileMinAge}) {
				t.Errorf("the young temp file is not noted: %+v", p.Remarks)
			}
		})
	}
}

// The seed incident: the newest offsets file is empty (a crash mid-write on a store without
// atomic rename). Exactly that file, and its checksum, are planned.
func TestPlanEmptyNewestOffsets(t *testing.T) {
	t.Parallel()
	for _, checksums := range []bool{true, false} {
		s := spec()
		s.Checksums = checksums
		s.Files["offsets/8"] = ""
		p := plan(t, open(t, writeCheckpoint(t, s)))
		want := []string{"offsets/.8.crc", "offsets/8"}
		if !checksums {
			want = want[1:]
		}
		if got := planPaths(p); !slices.Equal(got, want) {
			t.Fatalf("checksums %v: plan %q, want %q\n%+v", checksums, got, want, p)
		}
		f := p.Files[len(p.Files)-1]
		if f.Size != 0 || f.Kind != remediate.KindCorruptOffsets || !emptyOffsets8(f) {
			t.Errorf("planned file %+v, damage %+v", f, f.Damage)
		}
		if p.LatestValidCommit != 7 || !hasRemark(p, remediate.Remark{Code: remediate.RemarkRestartAfterCommit, Batch: 7}) {
			t.Errorf("latest valid commit %d, remarks %+v", p.LatestValidCommit, p.Remarks)
		}
	}
}

func TestPlanCorruptTrailingFiles(t *testing.T) {
	t.Parallel()
	const meta = `{"batchWatermarkMs":0,"batchTimestampMs":1}`
	for _, tc := range []struct {
		name  string
		spec  func(*sparktest.Spec)
		want  []string
		kinds []remediate.Kind
		note  remediate.Remark
	}{
		{
			name: "truncated offsets JSON",
			spec: func(s *sparktest.Spec) { s.Files["offsets/8"] = "v1\n" + meta + "\n{\"client.replies.sms\":{\"0\":9" },
			want: []string{"offsets/.8.crc", "offsets/8"},
		},
		{
			name: "bad version line",
			spec: func(s *sparktest.Spec) { s.Files["offsets/8"] = "\x00\x00\x00\x00" },
			want: []string{"offsets/.8.crc", "offsets/8"},
		},
		{
			name: "offsets cut at a line: fewer sources than the committed batch",
			spec: func(s *sparktest.Spec) {
				s.Checksums = false
				s.Files["offsets/7"] = "v1\n" + meta + "\n{\"a\":{\"0\":7}}\n{\"b\":{\"0\":7}}"
				s.Files["offsets/8"] = "v1\n" + meta + "\n{\"a\":{\"0\":8}}"
			},
			want: []string{"offsets/8"},
			note: remediate.Remark{Code: remediate.RemarkRestartAfterCommit, Batch: 7},
		},
		{
			name: "two uncommitted offsets files, both empty",
			spec: func(s *sparktest.Spec) {
				s.LatestBatch = 9
				s.Files["offsets/8"] = ""
				s.Files["offsets/9"] = ""
			},
			want: []string{"offsets/.8.crc", "offsets/.9.crc", "offsets/8", "offsets/9"},
		},
		{
			name: "corrupt newest offsets above a valid uncommitted one",
			spec: func(s *sparktest.Spec) { s.LatestBatch = 9; s.Files["offsets/9"] = "v1\n" },
			want: []string{"offsets/.9.crc", "offsets/9"},
			note: remediate.Remark{Code: remediate.RemarkRestartUncommitted, Batch: 8},
		},
		{
			name:  "empty newest commit: the valid offsets file stays and batch 8 is re-run",
			spec:  func(s *sparktest.Spec) { s.LatestCommit = 8; s.Files["commits/8"] = "" },
			want:  []string{"commits/.8.crc", "commits/8"},
			kinds: []remediate.Kind{remediate.KindChecksum, remediate.KindCorruptCommit},
			note:  remediate.Remark{Code: remediate.RemarkRepeated, Batches: []int64{8}},
		},
		{
			name: "corrupt commit and a corrupt offsets file above it",
			spec: func(s *sparktest.Spec) {
				s.LatestBatch, s.LatestCommit = 9, 8
				s.Files["commits/8"] = "v1\n{\"nextBatchWatermarkMs\":"
				s.Files["offsets/9"] = ""
			},
			want: []string{"commits/.8.crc", "commits/8", "offsets/.9.crc", "offsets/9"},
			note: remediate.Remark{Code: remediate.RemarkRestartUncommitted, Batch: 8},
		},
		{
			name: "leftover temp files and the checksum of one",
			spec: func(s *sparktest.Spec) {
				s.Files["offsets/.9.3f2a9c1e-5b7d-4e0f-8a6b-2c4d6e8f0a1b.tmp"] = "v1\n{"
				s.Files["offsets/..9.3f2a9c1e-5b7d-4e0f-8a6b-2c4d6e8f0a1b.tmp.crc"] = "crc"
				s.Files["commits/.8.77aa.TID12.tmp"] = ""
				s.Files[".metadata.5e6f.tmp"] = "{"
				s.Files["commits/..7.gone.tmp.crc"] = "crc"
			},
			want: []string{".metadata.5e6f.tmp", "commits/..7.gone.tmp.crc", "commits/.8.77aa.TID12.tmp",
				"offsets/..9.3f2a9c1e-5b7d-4e0f-8a6b-2c4d6e8f0a1b.tmp.crc", "offsets/.9.3f2a9c1e-5b7d-4e0f-8a6b-2c4d6e8f0a1b.tmp"},
		},
		{
			name: "orphan checksum of a batch Spark will write",
			spec: func(s *sparktest.Spec) {
				s.Files["commits/.8.crc"] = "crc"
				s.Files["commits/.3.crc"] = "crc"
				s.Remove = []string{"commits/3"}
			},
			want:  []string{"commits/.8.crc"},
			kinds: []remediate.Kind{remediate.KindOrphanChecksum},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := spec()
			tc.spec(&s)
			p := plan(t, open(t, writeCheckpoint(t, s)))
			if got := planPaths(p); !slices.Equal(got, tc.want) {
				t.Fatalf("plan %q, want %q\n%+v", got, tc.want, p)
			}
			for i, k := range tc.kinds {
				if p.Files[i].Kind != k {
					t.Errorf("%s is a %q, want %q", p.Files[i].Path, p.Files[i].Kind, k)
				}
			}
			for _, f := range p.Files {
				if f.Cause == "" || f.SHA256 == "" {
					t.Errorf("planned file without cause or hash: %+v", f)
				}
			}
			if tc.note.Code != "" && !hasRemark(p, tc.note) {
				t.Errorf("no remark %+v: %+v", tc.note, p.Remarks)
			}
		})
	}
}

// Committed history is never planned, however broken: it is reported in Notes.
func TestPlanNeverTouchesCommittedHistory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec func(*sparktest.Spec)
		note remediate.Remark
	}{
		{
			name: "empty offsets file in the middle",
			spec: func(s *sparktest.Spec) { s.Files["offsets/4"] = "" },
			note: remediate.Remark{Code: remediate.RemarkEmptyCommitted, Path: "offsets/4", Batch: 4},
		},
		{
			name: "garbage commit in the middle",
			spec: func(s *sparktest.Spec) { s.Files["commits/3"] = "garbage" },
		},
		{
			name: "newest offsets empty but committed",
			spec: func(s *sparktest.Spec) { s.LatestCommit = 8; s.Files["offsets/8"] = "" },
			note: remediate.Remark{Code: remediate.RemarkCommittedCorrupt, Batch: 8, Damage: &remediate.Damage{Path: "offsets/8", Problem: spark.ProblemEmpty}},
		},
		{
			name: "offsets of the batch before the in-flight one is corrupt",
			spec: func(s *sparktest.Spec) { s.LatestCommit = 6; s.Files["offsets/7"] = "v1\n{" },
			note: remediate.Remark{Code: remediate.RemarkPreviousCorrupt, Batch: 8, Damage: &remediate.Damage{Path: "offsets/7", Problem: spark.ProblemTruncated}},
		},
		{
			name: "offsets/L-1 is missing",
			spec: func(s *sparktest.Spec) { s.Remove = []string{"offsets/7", "offsets/.7.crc"} },
			note: remediate.Remark{Code: remediate.RemarkPreviousMissing, Path: "offsets/7", Batch: 8},
		},
		{
			name: "corrupt metadata, state and sources",
			spec: func(s *sparktest.Spec) {
				s.Files["metadata"] = "{"
				s.Files["state/0/1/8.delta"] = ""
				s.Files["state/0/1/.9.dead.tmp"] = ""
				s.Files["sources/0/0"] = ""
				s.Files["sources/0/.1.dead.tmp"] = ""
			},
			note: remediate.Remark{Code: remediate.RemarkMetadataCorrupt, Damage: &remediate.Damage{Path: "metadata", Problem: spark.ProblemTruncated}},
		},
		{
			name: "too many corrupt trailing commits",
			spec: func(s *sparktest.Spec) {
				for _, n := range []string{"4", "5", "6", "7"} {
					s.Files["commits/"+n] = ""
				}
			},
			note: remediate.Remark{Code: remediate.RemarkTooManyCorrupt, Count: 4, Dir: "commits", From: "commits/4", To: "commits/7"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := spec()
			s.Checksums = false
			tc.spec(&s)
			p := plan(t, open(t, writeCheckpoint(t, s)))
			if !p.Empty {
				t.Fatalf("plan touches committed history or state: %+v", p)
			}
			if tc.note.Code != "" && !hasRemark(p, tc.note) {
				t.Errorf("no remark %+v: %+v", tc.note, p.Remarks)
			}
		})
	}
}

func TestPlanOfAnEmptyFile(t *testing.T) {
	t.Parallel()
	s := spec()
	s.Files["offsets/8"] = ""
	p := plan(t, open(t, writeCheckpoint(t, s)))
	if len(p.Files) != 2 || p.Empty || !slices.ContainsFunc(p.Files, func(f remediate.PlanFile) bool {
		return f.Path == "offsets/8" && emptyOffsets8(f)
	}) {
		t.Errorf("plan %+v, want offsets/8 and one more, offsets/8 for being empty", p)
	}
	if empty := plan(t, open(t, writeCheckpoint(t, spec()))); !empty.Empty || len(empty.Files) != 0 {
		t.Errorf("plan of a healthy checkpoint %+v", empty)
	}
}

func TestPlanNoCheckpoint(t *testing.T) {
	t.Parallel()
	_, err := remediate.PlanRepair(t.Context(), open(t, t.TempDir()), now)
	if err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("error %v", err)
	}
}

// hasRemark says p has a remark with want's code and fields; of want's Damage, only the path
// and the problem count.
func hasRemark(p *remediate.Plan, want remediate.Remark) bool {
	return slices.ContainsFunc(p.Remarks, func(r remediate.Remark) bool {
		if want.Damage != nil {
			if r.Damage == nil || r.Damage.Path != want.Damage.Path || r.Damage.Problem != want.Damage.Problem {
				return false
			}
			r.Damage = want.Damage
		}
		return reflect.DeepEqual(r, want)
	})
}

// emptyOffsets8 says f is planned for being the empty offsets file of batch 8, which Spark
// plans again without it.
func emptyOffsets8(f remediate.PlanFile) bool {
	return f.Cause == remediate.CauseCorruptOffsets && f.Batch == 8 && f.Damage != nil &&
		f.Damage.Path == "offsets/8" && f.Damage.Problem == spark.ProblemEmpty
}
