package remediate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// RecordName is <backup>/quarantine.json: the manifest of the quarantine, one entry per file
// a repair moved there (path, size, SHA-256, when) and when it was restored, if it was.
const RecordName = "quarantine.json"

// QuarantineRecord is quarantine.json.
type QuarantineRecord struct {
	Version int               `json:"version"`
	Files   []QuarantinedFile `json:"files"`
}

// QuarantinedFile is one file a repair moved into the quarantine.
type QuarantinedFile struct {
	Path        string    `json:"path"` // relative to the checkpoint root and to quarantine/
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	Quarantined time.Time `json:"quarantined"`
	Restored    time.Time `json:"restored,omitzero"`
}

// ReadRecord reads the quarantine record of backup directory dir; an empty record when the
// backup has none.
func ReadRecord(ctx context.Context, root storage.Store, dir string) (*QuarantineRecord, error) {
	data, err := storage.ReadAll(ctx, root, dir+"/"+RecordName, maxManifestBytes)
	if storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil {
		return &QuarantineRecord{Version: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", RecordName, err)
	}
	var r QuarantineRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("parse %s of %s: %w", RecordName, joinLocation(root.Location(), dir), err)
	}
	for _, f := range r.Files {
		if err := checkPlannedPath(f.Path); err != nil {
			return nil, fmt.Errorf("%s of %s lists %w", RecordName, joinLocation(root.Location(), dir), err)
		}
	}
	return &r, nil
}

