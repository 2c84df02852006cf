package storage

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// localStore is a directory on a local or mounted filesystem. Every call runs the system calls
// in a goroutine and stops waiting when the context ends, because a hung NFS or FUSE mount can
// block a system call forever; the goroutine then finishes (or not) on its own.
type localStore struct {
	location string
	root     string
}

func newLocal(location, root string) *localStore {
	return &localStore{location: location, root: filepath.Clean(root)}
}

func (s *localStore) Location() string { return s.location }

// display is the name used in error messages.
func (s *localStore) display(name string) string {
	if name == "" {
		return s.location
	}
	return name
}

func (s *localStore) List(ctx context.Context, dir string) ([]Entry, error) {
	name, err := cleanName(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Class: ClassOther, Err: err}
	}
	entries, err := guard(ctx, func() ([]Entry, error) { return listDir(localPath(s.root, name)) }, nil)
	if err != nil {
		return nil, wrap("list", s.display(name), err)
	}
	return entries, nil
}

// ListNames is List without a stat per entry: the directory entry types say which are
// directories (ReadDir stats only where the filesystem does not report types).
func (s *localStore) ListNames(ctx context.Context, dir string) ([]Entry, error) {
	name, err := cleanName(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Class: ClassOther, Err: err}
	}
	entries, err := guard(ctx, func() ([]Entry, error) {
		full := localPath(s.root, name)
		f, err := os.Open(full)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		des, err := f.ReadDir(-1) // unsorted: sorting tens of thousands of names is not free
		if err != nil {
			return nil, err
		}
		entries := make([]Entry, len(des))
		for i, de := range des {
			isDir := de.IsDir()
			if de.Type()&fs.ModeSymlink != 0 {
				if target, err := os.Stat(filepath.Join(full, de.Name())); err == nil {
					isDir = target.IsDir()
				}
			}
			entries[i] = Entry{Name: de.Name(), IsDir: isDir}
		}
		return entries, nil
	}, nil)
	if err != nil {
		return nil, wrap("list", s.display(name), err)
	}
	return entries, nil
}

func listDir(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, 0, len(des))
	for _, de := range des {
		info, err := de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // renamed or deleted since the directory was read
		}
		if err != nil {
			return nil, err
		}
		if de.Type()&fs.ModeSymlink != 0 {
			if target, err := os.Stat(filepath.Join(dir, de.Name())); err == nil {
				info = target
			}
		}
		entries = append(entries, Entry{Name: de.Name(), Size: info.Size(), ModTime: info.ModTime(), IsDir: info.IsDir()})
	}
	return entries, nil
}

func (s *localStore) Stat(ctx context.Context, name string) (Entry, error) {
	clean, err := cleanName(name)
	if err != nil {
		return Entry{}, &Error{Op: "stat", Path: name, Class: ClassOther, Err: err}
	}
	info, err := guard(ctx, func() (fs.FileInfo, error) { return os.Stat(localPath(s.root, clean)) }, nil)
	if err != nil {
		return Entry{}, wrap("stat", s.display(clean), err)
	}
	return Entry{Name: info.Name(), Size: info.Size(), ModTime: info.ModTime(), IsDir: info.IsDir()}, nil
}

func (s *localStore) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	clean, err := cleanName(name)
	if err != nil {
		return nil, &Error{Op: "read", Path: name, Class: ClassOther, Err: err}
	}
	f, err := guard(ctx, func() (*os.File, error) {
		f, err := os.Open(localPath(s.root, clean))
		if err != nil {
			return nil, err
		}
		if info, err := f.Stat(); err == nil && info.IsDir() {
			f.Close()
			return nil, errors.New("is a directory")
		}
		return f, nil
	}, func(f *os.File) {
		if f != nil {
			f.Close()
		}
	})
	if err != nil {
		return nil, wrap("read", s.display(clean), err)
	}
	return &localReader{ctx: ctx, f: f, name: clean}, nil
}

// localReader stops reading once the context has ended.
type localReader struct {
	ctx  context.Context
	f    *os.File
	name string
}

func (r *localReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, wrap("read", r.name, err)
	}
	n, err := r.f.Read(p)
	if err != nil && err != io.EOF {
		return n, wrap("read", r.name, err)
	}
	return n, err
}

func (r *localReader) Close() error { return r.f.Close() }

func (s *localStore) Write(ctx context.Context, name string, r io.Reader) error {
	clean, err := fileName("write", name)
	if err != nil {
		return err
	}
	_, err = guard(ctx, func() (struct{}, error) { return struct{}{}, writeAtomic(localPath(s.root, clean), r) }, nil)
	return wrap("write", clean, err)
}

// writeAtomic writes a hidden temp file beside the target and renames it, as Spark does.
func writeAtomic(target string, r io.Reader) (err error) {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, r); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), target)
}

func (s *localStore) Delete(ctx context.Context, name string) error {
	clean, err := fileName("delete", name)
	if err != nil {
		return err
	}
	_, err = guard(ctx, func() (struct{}, error) { return struct{}{}, os.Remove(localPath(s.root, clean)) }, nil)
	return wrap("delete", clean, err)
}

func (s *localStore) Rename(ctx context.Context, from, to string) error {
	cf, ct, what, err := renameNames(from, to)
	if err != nil {
		return err
	}
	_, err = guard(ctx, func() (struct{}, error) {
		src, dst := localPath(s.root, cf), localPath(s.root, ct)
		if _, err := os.Stat(src); err != nil {
			return struct{}{}, err
		}
		// Not atomic against a concurrent writer of dst; callers move files aside, they do
		// not race Spark for the same name.
		if _, err := os.Lstat(dst); err == nil {
			return struct{}{}, fs.ErrExist
		} else if !errors.Is(err, fs.ErrNotExist) {
			return struct{}{}, err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, os.Rename(src, dst)
	}, nil)
	return wrap("rename", what, err)
}

// guard runs f and returns early when ctx ends. cleanup, if set, receives the result f
// produces after the caller stopped waiting (e.g. to close an abandoned file).
func guard[T any](ctx context.Context, f func() (T, error), cleanup func(T)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if ctx.Done() == nil {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		if cleanup != nil {
			go func() { r := <-done; cleanup(r.v) }()
		}
		return zero, ctx.Err()
	}
}
