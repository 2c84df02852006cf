package remediate

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// TempFileMinAge is the age from which a temp file or an orphan checksum is left over from an
// interrupted write rather than part of a write in progress.
const TempFileMinAge = 5 * time.Minute

// maxTrailingCorrupt is the longest run of corrupt files at the end of a log that a plan moves
// aside. An interrupted write leaves one; more is damage a person should look at.
const maxTrailingCorrupt = 3

// maxLogFileBytes bounds the read of one offsets or commits file.
const maxLogFileBytes = 16 << 20

// Kind says what a planned file is. A plan an earlier version stored spells them in words
// ("corrupt offsets", "temp file"); nothing compares a stored plan's kinds.
type Kind string

// The kinds of planned files.
const (
	KindCorruptOffsets Kind = "corrupt_offsets" // offsets/N, N above the latest valid commit
	KindCorruptCommit  Kind = "corrupt_commit"  // commits/N, N above the latest valid commit
	KindTempFile       Kind = "temp_file"       // .<name>.<uuid>[.TID<n>].tmp and its .crc
	KindChecksum       Kind = "checksum"        // .N.crc beside a planned file
	KindOrphanChecksum Kind = "orphan_checksum" // .N.crc without N, for a batch Spark will write
)

// Plan is the smallest set of files to move out of a checkpoint so that Spark can restart; see
// the package documentation for the exact rule. Plans are stored as JSON between a dry run and
// its confirmation.
type Plan struct {
	Location string    // the checkpoint
	At       time.Time // the clock the plan was made with
	Files    []PlanFile
	Empty    bool // no file to move
	// Remarks are what the plan leaves alone and why, and what Spark will do after it:
	// commands words them.
	Remarks []Remark `json:",omitempty"`
	// Notes are an earlier version's words for its remarks, in a plan that version stored.
	Notes []string `json:",omitempty"`
	// LatestValidCommit is C of the rule: the newest batch whose commits file parses; -1 none.
	LatestValidCommit int64
}

// PlanFile is one file to move aside. Size and SHA256 are what the file held when planned;
// Quarantine refuses a file that no longer matches them.
type PlanFile struct {
	Path   string // relative to the checkpoint root
	Size   int64
	SHA256 string
	Kind   Kind
	// Cause says why the file is moved, with the fields below that it uses: commands words it.
	Cause  Cause         `json:",omitempty"`
	Batch  int64         `json:",omitempty"`
	Target string        `json:",omitempty"` // the file a checksum belongs to
	Age    time.Duration `json:",omitempty"`
	Damage *Damage       `json:",omitempty"`
	// Reason is an earlier version's words for why, in a plan that version stored (no Cause).
	Reason string `json:",omitempty"`
}

// Cause says why a file is planned. Each names the PlanFile fields it uses besides Path.
type Cause string

// The causes of planned files.
const (
	// CauseCorruptCommit: Spark cannot parse the commit file (Damage); without it Spark re-runs
	// batch Batch into the sink.
	CauseCorruptCommit Cause = "corrupt_commit"
	// CauseCorruptOffsets: Spark cannot parse the offsets file (Damage); without it Spark plans
	// batch Batch again.
	CauseCorruptOffsets Cause = "corrupt_offsets"
	// CauseTempChecksum: the checksum of the temp file Target, which is moved aside.
	CauseTempChecksum Cause = "temp_checksum"
	// CauseChecksum: the checksum of Target, which is moved aside; left behind it would block
	// Spark from writing Target again.
	CauseChecksum Cause = "checksum"
	// CauseGoneTempChecksum: the checksum of a temp file that is gone, Age old.
	CauseGoneTempChecksum Cause = "gone_temp_checksum"
	// CauseOrphanChecksum: a checksum without its file Target: it would block Spark from
	// writing batch Batch.
	CauseOrphanChecksum Cause = "orphan_checksum"
	// CauseTempFile: the temp file of an interrupted write, Age old.
	CauseTempFile Cause = "temp_file"
)

// Damage is what makes a checkpoint file unreadable for Spark: a parse problem (Problem at
// Line, with Detail), a file cut short (Sources source lines where Ref has RefSources), or a
// parse failure of another kind (Err, its text).
type Damage struct {
	Path       string
	Problem    spark.Problem `json:",omitempty"`
	Line       int           `json:",omitempty"`
	Detail     string        `json:",omitempty"`
	Sources    int           `json:",omitempty"`
	Ref        string        `json:",omitempty"`
	RefSources int           `json:",omitempty"`
	Err        string        `json:",omitempty"`
}

