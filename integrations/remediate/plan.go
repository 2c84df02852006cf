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
	"github.com/streamwatch/streamwatch/internal/human"
)

// TempFileMinAge is the age from which a temp file or an orphan checksum is left over from an
// interrupted write rather than part of a write in progress.
const TempFileMinAge = 5 * time.Minute

// maxTrailingCorrupt is the longest run of corrupt files at the end of a log that a plan moves
// aside. An interrupted write leaves one; more is damage a person should look at.
const maxTrailingCorrupt = 3

// maxLogFileBytes bounds the read of one offsets or commits file.
const maxLogFileBytes = 16 << 20

// Kind says why a file is in a plan.
type Kind string

// The kinds of planned files.
const (
	KindCorruptOffsets Kind = "corrupt offsets" // offsets/N, N above the latest valid commit
	KindCorruptCommit  Kind = "corrupt commit"  // commits/N, N above the latest valid commit
	KindTempFile       Kind = "temp file"       // .<name>.<uuid>[.TID<n>].tmp and its .crc
	KindChecksum       Kind = "checksum"        // .N.crc beside a planned file
	KindOrphanChecksum Kind = "orphan checksum" // .N.crc without N, for a batch Spark will write
)

// Plan is the smallest set of files to move out of a checkpoint so that Spark can restart; see
// the package documentation for the exact rule.
type Plan struct {
	Location string    // the checkpoint
	At       time.Time // the clock the plan was made with
	Files    []PlanFile
	Empty    bool     // no file to move
	Notes    []string // what the plan leaves alone and why, and what Spark will do after it
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
	Reason string // "offsets/7 is empty: Spark cannot parse it on restart"
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

func (p *planner) note(format string, args ...any) {
	p.plan.Notes = append(p.plan.Notes, fmt.Sprintf(format, args...))
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
				p.note("%s/%s is not a name Spark writes but Spark reads it as batch %d; left alone", dir, e.Name, id)
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
	reason string // "offsets/7 is empty"
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
			badCommits = append(badCommits, corruptFile{id, name, data, describe(name, perr)})
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
			p.note("%s: batch %d is committed, so it is not moved; Spark reads it on restart and will fail: restore it from a backup", describe(name, perr), c)
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
		if reason := offsetsProblem(name, data, refName, refSources); reason != "" {
			badOffsets = append(badOffsets, corruptFile{id, name, data, reason})
			continue
		}
		p.note("%s is valid and batch %d has no valid commit: kept, Spark runs batch %d again on restart", name, id, id)
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
			p.note("the newest %d files of %s/ are corrupt (%s ... %s): more than an interrupted write leaves, so no offsets or commits file is planned; restore the checkpoint from a backup or repair it by hand",
				len(run.bad), run.dir, run.bad[len(run.bad)-1].path, run.bad[0].path)
		}
	}
	if tooLong {
		badCommits, badOffsets = nil, nil
	}
	for _, f := range badCommits {
		p.add(PlanFile{Path: f.path, Size: int64(len(f.data)), SHA256: hashBytes(f.data), Kind: KindCorruptCommit,
			Reason: fmt.Sprintf("%s: Spark cannot parse it on restart; without it Spark re-runs batch %d into the sink", f.reason, f.id)})
	}
	for _, f := range badOffsets {
		p.add(PlanFile{Path: f.path, Size: int64(len(f.data)), SHA256: hashBytes(f.data), Kind: KindCorruptOffsets,
			Reason: fmt.Sprintf("%s: Spark cannot parse it on restart; without it Spark plans batch %d again", f.reason, f.id)})
	}
	if len(badCommits) > 0 {
		ids := make([]int64, len(badCommits))
		for i, f := range badCommits {
			ids[len(ids)-1-i] = f.id
		}
		p.note("moving commits aside makes Spark run %s again: the sink must tolerate a repeated batch", batchList(ids))
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
		p.note("the checkpoint has no metadata file: Spark writes a new one with a new query id on restart; nothing to move")
		return nil
	}
	data, err := p.read("metadata")
	if err != nil {
		return err
	}
	if _, perr := spark.ParseMetadata("metadata", data); perr != nil {
		p.note("%s: metadata is never moved by a repair; restore it from a backup (Spark fails with 'Error reading stream metadata')", describe("metadata", perr))
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
				p.note("%s is empty but batch %d is committed history: not moved; restore it from a backup if Spark needs it", lg.file(id), id)
			}
		}
	}
	switch {
	case l < 0 && changed:
		p.note("no offsets file remains: Spark starts the query from its startingOffsets option, as a new query would")
	case changed && l > c:
		p.note("after the move Spark restarts at batch %d, planned but not committed (it is run again)", l)
	case changed && l == c:
		p.note("after the move Spark restarts after batch %d, the latest commit, and plans batch %d", c, c+1)
	case changed && l < c:
		p.note("after the move the newest offsets file is %s but commits/%d exists: Spark will not restart cleanly; repair by hand", offsets.file(l), c)
	}
	if l <= 0 {
		return nil
	}
	prev := l - 1
	if !offsets.has(strconv.FormatInt(prev, 10)) {
		p.note("%s is missing: Spark needs it to restart at batch %d ('batch %d doesn't exist'); restore it from a backup", offsets.file(prev), l, prev)
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
		p.note("%s: Spark reads it to restart at batch %d; it is not moved, restore it from a backup", describe(offsets.file(prev), perr), l)
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
		old := !e.ModTime.IsZero() && p.now.Sub(e.ModTime) >= TempFileMinAge
		age := ageText(p.now.Sub(e.ModTime))
		var f PlanFile
		switch {
		case spark.IsChecksumFile(e.Name):
			target := spark.CRCTarget(e.Name)
			switch {
			case p.planned[join(target)] && spark.IsTempFile(target):
				f = PlanFile{Kind: KindTempFile, Reason: fmt.Sprintf(
					"%s is the checksum of the temp file %s, which is moved aside", name, join(target))}
			case p.planned[join(target)]:
				f = PlanFile{Kind: KindChecksum, Reason: fmt.Sprintf(
					"%s is the checksum of %s, which is moved aside: left behind it would block Spark from writing %s again",
					name, join(target), join(target))}
			case names[target]:
				continue // the checksum of a file that stays
			case spark.IsTempFile(target):
				if !old {
					young = append(young, name)
					continue
				}
				f = PlanFile{Kind: KindTempFile, Reason: fmt.Sprintf(
					"%s is the checksum of a temp file that is gone, %s old", name, age)}
			default:
				id, isBatch := spark.ParseBatchID(target)
				if kept < 0 || !isBatch || target != strconv.FormatInt(id, 10) || id <= kept {
					continue // harmless: Spark never writes that name again
				}
				if !old {
					young = append(young, name)
					continue
				}
				f = PlanFile{Kind: KindOrphanChecksum, Reason: fmt.Sprintf(
					"%s is a checksum without %s: it would block Spark from writing batch %d ('Multiple streaming queries are concurrently using')",
					name, join(target), id)}
			}
		case spark.IsTempFile(e.Name):
			if !old {
				young = append(young, name)
				continue
			}
			f = PlanFile{Kind: KindTempFile, Reason: fmt.Sprintf(
				"%s is the temp file of an interrupted write, %s old", name, age)}
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
		p.note("%d temp or checksum %s younger than %s left alone (%s): a write may be in progress; is the query running?",
			len(young), human.Noun(len(young), "file"), TempFileMinAge, young[0])
	}
	return nil
}

