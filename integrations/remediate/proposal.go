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

// Diff says, one sentence a file, how got differs from want (matched by path); nil when they
// are the same files in the same state.
func Diff(want, got []FileState) []string {
	byPath := map[string]FileState{}
	for _, f := range got {
		byPath[f.Path] = f
	}
	var out []string
	for _, w := range want {
		g, ok := byPath[w.Path]
		delete(byPath, w.Path)
		switch {
		case !ok:
			out = append(out, w.Path+": no longer looked at")
		case w.Absent && !g.Absent:
			out = append(out, fmt.Sprintf("%s: did not exist, now exists (%s, modified %s)", w.Path, human.Bytes(g.Size), human.StampMilli(g.ModTime)))
		case !w.Absent && g.Absent:
			out = append(out, w.Path+": gone")
		case w.Absent:
		default:
			var what []string
			if w.Size != g.Size {
				what = append(what, fmt.Sprintf("size %d → %d bytes", w.Size, g.Size))
			}
			if !w.ModTime.Equal(g.ModTime) {
				what = append(what, fmt.Sprintf("modified %s → %s", human.StampMilli(w.ModTime), human.StampMilli(g.ModTime)))
			}
			if w.ETag != g.ETag {
				what = append(what, fmt.Sprintf("ETag %s → %s", w.ETag, g.ETag))
			}
			if w.SHA256 != "" && g.SHA256 != "" && w.SHA256 != g.SHA256 {
				what = append(what, fmt.Sprintf("SHA-256 %.12s… → %.12s…", w.SHA256, g.SHA256))
			}
			if len(what) > 0 {
				out = append(out, w.Path+": "+strings.Join(what, ", "))
			}
		}
	}
	rest := make([]string, 0, len(byPath))
	for p := range byPath {
		rest = append(rest, p)
	}
	sort.Strings(rest)
	for _, p := range rest {
		out = append(out, p+": not in the plan that was shown, now part of it")
	}
	return out
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
