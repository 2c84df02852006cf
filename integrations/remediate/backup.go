package remediate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// The names a backup directory holds besides the copy.
const (
	ManifestName  = "manifest.json"
	VerifiedName  = "verified.json"
	QuarantineDir = "quarantine"
)

// DirTimeFormat names a backup directory after the UTC time of the backup.
const DirTimeFormat = "20060102T150405Z"

// maxManifestBytes bounds the manifest read back; a checkpoint of a million files stays below.
const maxManifestBytes = 256 << 20

// maxDepth bounds the directory walk (a symlink loop on a mount would otherwise never end).
const maxDepth = 32

// Manifest is manifest.json: what a backup holds.
type Manifest struct {
	Version    int            `json:"version"`
	Pipeline   string         `json:"pipeline"`
	Source     string         `json:"source"` // the checkpoint location
	Created    time.Time      `json:"created"`
	FileCount  int            `json:"file_count"`
	TotalBytes int64          `json:"total_bytes"`
	Files      []ManifestFile `json:"files"` // sorted by path
}

// ManifestFile is one copied file; Path is relative to the checkpoint root and to the backup
// directory alike.
type ManifestFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // lower-case hex
}

// BackupResult is a backup directory.
type BackupResult struct {
	Dir      string // relative to the backup root: <pipeline>/<time>
	Location string // the backup root's location joined with Dir, for messages
	Files    int
	Bytes    int64
	Manifest Manifest
	// Verified is true when every copied file was read back and matched the manifest, and
	// verified.json records that.
	Verified bool
	Took     time.Duration
	// Vanished are files that were listed but gone when they were copied (a running query
	// purges old batches); they are not in the manifest.
	Vanished []string
}

// verifiedMarker is verified.json. It names the manifest it vouches for by hash, so a manifest
// changed afterwards no longer counts as verified.
type verifiedMarker struct {
	Version        int    `json:"version"`
	ManifestSHA256 string `json:"manifest_sha256"`
	Files          int    `json:"files"`
	Bytes          int64  `json:"bytes"`
}

// Backup copies the checkpoint in src to <backupRoot>/<pipeline>/<now in UTC>/, writes
// manifest.json, re-reads every copy and compares it with the manifest, and writes
// verified.json when all match. When a copy does not match, the result has Verified false and
// the error is a *VerifyError naming the files.
func Backup(ctx context.Context, src storage.Store, backupRoot storage.Store, pipeline string, now time.Time) (*BackupResult, error) {
	started := time.Now()
	fail := func(err error) error {
		return fmt.Errorf("back up %s to %s: %w", src.Location(), backupRoot.Location(), err)
	}
	if err := checkPipeline(pipeline); err != nil {
		return nil, fail(err)
	}
	if overlaps(src.Location(), joinLocation(backupRoot.Location(), pipeline)) {
		return nil, fail(errors.New("the backup directory and the checkpoint overlap; choose a backup location outside the checkpoint"))
	}
	files, err := walk(ctx, src)
	if err != nil {
		return nil, fail(err)
	}
	if len(files) == 0 {
		return nil, fail(fmt.Errorf("no files under %s", src.Location()))
	}
	dir, err := freeDir(ctx, backupRoot, pipeline, now)
	if err != nil {
		return nil, fail(err)
	}
	res := &BackupResult{Dir: dir, Location: joinLocation(backupRoot.Location(), dir)}

	copied := make([]*ManifestFile, len(files))
	var mu sync.Mutex
	err = forEach(ctx, len(files), func(ctx context.Context, i int) error {
		name := files[i]
		size, sum, err := copyHashed(ctx, backupRoot, dir+"/"+name, src, name)
		if storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil && isSourceError(err, name) {
			mu.Lock()
			res.Vanished = append(res.Vanished, name)
			mu.Unlock()
			return nil
		}
		if err != nil {
			return fmt.Errorf("copy %s: %w", name, err)
		}
		copied[i] = &ManifestFile{Path: name, Size: size, SHA256: sum}
		return nil
	})
	if err != nil {
		return nil, fail(fmt.Errorf("%w (the partial copy is in %s)", err, res.Location))
	}
	sort.Strings(res.Vanished)

	m := Manifest{Version: 1, Pipeline: pipeline, Source: src.Location(), Created: now.UTC()}
	for _, f := range copied {
		if f != nil {
			m.Files = append(m.Files, *f)
			m.TotalBytes += f.Size
		}
	}
	m.FileCount = len(m.Files)
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fail(err)
	}
	if err := backupRoot.Write(ctx, dir+"/"+ManifestName, strings.NewReader(string(data))); err != nil {
		return nil, fail(fmt.Errorf("write the manifest: %w", err))
	}
	res.Manifest, res.Files, res.Bytes = m, m.FileCount, m.TotalBytes

	v, err := Verify(ctx, backupRoot, dir)
	res.Took = time.Since(started)
	if err != nil {
		return res, fail(err)
	}
	marker, _ := json.Marshal(verifiedMarker{Version: 1, ManifestSHA256: v.manifestSHA256, Files: m.FileCount, Bytes: m.TotalBytes})
	if err := backupRoot.Write(ctx, dir+"/"+VerifiedName, strings.NewReader(string(marker))); err != nil {
		return res, fail(fmt.Errorf("the copy matches its manifest, but writing %s failed: %w", VerifiedName, err))
	}
	res.Verified = true
	res.Took = time.Since(started)
	return res, nil
}