// RemarkCode says what a plan's remark is about. Each names the Remark fields it uses.
type RemarkCode string

// The remarks of a plan.
const (
	// RemarkOddName: Path is not a name Spark writes, but Spark reads it as batch Batch; left
	// alone.
	RemarkOddName RemarkCode = "odd_name"
	// RemarkCommittedCorrupt: the offsets file of batch Batch, the latest commit, is damaged
	// (Damage); it is not moved, and Spark will fail on restart: restore it from a backup.
	RemarkCommittedCorrupt RemarkCode = "committed_corrupt"
	// RemarkRerun: Path is valid and batch Batch has no valid commit: kept, Spark runs it again.
	RemarkRerun RemarkCode = "rerun"
	// RemarkTooManyCorrupt: the newest Count files of Dir/ are corrupt (From ... To, oldest
	// first): more than an interrupted write leaves, so no log file is planned.
	RemarkTooManyCorrupt RemarkCode = "too_many_corrupt"
	// RemarkRepeated: moving commits aside makes Spark run Batches again.
	RemarkRepeated RemarkCode = "repeated"
	// RemarkNoMetadata: the checkpoint has no metadata file; Spark writes a new one.
	RemarkNoMetadata RemarkCode = "no_metadata"
	// RemarkMetadataCorrupt: metadata is damaged (Damage); a repair never moves it.
	RemarkMetadataCorrupt RemarkCode = "metadata_corrupt"
	// RemarkEmptyCommitted: Path is empty but batch Batch is committed history: not moved.
	RemarkEmptyCommitted RemarkCode = "empty_committed"
	// RemarkNoOffsetsLeft: after the move no offsets file remains; Spark starts the query from
	// its startingOffsets option.
	RemarkNoOffsetsLeft RemarkCode = "no_offsets_left"
	// RemarkRestartUncommitted: after the move Spark restarts at batch Batch, planned but not
	// committed.
	RemarkRestartUncommitted RemarkCode = "restart_uncommitted"
	// RemarkRestartAfterCommit: after the move Spark restarts after batch Batch, the latest
	// commit, and plans Batch+1.
	RemarkRestartAfterCommit RemarkCode = "restart_after_commit"
	// RemarkRestartBroken: after the move the newest offsets file is Path but commits/Batch
	// exists: Spark will not restart cleanly.
	RemarkRestartBroken RemarkCode = "restart_broken"
	// RemarkPreviousMissing: Path, the offsets file of batch Batch-1, is missing: Spark needs it
	// to restart at batch Batch.
	RemarkPreviousMissing RemarkCode = "previous_missing"
	// RemarkPreviousCorrupt: the offsets file Spark reads to restart at batch Batch is damaged
	// (Damage); it is not moved.
	RemarkPreviousCorrupt RemarkCode = "previous_corrupt"
	// RemarkYoung: Count temp or checksum files younger than Age (TempFileMinAge) are left
	// alone, Path the first: a write may be in progress.
	RemarkYoung RemarkCode = "young"
)

// Remark is one thing a plan leaves alone and why, or what Spark will do after it.
type Remark struct {
	Code     RemarkCode
	Path     string        `json:",omitempty"`
	Batch    int64         `json:",omitempty"`
	Batches  []int64       `json:",omitempty"`
	Count    int           `json:",omitempty"`
	Dir      string        `json:",omitempty"`
	From, To string        `json:",omitempty"`
	Damage   *Damage       `json:",omitempty"`
	Age      time.Duration `json:",omitempty"`
}

// PlanRepair looks at the checkpoint in store and plans what to move aside. It reads the
// listings of the root, offsets/ and commits/, the newest commit and offsets files down to the
// first valid one, offsets/C and offsets/<L-1>, metadata, and the small files it plans. Storage
// failures are errors (with their class): a plan made from a partial view would not be minimal.
func PlanRepair(ctx context.Context, store storage.Store, now time.Time) (*Plan, error) {
	pl := &planner{ctx: ctx, store: store, now: now,
		plan:    &Plan{Location: store.Location(), At: now, LatestValidCommit: -1},
		planned: map[string]bool{}}
	if err := pl.run(); err != nil {
		return nil, fmt.Errorf("plan the repair of %s: %w", store.Location(), err)
	}
	p := pl.plan
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
	p.Empty = len(p.Files) == 0
	return p, nil
}

type planner struct {
	ctx     context.Context
	store   storage.Store
	now     time.Time
	plan    *Plan
	planned map[string]bool
}

