//go:build unix

package probe

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// lookupOwnership describes dir, or its nearest existing ancestor when dir does not exist (the
// probe directory a refused write could not create); nil when nothing can be stat'ed.
func lookupOwnership(dir string) *Ownership {
	var info os.FileInfo
	for {
		var err error
		if info, err = os.Stat(dir); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	o := &Ownership{
		Dir:        dir,
		UID:        int(st.Uid),
		GID:        int(st.Gid),
		Owner:      strconv.Itoa(int(st.Uid)),
		Group:      strconv.Itoa(int(st.Gid)),
		Mode:       info.Mode(),
		ProcUID:    os.Geteuid(),
		ProcGroups: processGroups(),
	}
	if u, err := user.LookupId(o.Owner); err == nil {
		o.Owner = u.Username
	}
	if g, err := user.LookupGroupId(o.Group); err == nil {
		o.Group = g.Name
	}
	o.CanWrite = canWrite(o)
	return o
}

// processGroups is the effective gid followed by the supplementary groups, without repeats.
func processGroups() []int {
	groups := []int{os.Getegid()}
	extra, _ := os.Getgroups()
	for _, g := range extra {
		if g != groups[0] {
			groups = append(groups, g)
		}
	}
	return groups
}

// canWrite applies the permission bits as the kernel does for creating a file in a directory
// (write and search permission), ignoring ACLs, read-only mounts and capabilities other than
// root's.
func canWrite(o *Ownership) bool {
	if o.ProcUID == 0 {
		return true
	}
	perm := o.Mode.Perm()
	const wx = 0o3
	switch {
	case o.ProcUID == o.UID:
		return perm>>6&wx == wx
	case slices.Contains(o.ProcGroups, o.GID):
		return perm>>3&wx == wx
	default:
		return perm&wx == wx
	}
}