// isSourceError reports whether a copy error came from reading the source file (rather than
// from the backup store), so that a vanished source file is not mistaken for a backup failure.
func isSourceError(err error, name string) bool {
	var se *storage.Error
	return errors.As(err, &se) && se.Op == "read" && se.Path == name
}

// reserved are the names a backup directory uses besides the copy.
var reserved = map[string]bool{ManifestName: true, VerifiedName: true, QuarantineDir: true, RecordName: true}

// walk lists every file under the checkpoint root, except the probe directory.
func walk(ctx context.Context, src storage.Store) ([]string, error) {
	var files []string
	var visit func(dir string, depth int) error
	visit = func(dir string, depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("list %s: deeper than %d directories (a symlink loop?)", dir, maxDepth)
		}
		entries, err := src.List(ctx, dir)
		if err != nil {
			if dir == "" && storage.Class(err) == storage.ClassNotFound {
				return fmt.Errorf("no checkpoint at %s: %w", src.Location(), err)
			}
			return err
		}
		for _, e := range entries {
			name := e.Name
			if dir != "" {
				name = dir + "/" + e.Name
			}
			if dir == "" && e.Name == probeDir {
				continue
			}
			if dir == "" && reserved[e.Name] {
				return fmt.Errorf("the checkpoint root holds %s, a name the backup layout reserves; move it out of the checkpoint first", e.Name)
			}
			if e.IsDir {
				if err := visit(name, depth+1); err != nil {
					return err
				}
				continue
			}
			files = append(files, name)
		}
		return nil
	}
	if err := visit("", 0); err != nil {
		return nil, err
	}
	return files, nil
}

// freeDir returns <pipeline>/<time>, or <pipeline>/<time>-<n> when that is taken.
func freeDir(ctx context.Context, root storage.Store, pipeline string, now time.Time) (string, error) {
	base := pipeline + "/" + now.UTC().Format(DirTimeFormat)
	for n := 1; n <= 100; n++ {
		dir := base
		if n > 1 {
			dir = fmt.Sprintf("%s-%d", base, n)
		}
		_, err := root.Stat(ctx, dir)
		if storage.Class(err) == storage.ClassNotFound {
			return dir, nil
		}
		if err != nil {
			return "", fmt.Errorf("check that %s is free: %w", dir, err)
		}
	}
	return "", fmt.Errorf("%s and 99 more backup directories of the same second already exist", base)
}

// Verification is what Verify found.
type Verification struct {
	Dir        string
	Manifest   Manifest
	Mismatches []Mismatch // sorted by path; empty when the copy matches

	manifestSHA256 string
}

// Mismatch is a backed-up file that does not match the manifest.
type Mismatch struct {
	Path    string
	Problem string // "missing", "size 120, manifest says 121", "SHA-256 differs from the manifest"
}

// VerifyError is a backup whose copy does not match its manifest.
type VerifyError struct {
	Dir        string
	Mismatches []Mismatch
}

func (e *VerifyError) Error() string {
	first := e.Mismatches[0]
	msg := fmt.Sprintf("backup %s does not match its manifest: %s: %s", e.Dir, first.Path, first.Problem)
	if n := len(e.Mismatches) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return msg
}