// logDir is offsets/ or commits/.
type logDir struct {
	dir     string
	entries map[string]storage.Entry
	ids     []int64 // batch files, newest first
}

func (l *logDir) has(name string) bool { _, ok := l.entries[name]; return ok }

// file is the path of batch id.
func (l *logDir) file(id int64) string { return l.dir + "/" + strconv.FormatInt(id, 10) }

func (p *planner) remark(r Remark) {
	p.plan.Remarks = append(p.plan.Remarks, r)
}

func (p *planner) add(f PlanFile) {
	if p.planned[f.Path] {
		return
	}
	p.planned[f.Path] = true
	p.plan.Files = append(p.plan.Files, f)
}

func (p *planner) list(dir string) (*logDir, error) {
	l := &logDir{dir: dir, entries: map[string]storage.Entry{}}
	entries, err := p.store.List(p.ctx, dir)
	if storage.Class(err) == storage.ClassNotFound && p.ctx.Err() == nil {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		l.entries[e.Name] = e
		if id, ok := spark.ParseBatchID(e.Name); ok {
			if id >= 0 && e.Name == strconv.FormatInt(id, 10) {
				l.ids = append(l.ids, id)
			} else {
				p.remark(Remark{Code: RemarkOddName, Path: dir + "/" + e.Name, Batch: id})
			}
		}
	}
	sort.Slice(l.ids, func(i, j int) bool { return l.ids[i] > l.ids[j] })
	return l, nil
}

func (p *planner) read(name string) ([]byte, error) {
	return storage.ReadAll(p.ctx, p.store, name, maxLogFileBytes)
}

// corruptFile is a log file Spark cannot read.
type corruptFile struct {
	id     int64
	path   string
	data   []byte
	damage *Damage
}

func (p *planner) run() error {
	root, err := p.store.List(p.ctx, "")
	if err != nil {
		if storage.Class(err) == storage.ClassNotFound && p.ctx.Err() == nil {
			return fmt.Errorf("no checkpoint at %s: %w", p.store.Location(), err)
		}
		return err
	}
	rootNames := map[string]storage.Entry{}
	for _, e := range root {
		rootNames[e.Name] = e
	}
	_, hasMeta := rootNames["metadata"]
	_, hasOffsets := rootNames["offsets"]
	_, hasCommits := rootNames["commits"]
	if !hasMeta && !hasOffsets && !hasCommits {
		return fmt.Errorf("no checkpoint at %s: no metadata, offsets/ or commits/", p.store.Location())
	}
	if err := p.checkMetadata(hasMeta); err != nil {
		return err
	}
	offsets, err := p.list("offsets")
	if err != nil {
		return err
	}
	commits, err := p.list("commits")
	if err != nil {
		return err
	}

	// 1. Commits from the newest down to the first that parses: C and the corrupt run above it.
	var badCommits []corruptFile
	c := int64(-1)
	for _, id := range commits.ids {
		name := commits.file(id)
		data, err := p.read(name)
		if err != nil {
			return err
		}
		if _, perr := spark.ParseCommit(name, data); perr != nil {
			badCommits = append(badCommits, corruptFile{id, name, data, damage(name, perr)})
			continue
		}
		c = id
		break
	}
	p.plan.LatestValidCommit = c

	// offsets/C: what the committed batch read; its source count tells a cut-short newer file.
	refSources, refName := 0, ""
	if c >= 0 && offsets.has(strconv.FormatInt(c, 10)) {
		name := offsets.file(c)
		data, err := p.read(name)
		if err != nil {
			return err
		}
		if seq, perr := spark.ParseOffsets(name, data); perr != nil {
			p.remark(Remark{Code: RemarkCommittedCorrupt, Damage: damage(name, perr), Batch: c})
		} else {
			refSources, refName = len(seq.Sources), name
		}
	}

	// 2. Offsets above C from the newest down, to the first that parses.
	var badOffsets []corruptFile
	for _, id := range offsets.ids {
		if id <= c {
			break
		}
		name := offsets.file(id)
		data, err := p.read(name)
		if err != nil {
			return err
		}
		if d := offsetsProblem(name, data, refName, refSources); d != nil {
			badOffsets = append(badOffsets, corruptFile{id, name, data, d})
			continue
		}
		p.remark(Remark{Code: RemarkRerun, Path: name, Batch: id})
		break
	}

	// 3. Too long a run is not an interrupted write.
	tooLong := false
	for _, run := range []struct {
		dir string
		bad []corruptFile
	}{{"commits", badCommits}, {"offsets", badOffsets}} {
		if len(run.bad) > maxTrailingCorrupt {
			tooLong = true
			p.remark(Remark{Code: RemarkTooManyCorrupt, Count: len(run.bad), Dir: run.dir, From: run.bad[len(run.bad)-1].path, To: run.bad[0].path})
		}
	}
	if tooLong {
		badCommits, badOffsets = nil, nil
	}
	for _, f := range badCommits {
		p.add(PlanFile{Path: f.path, Size: int64(len(f.data)), SHA256: hashBytes(f.data), Kind: KindCorruptCommit,
			Cause: CauseCorruptCommit, Damage: f.damage, Batch: f.id})
	}
	for _, f := range badOffsets {
		p.add(PlanFile{Path: f.path, Size: int64(len(f.data)), SHA256: hashBytes(f.data), Kind: KindCorruptOffsets,
			Cause: CauseCorruptOffsets, Damage: f.damage, Batch: f.id})
	}
	if len(badCommits) > 0 {
		ids := make([]int64, len(badCommits))
		for i, f := range badCommits {
			ids[len(ids)-1-i] = f.id
		}
		p.remark(Remark{Code: RemarkRepeated, Batches: ids})
	}

	// The newest batch kept in each log, once the plan is carried out.
	keptOffsets, keptCommit := newestKept(offsets, p.planned), newestKept(commits, p.planned)
	if err := p.checkRestart(offsets, commits, keptOffsets, c, len(badOffsets)+len(badCommits) > 0); err != nil {
		return err
	}

	// 4 and 5. Checksums of planned files, orphan checksums of future batches, temp files.
	if err := p.leftovers("", root, -1); err != nil {
		return err
	}
	if err := p.leftovers("offsets", mapValues(offsets.entries), keptOffsets); err != nil {
		return err
	}
	return p.leftovers("commits", mapValues(commits.entries), keptCommit)
}