func writeRecord(ctx context.Context, root storage.Store, dir string, r *QuarantineRecord) error {
	sort.SliceStable(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := root.Write(ctx, dir+"/"+RecordName, strings.NewReader(string(data))); err != nil {
		return fmt.Errorf("write %s: %w", RecordName, err)
	}
	return nil
}

// recordQuarantined adds moved files to the backup's quarantine record.
func recordQuarantined(ctx context.Context, root storage.Store, dir string, moved []PlanFile, at time.Time) error {
	r, err := ReadRecord(ctx, root, dir)
	if err != nil {
		return err
	}
	for _, f := range moved {
		r.Files = append(r.Files, QuarantinedFile{Path: f.Path, Size: f.Size, SHA256: f.SHA256, Quarantined: at.UTC()})
	}
	return writeRecord(ctx, root, dir, r)
}

// RestorePlan is what PlanRestore found: the quarantined files of one backup that can go back
// into the checkpoint, each verified, and those that cannot, with why.
type RestorePlan struct {
	Location string // the checkpoint
	Backup   string // the backup directory, relative to the backup root: <pipeline>/<time>
	Files    []RestoreFile
	// Stays are the files that stay in the quarantine, with why: commands words them.
	Stays []Stay `json:",omitempty"`
	// Problems are an earlier version's words for them, in a plan that version stored.
	Problems []string `json:",omitempty"`
}

// RestoreFile is one quarantined file to put back.
type RestoreFile struct {
	Path   string    // in the checkpoint
	Source FileState // the quarantined copy, relative to the backup root
	Target FileState // the checkpoint path, absent
	// VerifiedBy names what the copy's SHA-256 was checked against: the quarantine record, or
	// for files quarantined before records existed, the backup's manifest. A plan stored by an
	// earlier version holds its words for them instead.
	VerifiedBy Verifier
}

// Verifier is what a quarantined copy was verified against.
type Verifier string

// The records a quarantined copy is verified against.
const (
	VerifiedByRecord   Verifier = "record"   // the backup's quarantine.json
	VerifiedByManifest Verifier = "manifest" // the backup's manifest.json
)

// StayCode says why a quarantined file stays. Each names the Stay fields it uses besides Path.
type StayCode string

// The reasons a quarantined file stays in the quarantine.
const (
	// StayBadPath: Path (in quarantine/) is a path a repair never moves (Err, the check's text).
	StayBadPath StayCode = "bad_path"
	// StayUnlisted: neither the quarantine record nor the backup's manifest lists Path, so its
	// copy cannot be verified.
	StayUnlisted StayCode = "unlisted"
	// StayMismatch: the quarantined copy (Found: size, SHA-256) does not match what By recorded
	// (WantSize, WantSHA256).
	StayMismatch StayCode = "mismatch"
	// StayOccupied: Path exists in the checkpoint again (Found: size, modification time): a
	// restore never overwrites it.
	StayOccupied StayCode = "occupied"
)

// Stay is one quarantined file a restore leaves where it is, and why.
type Stay struct {
	Code       StayCode
	Path       string
	Err        string    `json:",omitempty"`
	By         Verifier  `json:",omitempty"`
	Found      FileState `json:",omitzero"`
	WantSize   int64     `json:",omitempty"`
	WantSHA256 string    `json:",omitempty"`
}

// States lists the sources and targets, for a digest of what a restore will touch.
func (p *RestorePlan) States() []FileState {
	var out []FileState
	for _, f := range p.Files {
		out = append(out, f.Source, f.Target)
	}
	return out
}

// PlanRestore looks at the quarantine of backup directory dir (<pipeline>/<time>) and plans
// putting its files back: each quarantined copy must match the quarantine record (or, when the
// backup has no record of it, the backup's manifest), and nothing may stand at its place in the
// checkpoint, which a restore never overwrites. Files already restored are left out.
func PlanRestore(ctx context.Context, store, backupRoot storage.Store, dir string) (*RestorePlan, error) {
	fail := func(err error) error {
		return fmt.Errorf("plan a restore from %s: %w", joinLocation(backupRoot.Location(), dir), err)
	}
	rec, err := ReadRecord(ctx, backupRoot, dir)
	if err != nil {
		return nil, fail(err)
	}
	plan := &RestorePlan{Location: store.Location(), Backup: dir}
	recorded := map[string]QuarantinedFile{}
	for _, f := range rec.Files {
		if f.Restored.IsZero() {
			recorded[f.Path] = f
		} else {
			delete(recorded, f.Path)
		}
	}
	qdir := dir + "/" + QuarantineDir
	present, err := quarantined(ctx, backupRoot, qdir)
	if err != nil {
		return nil, fail(err)
	}
	var manifest map[string]ManifestFile
	for _, p := range present {
		if err := checkPlannedPath(p); err != nil {
			plan.Stays = append(plan.Stays, Stay{Code: StayBadPath, Path: p, Err: err.Error()})
			continue
		}
		want, by := recorded[p], VerifiedByRecord
		if want.Path == "" {
			if manifest == nil {
				manifest = map[string]ManifestFile{}
				if b, err := readManifest(ctx, backupRoot, dir); err == nil {
					for _, f := range b.Files {
						manifest[f.Path] = f
					}
				}
			}
			m, ok := manifest[p]
			if !ok {
				plan.Stays = append(plan.Stays, Stay{Code: StayUnlisted, Path: p})
				continue
			}
			want, by = QuarantinedFile{Path: p, Size: m.Size, SHA256: m.SHA256}, VerifiedByManifest
		}
		src, err := Observe(ctx, backupRoot, qdir+"/"+p, true)
		if err != nil {
			return nil, fail(err)
		}
		if src.Size != want.Size || src.SHA256 != want.SHA256 {
			plan.Stays = append(plan.Stays, Stay{Code: StayMismatch, Path: p, By: by, Found: src, WantSize: want.Size, WantSHA256: want.SHA256})
			continue
		}
		dst, err := Observe(ctx, store, p, false)
		if err != nil {
			return nil, fail(err)
		}
		if !dst.Absent {
			plan.Stays = append(plan.Stays, Stay{Code: StayOccupied, Path: p, Found: dst})
			continue
		}
		plan.Files = append(plan.Files, RestoreFile{Path: p, Source: src, Target: dst, VerifiedBy: by})
	}
	// Data files first, checksums last: a checksum never stands without its file.
	sort.SliceStable(plan.Files, func(i, j int) bool {
		ci, cj := spark.IsChecksumFile(path.Base(plan.Files[i].Path)), spark.IsChecksumFile(path.Base(plan.Files[j].Path))
		if ci != cj {
			return cj
		}
		return plan.Files[i].Path < plan.Files[j].Path
	})
	return plan, nil
}

// quarantined lists the files under qdir, relative to it.
func quarantined(ctx context.Context, root storage.Store, qdir string) ([]string, error) {
	var out []string
	var visit func(dir string, depth int) error
	visit = func(dir string, depth int) error {
		if depth > 2 {
			return nil // a repair only moves files of the root, offsets/ and commits/
		}
		entries, err := root.List(ctx, joinRel(qdir, dir))
		if storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			name := joinRel(dir, e.Name)
			if e.IsDir {
				if err := visit(name, depth+1); err != nil {
					return err
				}
				continue
			}
			out = append(out, name)
		}
		return nil
	}
	if err := visit("", 0); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	if name == "" {
		return dir
	}
	return dir + "/" + name
}