// ageText is a duration as people say it: "7 minutes", "3 hours", "12 days".
func ageText(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
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

// offsetsProblem says what makes an offsets file unreadable for Spark, "" when it is fine.
func offsetsProblem(name string, data []byte, refName string, refSources int) string {
	seq, err := spark.ParseOffsets(name, data)
	if err != nil {
		return describe(name, err)
	}
	if refSources > 0 && len(seq.Sources) < refSources {
		return fmt.Sprintf("%s has %d source %s where %s has %d: it was cut short",
			name, len(seq.Sources), human.Noun(len(seq.Sources), "line"), refName, refSources)
	}
	return ""
}

// describe turns a parse error into "offsets/7 is empty", "offsets/7 is truncated (line 3: ...)".
func describe(name string, err error) string {
	var pe *spark.ParseError
	if !errors.As(err, &pe) {
		return fmt.Sprintf("%s cannot be parsed (%v)", name, err)
	}
	what := map[spark.Problem]string{
		spark.ProblemEmpty:              "is empty",
		spark.ProblemTruncated:          "is truncated",
		spark.ProblemMalformedVersion:   "has a malformed version line",
		spark.ProblemUnsupportedVersion: "has an unsupported version",
		spark.ProblemBadJSON:            "holds unparseable JSON",
		spark.ProblemInvalid:            "is not what Spark writes",
	}[pe.Problem]
	if what == "" {
		what = "is corrupt (" + string(pe.Problem) + ")"
	}
	if pe.Problem == spark.ProblemEmpty {
		return name + " " + what
	}
	if pe.Detail == "" {
		return fmt.Sprintf("%s %s (line %d)", name, what, pe.Line)
	}
	return fmt.Sprintf("%s %s (line %d: %s)", name, what, pe.Line, pe.Detail)
}

func batchList(ids []int64) string {
	if len(ids) == 1 {
		return "batch " + strconv.FormatInt(ids[0], 10)
	}
	s := "batches "
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += strconv.FormatInt(id, 10)
	}
	return s
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
