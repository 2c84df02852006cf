package remediate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
	"github.com/streamwatch/streamwatch/internal/human"
)

// FileState is one file as a dry run saw it: what a confirmation must find unchanged.
type FileState struct {
	Path    string    `json:"path"`
	Absent  bool      `json:"absent,omitempty"` // the file did not exist (a restore's target)
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime,omitzero"`
	ETag    string    `json:"etag,omitempty"` // S3 objects
	SHA256  string    `json:"sha256,omitempty"`
}

// Observe reads one file's state: its listing (size, modification time, ETag) and, with hash,
// the SHA-256 of its content. A file that does not exist is Absent, not an error.
func Observe(ctx context.Context, store storage.Store, name string, hash bool) (FileState, error) {
	st, err := store.Stat(ctx, name)
	if storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil {
		return FileState{Path: name, Absent: true}, nil
	}
	if err != nil {
		return FileState{}, err
	}
	if st.IsDir {
		return FileState{}, fmt.Errorf("%s is a directory", name)
	}
	f := FileState{Path: name, Size: st.Size, ModTime: st.ModTime.UTC(), ETag: st.ETag}
	if hash {
		size, sum, err := hashFile(ctx, store, name)
		if storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil {
			return FileState{Path: name, Absent: true}, nil
		}
		if err != nil {
			return FileState{}, err
		}
		f.Size, f.SHA256 = size, sum
	}
	return f, nil
}

// Digest is the SHA-256 of a list of file states, independent of their order: two dry runs
// with the same digest saw the same files, byte for byte.
func Digest(files []FileState) string {
	lines := make([]string, len(files))
	for i, f := range files {
		lines[i] = strings.Join([]string{f.Path, strconv.FormatBool(f.Absent), strconv.FormatInt(f.Size, 10),
			strconv.FormatInt(f.ModTime.UnixNano(), 10), f.ETag, f.SHA256}, "\x00")
	}
	sort.Strings(lines)
	h := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(h[:])
}

// ChangeCode says how a file differs from what a dry run saw. Each names the FileChange
// fields it uses besides Path.
type ChangeCode string

// The changes of a file since a dry run.
const (
	// ChangeUnseen: the file was in the plan and is no longer looked at.
	ChangeUnseen ChangeCode = "unseen"
	// ChangeAppeared: the file did not exist and now exists (Now: its size and modification
	// time).
	ChangeAppeared ChangeCode = "appeared"
	// ChangeGone: the file existed and is gone.
	ChangeGone ChangeCode = "gone"
	// ChangeModified: the Fields of the file differ between Was and Now.
	ChangeModified ChangeCode = "modified"
	// ChangeAdded: the file was not in the plan that was shown and is now part of it.
	ChangeAdded ChangeCode = "added"
)

// FileField is one part of a file's state a change compares.
type FileField string

// The parts of a file's state, in the order a change lists them.
const (
	FieldSize    FileField = "size"
	FieldModTime FileField = "mtime"
	FieldETag    FileField = "etag"
	FieldSHA256  FileField = "sha256" // compared only when both states have one
)

// FileChange is how one file differs from what a dry run saw: commands words it.
type FileChange struct {
	Path    string
	Code    ChangeCode
	Was     FileState // the dry run's
	Now     FileState // the file's now
	Changed []FileField
}

// Diff lists, one change a file, how got differs from want (matched by path); nil when they
// are the same files in the same state.
func Diff(want, got []FileState) []FileChange {
	byPath := map[string]FileState{}
	for _, f := range got {
		byPath[f.Path] = f
	}
	var out []FileChange
	for _, w := range want {
		g, ok := byPath[w.Path]
		delete(byPath, w.Path)
		c := FileChange{Path: w.Path, Was: w, Now: g}
		switch {
		case !ok:
			c.Code = ChangeUnseen
		case w.Absent && !g.Absent:
			c.Code = ChangeAppeared
		case !w.Absent && g.Absent:
			c.Code = ChangeGone
		case w.Absent:
			continue
		default:
			if w.Size != g.Size {
				c.Changed = append(c.Changed, FieldSize)
			}
			if !w.ModTime.Equal(g.ModTime) {
				c.Changed = append(c.Changed, FieldModTime)
			}
			if w.ETag != g.ETag {
				c.Changed = append(c.Changed, FieldETag)
			}
			if w.SHA256 != "" && g.SHA256 != "" && w.SHA256 != g.SHA256 {
				c.Changed = append(c.Changed, FieldSHA256)
			}
			if len(c.Changed) == 0 {
				continue
			}
			c.Code = ChangeModified
		}
		out = append(out, c)
	}
	rest := make([]string, 0, len(byPath))
	for p := range byPath {
		rest = append(rest, p)
	}
	sort.Strings(rest)
	for _, p := range rest {
		out = append(out, FileChange{Path: p, Code: ChangeAdded, Now: byPath[p]})
	}
	return out
}

// changesText words changes for an error (Restore's ErrChanged), which compares a quarantined
// copy with itself, so only gone or modified: "offsets/8: gone", "offsets/8: size 0 → 312
// bytes, modified … → …".
func changesText(changes []FileChange) string {
	lines := make([]string, len(changes))
	for i, c := range changes {
		if c.Code != ChangeModified {
			lines[i] = c.Path + ": " + string(c.Code)
			continue
		}
		what := make([]string, len(c.Changed))
		for j, f := range c.Changed {
			switch f {
			case FieldSize:
				what[j] = fmt.Sprintf("size %d → %d bytes", c.Was.Size, c.Now.Size)
			case FieldModTime:
				what[j] = fmt.Sprintf("modified %s → %s", human.StampMilli(c.Was.ModTime), human.StampMilli(c.Now.ModTime))
			case FieldETag:
				what[j] = fmt.Sprintf("ETag %s → %s", c.Was.ETag, c.Now.ETag)
			case FieldSHA256:
				what[j] = fmt.Sprintf("SHA-256 %.12s… → %.12s…", c.Was.SHA256, c.Now.SHA256)
			}
		}
		lines[i] = c.Path + ": " + strings.Join(what, ", ")
	}
	return strings.Join(lines, "; ")
}

// Activity is a sign that a query is running: a checkpoint file written recently.
type Activity struct {
	Path string
	At   time.Time
}

// RecentActivity returns the newest file of offsets/ and of commits/ (batch, checksum or
// temp file) when it was written after since: a running query writes there every batch.
func RecentActivity(ctx context.Context, store storage.Store, since time.Time) ([]Activity, error) {
	var out []Activity
	for _, dir := range []string{"offsets", "commits"} {
		entries, err := store.List(ctx, dir)
		if storage.Class(err) == storage.ClassNotFound && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("look for recent writes in %s/: %w", dir, err)
		}
		var newest storage.Entry
		for _, e := range entries {
			if !e.IsDir && e.ModTime.After(newest.ModTime) {
				newest = e
			}
		}
		if newest.Name != "" && newest.ModTime.After(since) {
			out = append(out, Activity{Path: dir + "/" + newest.Name, At: newest.ModTime})
		}
	}
	return out, nil
}