// checkMetadata notes a missing or corrupt metadata file; it is never moved.
func (p *planner) checkMetadata(present bool) error {
	if !present {
		p.remark(Remark{Code: RemarkNoMetadata})
		return nil
	}
	data, err := p.read("metadata")
	if err != nil {
		return err
	}
	if _, perr := spark.ParseMetadata("metadata", data); perr != nil {
		p.remark(Remark{Code: RemarkMetadataCorrupt, Damage: damage("metadata", perr)})
	}
	return nil
}

// checkRestart notes what Spark will read on restart once the plan is carried out: the newest
// offsets file kept (L) and offsets/<L-1>, and empty files in committed history.
func (p *planner) checkRestart(offsets, commits *logDir, l, c int64, changed bool) error {
	for _, lg := range []*logDir{offsets, commits} {
		for _, id := range lg.ids {
			if id > c || (lg == offsets && id == c) {
				continue // offsets/C was read and judged already
			}
			if e := lg.entries[strconv.FormatInt(id, 10)]; e.Size == 0 && !e.ModTime.IsZero() {
				p.remark(Remark{Code: RemarkEmptyCommitted, Path: lg.file(id), Batch: id})
			}
		}
	}
	switch {
	case l < 0 && changed:
		p.remark(Remark{Code: RemarkNoOffsetsLeft})
	case changed && l > c:
		p.remark(Remark{Code: RemarkRestartUncommitted, Batch: l})
	case changed && l == c:
		p.remark(Remark{Code: RemarkRestartAfterCommit, Batch: c})
	case changed && l < c:
		p.remark(Remark{Code: RemarkRestartBroken, Path: offsets.file(l), Batch: c})
	}
	if l <= 0 {
		return nil
	}
	prev := l - 1
	if !offsets.has(strconv.FormatInt(prev, 10)) {
		p.remark(Remark{Code: RemarkPreviousMissing, Path: offsets.file(prev), Batch: l})
		return nil
	}
	if prev == c {
		return nil // read and judged as offsets/C already
	}
	data, err := p.read(offsets.file(prev))
	if err != nil {
		return err
	}
	if _, perr := spark.ParseOffsets(offsets.file(prev), data); perr != nil {
		p.remark(Remark{Code: RemarkPreviousCorrupt, Damage: damage(offsets.file(prev), perr), Batch: l})
	}
	return nil
}

