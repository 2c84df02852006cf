package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage"
)

// MemStore is an in-memory storage.Store. Directories exist while files are under them, as
// on S3. Errors have the classes and messages of the real backends.
type MemStore struct {
	location string

	mu    sync.Mutex
	files map[string]memFile
	dirs  map[string]map[string]bool // directory ("" is the root) -> child name -> is a directory
	now   func() time.Time
}

type memFile struct {
	data    []byte
	modTime time.Time
}

// NewMemStore returns an empty store; writes are stamped with the real clock until SetClock.
func NewMemStore(location string) *MemStore {
	return &MemStore{location: location, files: map[string]memFile{}, dirs: map[string]map[string]bool{}, now: time.Now}
}

// SetClock sets the clock that stamps writes.
func (m *MemStore) SetClock(now func() time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = now
}

// Put stores a file with a given modification time.
func (m *MemStore) Put(name string, data []byte, modTime time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(path.Clean(name), data, modTime)
}

func (m *MemStore) put(name string, data []byte, modTime time.Time) {
	m.files[name] = memFile{data: append([]byte(nil), data...), modTime: modTime}
	child, isDir := name, false
	for {
		dir := path.Dir(child)
		if dir == "." {
			dir = ""
		}
		if m.dirs[dir] == nil {
			m.dirs[dir] = map[string]bool{}
		}
		m.dirs[dir][path.Base(child)] = isDir
		if dir == "" {
			return
		}
		child, isDir = dir, true
	}
}

func (m *MemStore) remove(name string) {
	delete(m.files, name)
	child := name
	for {
		dir := path.Dir(child)
		if dir == "." {
			dir = ""
		}
		delete(m.dirs[dir], path.Base(child))
		if len(m.dirs[dir]) > 0 || dir == "" {
			return
		}
		delete(m.dirs, dir)
		child = dir
	}
}

// Location implements storage.Store.
func (m *MemStore) Location() string { return m.location }

func memErr(op, name string, class storage.ErrorClass, err error) error {
	return &storage.Error{Op: op, Path: name, Class: class, Err: err}
}

func clean(op, name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", memErr(op, name, storage.ClassOther, errors.New("invalid name"))
	}
	c := path.Clean(name)
	if c == "." {
		return "", nil
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", memErr(op, name, storage.ClassOther, errors.New("invalid name: outside the location"))
	}
	return c, nil
}

// List implements storage.Store.
func (m *MemStore) List(ctx context.Context, dir string) ([]storage.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, memErr("list", dir, storage.ClassTimeout, err)
	}
	name, err := clean("list", dir)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	children, ok := m.dirs[name]
	if !ok {
		display := name
		if display == "" {
			display = m.location
		}
		return nil, memErr("list", display, storage.ClassNotFound, fs.ErrNotExist)
	}
	out := make([]storage.Entry, 0, len(children))
	for child, isDir := range children {
		e := storage.Entry{Name: child, IsDir: isDir}
		if !isDir {
			f := m.files[path.Join(name, child)]
			e.Size, e.ModTime = int64(len(f.data)), f.modTime
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Stat implements storage.Store.
func (m *MemStore) Stat(ctx context.Context, name string) (storage.Entry, error) {
	if err := ctx.Err(); err != nil {
		return storage.Entry{}, memErr("stat", name, storage.ClassTimeout, err)
	}
	c, err := clean("stat", name)
	if err != nil {
		return storage.Entry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.files[c]; ok {
		return storage.Entry{Name: path.Base(c), Size: int64(len(f.data)), ModTime: f.modTime}, nil
	}
	if _, ok := m.dirs[c]; ok {
		return storage.Entry{Name: path.Base("/" + c), IsDir: true}, nil
	}
	return storage.Entry{}, memErr("stat", c, storage.ClassNotFound, fs.ErrNotExist)
}

// Read implements storage.Store.
func (m *MemStore) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, memErr("read", name, storage.ClassTimeout, err)
	}
	c, err := clean("read", name)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[c]
	if !ok {
		return nil, memErr("read", c, storage.ClassNotFound, fs.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(f.data)), nil
}

// Write implements storage.Store.
func (m *MemStore) Write(ctx context.Context, name string, r io.Reader) error {
	if err := ctx.Err(); err != nil {
		return memErr("write", name, storage.ClassTimeout, err)
	}
	c, err := clean("write", name)
	if err != nil {
		return err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return memErr("write", c, storage.Class(err), err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.put(c, data, m.now())
	return nil
}

// Delete implements storage.Store.
func (m *MemStore) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return memErr("delete", name, storage.ClassTimeout, err)
	}
	c, err := clean("delete", name)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[c]; !ok {
		return memErr("delete", c, storage.ClassNotFound, fs.ErrNotExist)
	}
	m.remove(c)
	return nil
}

// Rename implements storage.Store.
func (m *MemStore) Rename(ctx context.Context, from, to string) error {
	what := from + " to " + to
	if err := ctx.Err(); err != nil {
		return memErr("rename", what, storage.ClassTimeout, err)
	}
	cf, err := clean("rename", from)
	if err != nil {
		return err
	}
	ct, err := clean("rename", to)
	if err != nil {
		return err
	}
	what = cf + " to " + ct
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.files[cf]
	if !ok {
		return memErr("rename", what, storage.ClassNotFound, fs.ErrNotExist)
	}
	if _, ok := m.files[ct]; ok {
		return memErr("rename", what, storage.ClassOther, fs.ErrExist)
	}
	m.remove(cf)
	m.put(ct, f.data, f.modTime)
	return nil
}

var _ storage.Store = (*MemStore)(nil)
