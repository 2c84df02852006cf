package remediate

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

// ErrStalePlan is the cause of a Quarantine refused because a planned file changed since the
// plan was made.
var ErrStalePlan = errors.New("the checkpoint changed since the plan was made; plan again")

// QuarantineResult is what Quarantine moved.
type QuarantineResult struct {
	Moved       []PlanFile
	Destination string // location of <backup>/quarantine
}

// Quarantine moves every file of plan out of the checkpoint in store into
// <backup.Dir>/quarantine/<path> in backupRoot. It first checks every file (still there, the
// planned size and SHA-256, no file at its destination) and moves nothing when one differs
// (the error wraps ErrStalePlan); it also re-plans with the plan's clock and refuses a file the
// fresh plan does not hold the same. Each move copies, re-reads the copy and compares its SHA-256,
// and only then deletes the original; nothing is deleted without a verified copy. On a failure
// part way, the result lists what was moved and the error names the file that stays.
func Quarantine(ctx context.Context, store storage.Store, backupRoot storage.Store, backup *BackupResult, plan *Plan) (*QuarantineResult, error) {
	fail := func(err error) error {
		return fmt.Errorf("quarantine files of %s: %w", store.Location(), err)
	}
	switch {
	case plan == nil:
		return nil, fail(errors.New("no plan"))
	case backup == nil:
		return nil, fail(errors.New("no backup: take a verified backup first"))
	case !backup.Verified:
		return nil, fail(fmt.Errorf("backup %s is not verified", backup.Location))
	case backup.Manifest.Source != store.Location():
		return nil, fail(fmt.Errorf("backup %s is of %s, not of this checkpoint", backup.Location, backup.Manifest.Source))
	case plan.Location != store.Location():
		return nil, fail(fmt.Errorf("the plan is for %s, not for this checkpoint", plan.Location))
	}
	dest := backup.Dir + "/" + QuarantineDir
	res := &QuarantineResult{Destination: joinLocation(backupRoot.Location(), dest)}
	if len(plan.Files) == 0 {
		return res, nil
	}

	// Checksums first: a data file left without its checksum is still read; a checksum left
	// without its file blocks Spark from writing the file again.
	files := append([]PlanFile(nil), plan.Files...)
	sort.SliceStable(files, func(i, j int) bool {
		ci, cj := spark.IsChecksumFile(path.Base(files[i].Path)), spark.IsChecksumFile(path.Base(files[j].Path))
		if ci != cj {
			return ci
		}
		return files[i].Path < files[j].Path
	})

	seen := map[string]bool{}
	for _, f := range files {
		if err := checkPlannedPath(f.Path); err != nil {
			return nil, fail(err)
		}
		if seen[f.Path] {
			return nil, fail(fmt.Errorf("the plan lists %s twice", f.Path))
		}
		seen[f.Path] = true
		if err := recheck(ctx, store, f); err != nil {
			return nil, fail(err)
		}
		target := dest + "/" + f.Path
		_, err := backupRoot.Stat(ctx, target)
		if err == nil {
			return nil, fail(fmt.Errorf("%s already exists in the backup; take a new backup for this repair", joinLocation(backupRoot.Location(), target)))
		}
		if storage.Class(err) != storage.ClassNotFound || ctx.Err() != nil {
			return nil, fail(fmt.Errorf("check %s in the backup: %w", target, err))
		}
	}

	// A file may be unchanged and still no longer one to move (the query ran on, or the plan
	// was not made by PlanRepair): the plan must still be what PlanRepair says, at its clock.
	fresh, err := PlanRepair(ctx, store, plan.At)
	if err != nil {
		return nil, fail(fmt.Errorf("check the plan against the checkpoint: %w", err))
	}
	current := map[string]PlanFile{}
	for _, f := range fresh.Files {
		current[f.Path] = f
	}
	for _, f := range files {
		if g, ok := current[f.Path]; !ok || g.Size != f.Size || g.SHA256 != f.SHA256 {
			return nil, fail(fmt.Errorf("%s is not a file a repair may move now: %w", f.Path, ErrStalePlan))
		}
	}

	for _, f := range files {
		if err := move(ctx, store, backupRoot, dest+"/"+f.Path, f); err != nil {
			err = fmt.Errorf("moved %d of %d files; %s stays in the checkpoint: %w", len(res.Moved), len(files), f.Path, err)
			if rerr := recordQuarantined(ctx, backupRoot, backup.Dir, res.Moved, time.Now()); rerr != nil {
				err = fmt.Errorf("%w (and the quarantine record was not updated: %v)", err, rerr)
			}
			return res, fail(err)
		}
		res.Moved = append(res.Moved, f)
	}
	// The record is the quarantine's manifest: restore verifies each file against it.
	if err := recordQuarantined(ctx, backupRoot, backup.Dir, res.Moved, time.Now()); err != nil {
		return res, fail(fmt.Errorf("the files were moved, but %w", err))
	}
	return res, nil
}

// recheck confirms that a planned file still holds what was planned.
func recheck(ctx context.Context, store storage.Store, f PlanFile) error {
	st, err := store.Stat(ctx, f.Path)
	if storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil {
		return fmt.Errorf("%s is gone: %w", f.Path, ErrStalePlan)
	}
	if err != nil {
		return fmt.Errorf("check %s: %w", f.Path, err)
	}
	if st.IsDir {
		return fmt.Errorf("%s is now a directory: %w", f.Path, ErrStalePlan)
	}
	if st.Size != f.Size {
		return fmt.Errorf("%s now holds %d bytes, the plan saw %d: %w", f.Path, st.Size, f.Size, ErrStalePlan)
	}
	if f.SHA256 == "" {
		return nil
	}
	_, sum, err := hashFile(ctx, store, f.Path)
	if err != nil {
		return fmt.Errorf("check %s: %w", f.Path, err)
	}
	if sum != f.SHA256 {
		return fmt.Errorf("%s changed content since the plan (same size, different SHA-256): %w", f.Path, ErrStalePlan)
	}
	return nil
}

// move copies one file into the quarantine, verifies the copy and deletes the original.
func move(ctx context.Context, store, backupRoot storage.Store, target string, f PlanFile) error {
	size, sum, err := copyHashed(ctx, backupRoot, target, store, f.Path)
	if err != nil {
		return fmt.Errorf("copy to the quarantine: %w", err)
	}
	want := f.SHA256
	if want == "" {
		want = sum
	}
	if size != f.Size || sum != want {
		_ = backupRoot.Delete(ctx, target) // our own copy of bytes that were not planned
		return fmt.Errorf("%s changed while it was copied: %w", f.Path, ErrStalePlan)
	}
	gotSize, got, err := hashFile(ctx, backupRoot, target)
	if err != nil {
		return fmt.Errorf("read back the quarantined copy: %w", err)
	}
	if gotSize != size || got != sum {
		_ = backupRoot.Delete(ctx, target)
		return fmt.Errorf("the quarantined copy %s does not match the original (SHA-256 differs)", target)
	}
	if err := store.Delete(ctx, f.Path); err != nil {
		_ = backupRoot.Delete(ctx, target) // the original stays, so a retry finds the way free
		return fmt.Errorf("remove the original after copying it: %w", err)
	}
	return nil
}
