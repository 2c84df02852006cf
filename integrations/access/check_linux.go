//go:build linux

package access

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Check judges whether u may create files in the checkpoint at dir (a local path) and in its
// offsets/, commits/ and state/ folders, without writing anything.
func Check(dir string, u User) Report {
	r := Report{Location: dir, User: u}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		cause := errors.Unwrap(err)
		if cause == nil {
			cause = err
		}
		r.Err = fmt.Errorf("cannot resolve %s: %w", dir, cause).Error()
		return r
	}
	root, err := readDir(real)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	var ancestors []Dir
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		a, err := readDir(p)
		if err != nil {
			r.Err = err.Error()
			return r
		}
		ancestors = append([]Dir{a}, ancestors...)
		if p == filepath.Dir(p) {
			break
		}
	}
	dirs := []DirJudgment{{Dir: root}}
	for _, name := range SparkDirs {
		d, err := readDir(filepath.Join(real, name))
		if errors.Is(err, os.ErrNotExist) {
			continue // Spark creates it in the location when it needs it
		}
		if err != nil {
			r.Err = err.Error()
			return r
		}
		dirs = append(dirs, DirJudgment{Name: name + "/", Dir: d})
	}
	// Reaching offsets/ takes search permission on the location itself.
	judge(&r, ancestors, dirs)
	return r
}

// readDir reads what the kernel looks at: stat, the access ACL, the mount's flags and the
// inode's flags. None of it writes.
func readDir(path string) (Dir, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Dir{}, fmt.Errorf("stat %s: %w", path, unwrapPath(err))
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || !info.IsDir() {
		return Dir{}, fmt.Errorf("%s is not a directory", path)
	}
	d := Dir{Path: path, UID: int(st.Uid), GID: int(st.Gid), Mode: info.Mode(),
		Owner: strconv.Itoa(int(st.Uid)), Group: strconv.Itoa(int(st.Gid))}
	if u, err := user.LookupId(d.Owner); err == nil {
		d.Owner = u.Username
	}
	if g, err := user.LookupGroupId(d.Group); err == nil {
		d.Group = g.Name
	}
	acl, err := readACL(path)
	if err != nil {
		return Dir{}, err
	}
	d.ACL = acl
	var fsst unix.Statfs_t
	if err := unix.Statfs(path, &fsst); err != nil {
		return Dir{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	d.ReadOnlyMount = fsst.Flags&unix.ST_RDONLY != 0
	d.Immutable = immutable(path)
	return d, nil
}

// readACL reads system.posix_acl_access; nil when the directory has none or the filesystem
// has no ACLs.
func readACL(path string) (ACL, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Getxattr(path, "system.posix_acl_access", buf)
		switch {
		case errors.Is(err, unix.ERANGE):
			buf = make([]byte, 2*len(buf))
			continue
		case errors.Is(err, unix.ENODATA), errors.Is(err, unix.EOPNOTSUPP):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("read the ACL of %s: %w", path, err)
		}
		acl, err := ParseACL(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("read the ACL of %s: %w", path, err)
		}
		return acl, nil
	}
}

// immutable reads the inode flags (FS_IOC_GETFLAGS); a directory streamwatch cannot open, or a
// filesystem without the ioctl, counts as not immutable.
func immutable(path string) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	return err == nil && flags&fsImmutableFL != 0
}

// fsImmutableFL is FS_IMMUTABLE_FL (include/uapi/linux/fs.h), which x/sys/unix does not name.
const fsImmutableFL = 0x00000010

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Self is the calling process's own user: its effective uid, effective gid and supplementary
// groups.
func Self() User {
	u := User{UID: os.Geteuid(), GIDs: []int{os.Getegid()}, Whose: "streamwatch's own"}
	extra, _ := os.Getgroups()
	for _, g := range extra {
		if !u.inGroup(g) {
			u.GIDs = append(u.GIDs, g)
		}
	}
	return u
}