// Verify re-reads every file the manifest of backup directory dir lists and compares its size
// and SHA-256. A copy that differs or is missing makes the error a *VerifyError; other errors
// are storage failures (keeping their class) or an unreadable manifest.
func Verify(ctx context.Context, backupRoot storage.Store, dir string) (*Verification, error) {
	fail := func(err error) error {
		return fmt.Errorf("verify backup %s: %w", joinLocation(backupRoot.Location(), dir), err)
	}
	data, err := storage.ReadAll(ctx, backupRoot, dir+"/"+ManifestName, maxManifestBytes)
	if err != nil {
		return nil, fail(fmt.Errorf("read the manifest: %w", err))
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fail(fmt.Errorf("parse %s: %w", ManifestName, err))
	}
	if err := checkManifest(m); err != nil {
		return nil, fail(err)
	}
	v := &Verification{Dir: dir, Manifest: m, manifestSHA256: hashBytes(data)}
	var mu sync.Mutex
	err = forEach(ctx, len(m.Files), func(ctx context.Context, i int) error {
		f := m.Files[i]
		size, sum, err := hashFile(ctx, backupRoot, dir+"/"+f.Path)
		problem := ""
		switch {
		case storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil:
			problem = "missing"
		case err != nil:
			return fmt.Errorf("read the copy of %s: %w", f.Path, err)
		case size != f.Size:
			problem = fmt.Sprintf("size %d, manifest says %d", size, f.Size)
		case sum != f.SHA256:
			problem = "SHA-256 differs from the manifest"
		}
		if problem != "" {
			mu.Lock()
			v.Mismatches = append(v.Mismatches, Mismatch{Path: f.Path, Problem: problem})
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return nil, fail(err)
	}
	if len(v.Mismatches) > 0 {
		sort.Slice(v.Mismatches, func(i, j int) bool { return v.Mismatches[i].Path < v.Mismatches[j].Path })
		return v, &VerifyError{Dir: joinLocation(backupRoot.Location(), dir), Mismatches: v.Mismatches}
	}
	return v, nil
}

// checkManifest refuses a manifest whose totals disagree with its list or whose paths would
// leave the backup directory.
func checkManifest(m Manifest) error {
	var total int64
	for _, f := range m.Files {
		if f.Path == "" || path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || strings.HasPrefix(f.Path, "../") || f.Path == ".." {
			return fmt.Errorf("%s lists an invalid path %q", ManifestName, f.Path)
		}
		if top, _, _ := strings.Cut(f.Path, "/"); reserved[top] {
			return fmt.Errorf("%s lists %q, a reserved name", ManifestName, f.Path)
		}
		total += f.Size
	}
	if m.FileCount != len(m.Files) || m.TotalBytes != total {
		return fmt.Errorf("%s says %d files and %d bytes but lists %d files and %d bytes", ManifestName, m.FileCount, m.TotalBytes, len(m.Files), total)
	}
	return nil
}

var backupDirName = regexp.MustCompile(`^(\d{8}T\d{6}Z)(?:-(\d+))?$`)

// backupDir is a backup directory's name, <time> or <time>-<n>, and what it says.
type backupDir struct {
	name string
	at   time.Time
	n    int
}

// backupDirs lists the pipeline's backup directories, newest first; none when the pipeline has
// no folder yet.
func backupDirs(ctx context.Context, root storage.Store, pipeline string) ([]backupDir, error) {
	entries, err := storage.ListNames(ctx, root, pipeline)
	if storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var dirs []backupDir
	for _, e := range entries {
		sm := backupDirName.FindStringSubmatch(e.Name)
		if !e.IsDir || sm == nil {
			continue
		}
		at, err := time.Parse(DirTimeFormat, sm[1])
		if err != nil {
			continue
		}
		n := 1
		if sm[2] != "" {
			n, _ = strconv.Atoi(sm[2])
		}
		dirs = append(dirs, backupDir{e.Name, at, n})
	}
	sort.Slice(dirs, func(i, j int) bool {
		if !dirs[i].at.Equal(dirs[j].at) {
			return dirs[i].at.After(dirs[j].at)
		}
		return dirs[i].n > dirs[j].n
	})
	return dirs, nil
}

// LatestBackup returns the newest verified backup of the pipeline: the newest directory whose
// verified.json vouches for its manifest.json. It does not re-read the copy (Verify does). It
// returns nil and no error when the pipeline has no verified backup.
func LatestBackup(ctx context.Context, backupRoot storage.Store, pipeline string) (*BackupResult, error) {
	fail := func(err error) error {
		return fmt.Errorf("find the latest backup of %s in %s: %w", pipeline, backupRoot.Location(), err)
	}
	if err := checkPipeline(pipeline); err != nil {
		return nil, fail(err)
	}
	cands, err := backupDirs(ctx, backupRoot, pipeline)
	if err != nil {
		return nil, fail(err)
	}
	for _, c := range cands {
		dir := pipeline + "/" + c.name
		b, err := readVerified(ctx, backupRoot, dir)
		if err != nil {
			return nil, fail(err)
		}
		if b != nil {
			return b, nil
		}
	}
	return nil, nil
}

// readVerified returns the backup in dir when verified.json vouches for its manifest, nil
// when it does not (no marker: the backup failed or is in progress).
func readVerified(ctx context.Context, root storage.Store, dir string) (*BackupResult, error) {
	markerData, err := storage.ReadAll(ctx, root, dir+"/"+VerifiedName, 1<<20)
	if storage.Class(err) == storage.ClassNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var marker verifiedMarker
	if err := json.Unmarshal(markerData, &marker); err != nil || marker.ManifestSHA256 == "" {
		return nil, nil
	}
	data, err := storage.ReadAll(ctx, root, dir+"/"+ManifestName, maxManifestBytes)
	if storage.Class(err) == storage.ClassNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if hashBytes(data) != marker.ManifestSHA256 {
		return nil, nil
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil || checkManifest(m) != nil {
		return nil, nil
	}
	return &BackupResult{Dir: dir, Location: joinLocation(root.Location(), dir), Files: m.FileCount,
		Bytes: m.TotalBytes, Manifest: m, Verified: true}, nil
}