// leftovers plans, in one directory: checksums beside planned files; orphan checksums of batch
// ids above kept (-1: not a log directory); temp files and their checksums.
func (p *planner) leftovers(dir string, entries []storage.Entry, kept int64) error {
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name] = true
	}
	join := func(name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	// Checksums last, so that the checksum of a planned temp file sees it planned.
	sort.Slice(entries, func(i, j int) bool {
		ci, cj := spark.IsChecksumFile(entries[i].Name), spark.IsChecksumFile(entries[j].Name)
		if ci != cj {
			return cj
		}
		return entries[i].Name < entries[j].Name
	})
	var young []string
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		name := join(e.Name)
		age := p.now.Sub(e.ModTime)
		old := !e.ModTime.IsZero() && age >= TempFileMinAge
		var f PlanFile
		switch {
		case spark.IsChecksumFile(e.Name):
			target := spark.CRCTarget(e.Name)
			switch {
			case p.planned[join(target)] && spark.IsTempFile(target):
				f = PlanFile{Kind: KindTempFile, Cause: CauseTempChecksum, Target: join(target)}
			case p.planned[join(target)]:
				f = PlanFile{Kind: KindChecksum, Cause: CauseChecksum, Target: join(target)}
			case names[target]:
				continue // the checksum of a file that stays
			case spark.IsTempFile(target):
				if !old {
					young = append(young, name)
					continue
				}
				f = PlanFile{Kind: KindTempFile, Cause: CauseGoneTempChecksum, Age: age}
			default:
				id, isBatch := spark.ParseBatchID(target)
				if kept < 0 || !isBatch || target != strconv.FormatInt(id, 10) || id <= kept {
					continue // harmless: Spark never writes that name again
				}
				if !old {
					young = append(young, name)
					continue
				}
				f = PlanFile{Kind: KindOrphanChecksum, Cause: CauseOrphanChecksum, Target: join(target), Batch: id}
			}
		case spark.IsTempFile(e.Name):
			if !old {
				young = append(young, name)
				continue
			}
			f = PlanFile{Kind: KindTempFile, Cause: CauseTempFile, Age: age}
		default:
			continue
		}
		data, err := storage.ReadAll(p.ctx, p.store, name, maxLogFileBytes)
		if storage.Class(err) == storage.ClassNotFound && p.ctx.Err() == nil {
			continue // a write finished or a cleanup ran since the listing
		}
		if err != nil {
			return err
		}
		f.Path, f.Size, f.SHA256 = name, int64(len(data)), hashBytes(data)
		p.add(f)
	}
	if len(young) > 0 {
		p.remark(Remark{Code: RemarkYoung, Count: len(young), Age: TempFileMinAge, Path: young[0]})
	}
	return nil
}

// newestKept is the newest batch of a log that the plan does not move; -1 none.
func newestKept(l *logDir, planned map[string]bool) int64 {
	for _, id := range l.ids {
		if !planned[l.file(id)] {
			return id
		}
	}
	return -1
}

// offsetsProblem says what makes an offsets file unreadable for Spark, nil when it is fine.
func offsetsProblem(name string, data []byte, refName string, refSources int) *Damage {
	seq, err := spark.ParseOffsets(name, data)
	if err != nil {
		return damage(name, err)
	}
	if refSources > 0 && len(seq.Sources) < refSources {
		return &Damage{Path: name, Sources: len(seq.Sources), Ref: refName, RefSources: refSources}
	}
	return nil
}

// damage is a parse error as data.
func damage(name string, err error) *Damage {
	var pe *spark.ParseError
	if !errors.As(err, &pe) {
		return &Damage{Path: name, Err: err.Error()}
	}
	return &Damage{Path: name, Problem: pe.Problem, Line: pe.Line, Detail: pe.Detail}
}

func mapValues(m map[string]storage.Entry) []storage.Entry {
	out := make([]storage.Entry, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	return out
}

// checkPlannedPath refuses a path a plan may never hold, whoever built the plan: anything
// outside the root, offsets/ and commits/, metadata, and names that are not batch files,
// checksums or temp files.
func checkPlannedPath(p string) error {
	if p == "" || path.Clean(p) != p || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("%q is not a clean relative path", p)
	}
	dir, base := path.Split(p)
	switch dir {
	case "", "offsets/", "commits/":
	default:
		return fmt.Errorf("%s is outside the root, offsets/ and commits/; a repair never moves it", p)
	}
	switch {
	case spark.IsTempFile(base), spark.IsChecksumFile(base):
		return nil
	case dir != "":
		if id, ok := spark.ParseBatchID(base); ok && id >= 0 && base == strconv.FormatInt(id, 10) {
			return nil
		}
	}
	return fmt.Errorf("%s is not a batch, checksum or temp file; a repair never moves it", p)
}