func readManifest(ctx context.Context, root storage.Store, dir string) (*Manifest, error) {
	data, err := storage.ReadAll(ctx, root, dir+"/"+ManifestName, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if err := checkManifest(m); err != nil {
		return nil, err
	}
	return &m, nil
}

// ErrChanged is the cause of a restore refused because the quarantine or the checkpoint
// changed since the plan was made.
var ErrChanged = errors.New("changed since the plan was made")

// RestoreResult is what Restore put back.
type RestoreResult struct {
	Restored []string
	From     string // location of the quarantine
}

// Restore puts the files of plan back, one at a time: it checks that the quarantined copy is
// still what was planned and that nothing stands at its place, copies it, re-reads the copy in
// the checkpoint and compares its SHA-256, then removes the quarantined copy and records the
// restore. A file whose check fails stops the restore there (the error wraps ErrChanged); the
// result lists what was restored before it.
func Restore(ctx context.Context, store, backupRoot storage.Store, plan *RestorePlan, now time.Time) (*RestoreResult, error) {
	qdir := plan.Backup + "/" + QuarantineDir
	res := &RestoreResult{From: joinLocation(backupRoot.Location(), qdir)}
	fail := func(err error) (*RestoreResult, error) {
		if len(res.Restored) > 0 {
			err = fmt.Errorf("restored %d of %d files: %w", len(res.Restored), len(plan.Files), err)
		}
		return res, fmt.Errorf("restore into %s: %w", store.Location(), err)
	}
	if plan.Location != store.Location() {
		return fail(fmt.Errorf("the plan is for %s", plan.Location))
	}
	rec, err := ReadRecord(ctx, backupRoot, plan.Backup)
	if err != nil {
		return fail(err)
	}
	for _, f := range plan.Files {
		if err := checkPlannedPath(f.Path); err != nil {
			return fail(err)
		}
		src, err := Observe(ctx, backupRoot, qdir+"/"+f.Path, true)
		if err != nil {
			return fail(err)
		}
		if d := Diff([]FileState{f.Source}, []FileState{src}); len(d) > 0 {
			return fail(fmt.Errorf("the quarantined copy of %s %w: %s", f.Path, ErrChanged, changesText(d)))
		}
		dst, err := Observe(ctx, store, f.Path, false)
		if err != nil {
			return fail(err)
		}
		if !dst.Absent {
			return fail(fmt.Errorf("%s exists in the checkpoint again: %w", f.Path, ErrChanged))
		}
		size, sum, err := copyHashed(ctx, store, f.Path, backupRoot, qdir+"/"+f.Path)
		if err != nil {
			return fail(fmt.Errorf("copy %s back: %w", f.Path, err))
		}
		gotSize, got, err := hashFile(ctx, store, f.Path)
		if err != nil || size != f.Source.Size || sum != f.Source.SHA256 || gotSize != size || got != sum {
			_ = store.Delete(ctx, f.Path) // our own copy of bytes that were not planned
			if err == nil {
				err = fmt.Errorf("the copy of %s in the checkpoint does not match the quarantined file (SHA-256 differs)", f.Path)
			}
			return fail(err)
		}
		if err := backupRoot.Delete(ctx, qdir+"/"+f.Path); err != nil {
			return fail(fmt.Errorf("%s is back in the checkpoint, but removing its quarantined copy failed: %w", f.Path, err))
		}
		res.Restored = append(res.Restored, f.Path)
		marked := false
		for i := range rec.Files {
			if rec.Files[i].Path == f.Path && rec.Files[i].Restored.IsZero() {
				rec.Files[i].Restored, marked = now.UTC(), true
			}
		}
		if !marked {
			rec.Files = append(rec.Files, QuarantinedFile{Path: f.Path, Size: size, SHA256: sum, Restored: now.UTC()})
		}
	}
	if err := writeRecord(ctx, backupRoot, plan.Backup, rec); err != nil {
		return fail(err)
	}
	return res, nil
}

// BackupInfo is one backup directory, as `checkpoint backups` lists it.
type BackupInfo struct {
	Dir     string // <pipeline>/<time>
	Created time.Time
	Files   int
	Bytes   int64
	// State says whether verified.json vouches for manifest.json, or why not; Problem is the
	// text of the error that made a marker unreadable.
	State    BackupState
	Problem  string
	Verified bool
	// Quarantined counts the files in quarantine/ not restored yet.
	Quarantined int
}

// BackupState says whether a backup is verified. Each names the BackupInfo fields it uses.
type BackupState string

// The states of a backup.
const (
	// BackupVerified: verified.json vouches for manifest.json.
	BackupVerified BackupState = "verified"
	// BackupNoManifest: no manifest.json: the backup failed or is still copying.
	BackupNoManifest BackupState = "no_manifest"
	// BackupManifestUnreadable: manifest.json cannot be read (Problem).
	BackupManifestUnreadable BackupState = "manifest_unreadable"
	// BackupMarkerUnreadable: verified.json cannot be read (Problem).
	BackupMarkerUnreadable BackupState = "marker_unreadable"
	// BackupUnverified: no verified.json vouches for the manifest (the copy failed
	// verification, is running, or the manifest changed).
	BackupUnverified BackupState = "unverified"
)

// ListBackups lists the pipeline's backups, newest first. It reads each backup's manifest and
// markers, not the copies (Verify does that).
func ListBackups(ctx context.Context, root storage.Store, pipeline string) ([]BackupInfo, error) {
	if err := checkPipeline(pipeline); err != nil {
		return nil, err
	}
	dirs, err := backupDirs(ctx, root, pipeline)
	if err != nil {
		return nil, fmt.Errorf("list the backups of %s in %s: %w", pipeline, root.Location(), err)
	}
	var out []BackupInfo
	for _, d := range dirs {
		dir := pipeline + "/" + d.name
		info := BackupInfo{Dir: dir, Created: d.at}
		m, err := readManifest(ctx, root, dir)
		switch {
		case storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil:
			info.State = BackupNoManifest
		case err != nil:
			info.State, info.Problem = BackupManifestUnreadable, err.Error()
		default:
			info.Created, info.Files, info.Bytes = m.Created, m.FileCount, m.TotalBytes
			b, err := readVerified(ctx, root, dir)
			switch {
			case err != nil:
				info.State, info.Problem = BackupMarkerUnreadable, err.Error()
			case b == nil:
				info.State = BackupUnverified
			default:
				info.State, info.Verified = BackupVerified, true
			}
		}
		files, err := quarantined(ctx, root, dir+"/"+QuarantineDir)
		if err != nil {
			return nil, fmt.Errorf("list the quarantine of %s: %w", dir, err)
		}
		info.Quarantined = len(files)
		out = append(out, info)
	}
	return out, nil
}
