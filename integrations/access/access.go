// Package access decides, without writing anything, whether a user may create files in the
// directories of a local Spark checkpoint: from each directory's owner, group and mode bits,
// its POSIX access ACL (the system.posix_acl_access attribute), whether its mount is read-only
// and whether it is immutable, by the kernel's own rules (fs/namei.c acl_permission_check,
// fs/posix_acl.c posix_acl_permission): uid 0 may write wherever the mount is writable and the
// directory is not immutable; the owner is judged by the owner bits alone; otherwise the ACL,
// when it has one and its mask is not empty, then the group bits for a member of the
// directory's group, then the other bits. Reaching a directory takes search permission on every
// directory above it.
//
// For gs:// it judges from what the bucket's testIamPermissions says of streamwatch's own
// identity (gcs.go); GCS cannot say it of another principal.
//
// What it cannot see: NFS servers and FUSE daemons that decide on their own, SELinux and
// AppArmor, idmapped mounts, capabilities other than root's, and quotas or a full disk. A real
// write (the probe's write test) remains the proof.
//
// The package imports neither Slack, Redis nor the config package.
package access

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// User is whose access is judged.
type User struct {
	UID  int   `json:"uid"`
	GIDs []int `json:"gids"` // primary group first, then supplementary groups
	// Principal is a Microsoft Entra object ID, judged against ADLS Gen2 ACLs (adls.go)
	// instead of UID and GIDs.
	Principal string `json:"principal,omitempty"`
	// Whose is how replies name the user: "job_user" when the configuration says whom the
	// job runs as, "streamwatch's own" otherwise.
	Whose string `json:"whose"`
}

// String is "uid 185 groups [185] (job_user)", or "principal <object id> (job_user)".
func (u User) String() string {
	s := fmt.Sprintf("uid %d groups %v", u.UID, u.GIDs)
	if u.Principal != "" {
		s = "principal " + u.Principal
	}
	if u.Whose != "" {
		s += " (" + u.Whose + ")"
	}
	return s
}

func (u User) inGroup(gid int) bool { return slices.Contains(u.GIDs, gid) }

// Permission bits, as in mode bits and ACL entries.
const (
	PermRead  = 4
	PermWrite = 2
	PermExec  = 1
)

// ACL tags (include/uapi/linux/posix_acl.h).
const (
	TagUserObj  = 0x01
	TagUser     = 0x02
	TagGroupObj = 0x04
	TagGroup    = 0x08
	TagMask     = 0x10
	TagOther    = 0x20
)

// ACLEntry is one entry of a POSIX ACL; ID is meaningful for TagUser and TagGroup only.
type ACLEntry struct {
	Tag  int `json:"tag"`
	ID   int `json:"id"`
	Perm int `json:"perm"`
}

// ACL is a POSIX access ACL, entries in the kernel's order (by tag, then id).
type ACL []ACLEntry

// aclVersion is the version of the xattr format (POSIX_ACL_XATTR_VERSION).
const aclVersion = 2

// ParseACL decodes the value of the system.posix_acl_access attribute: a little-endian u32
// version (2) followed by 8-byte entries {u16 tag, u16 perm, u32 id}
// (include/uapi/linux/posix_acl_xattr.h). The format is eight bytes per entry and fixed by the
// kernel's ABI; no maintained pure-Go library reads it (libacl needs cgo, which the static
// build leaves out), so it is decoded here.
func ParseACL(b []byte) (ACL, error) {
	if len(b) < 4 || (len(b)-4)%8 != 0 {
		return nil, fmt.Errorf("posix acl: %d bytes is not a header and whole entries", len(b))
	}
	if v := binary.LittleEndian.Uint32(b); v != aclVersion {
		return nil, fmt.Errorf("posix acl: version %d, want %d", v, aclVersion)
	}
	var acl ACL
	for p := 4; p < len(b); p += 8 {
		e := ACLEntry{Tag: int(binary.LittleEndian.Uint16(b[p:])), Perm: int(binary.LittleEndian.Uint16(b[p+2:])),
			ID: int(int32(binary.LittleEndian.Uint32(b[p+4:])))}
		switch e.Tag {
		case TagUserObj, TagGroupObj, TagMask, TagOther:
			e.ID = -1
		case TagUser, TagGroup:
		default:
			return nil, fmt.Errorf("posix acl: unknown tag %#x", e.Tag)
		}
		acl = append(acl, e)
	}
	return acl, nil
}

// Encode is the inverse of ParseACL (tests set ACLs with it).
func (a ACL) Encode() []byte {
	b := binary.LittleEndian.AppendUint32(nil, aclVersion)
	for _, e := range a {
		id := uint32(0xffffffff)
		if e.Tag == TagUser || e.Tag == TagGroup {
			id = uint32(e.ID)
		}
		b = binary.LittleEndian.AppendUint16(b, uint16(e.Tag))
		b = binary.LittleEndian.AppendUint16(b, uint16(e.Perm))
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	return b
}

// String renders the ACL the way getfacl does, on one line: "user::rwx,user:185:rwx,group::r-x,mask::rwx,other::r-x".
func (a ACL) String() string {
	var parts []string
	for _, e := range a {
		var tag string
		switch e.Tag {
		case TagUserObj:
			tag = "user::"
		case TagUser:
			tag = "user:" + strconv.Itoa(e.ID) + ":"
		case TagGroupObj:
			tag = "group::"
		case TagGroup:
			tag = "group:" + strconv.Itoa(e.ID) + ":"
		case TagMask:
			tag = "mask::"
		case TagOther:
			tag = "other::"
		}
		parts = append(parts, tag+permString(e.Perm))
	}
	return strings.Join(parts, ",")
}

func permString(p int) string {
	b := []byte("---")
	if p&PermRead != 0 {
		b[0] = 'r'
	}
	if p&PermWrite != 0 {
		b[1] = 'w'
	}
	if p&PermExec != 0 {
		b[2] = 'x'
	}
	return string(b)
}

// Dir is what the kernel looks at when someone creates a file in a directory, read without
// writing.
type Dir struct {
	Path  string      `json:"path"`
	UID   int         `json:"uid"`
	GID   int         `json:"gid"`
	Owner string      `json:"owner"` // user name, or the uid
	Group string      `json:"group"` // group name, or the gid
	Mode  fs.FileMode `json:"mode"`
	ACL   ACL         `json:"acl,omitempty"` // nil: none (the mode bits say everything)
	// ObjectACL is an ADLS Gen2 path's ACL as the service gives it, entries naming object IDs
	// ("user::rwx,user:<object id>:rwx,group::r-x,mask::rwx,other::---"); Owner and Group are
	// then object IDs (or $superuser) and UID and GID mean nothing.
	ObjectACL     string `json:"object_acl,omitempty"`
	ReadOnlyMount bool   `json:"read_only_mount,omitempty"`
	Immutable     bool   `json:"immutable,omitempty"`
}

// Describe is "owner root:root, mode dr-xr-xr-x (0555), no ACL".
func (d Dir) Describe() string {
	s := fmt.Sprintf("owner %s:%s, mode %v (%04o)", d.Owner, d.Group, d.Mode, d.Mode.Perm())
	if d.ObjectACL != "" {
		s += ", ACL " + d.ObjectACL
	} else if d.ACL != nil {
		s += ", ACL " + d.ACL.String()
	} else {
		s += ", no ACL"
	}
	return s
}

// Allowed says whether u has every permission of want (PermRead|PermWrite|PermExec) on d, and
// why not when it has not.
func Allowed(d Dir, u User, want int) (bool, string) {
	if want&PermWrite != 0 {
		if d.ReadOnlyMount {
			return false, "its filesystem is mounted read-only"
		}
		if d.Immutable {
			return false, "it is immutable (chattr +i)"
		}
	}
	if u.UID == 0 {
		return true, "" // CAP_DAC_OVERRIDE: directories are read, written and searched regardless of mode
	}
	mode := int(d.Mode.Perm())
	if u.UID == d.UID {
		// The owner: ACLs do not matter.
		if want&^(mode>>6) != 0 {
			return false, "it is the owner, and the owner bits " + permString(mode>>6) + " lack " + missing(want, mode>>6)
		}
		return true, ""
	}
	if d.ACL != nil && mode&0o070 != 0 {
		return aclAllowed(d, u, want)
	}
	if u.inGroup(d.GID) {
		if want&^(mode>>3) != 0 {
			return false, "it is in the group " + d.Group + ", and the group bits " + permString(mode>>3&7) + " lack " + missing(want, mode>>3)
		}
		return true, ""
	}
	if want&^mode != 0 {
		return false, "it is neither the owner nor in the group " + d.Group + ", and the other bits " + permString(mode&7) + " lack " + missing(want, mode)
	}
	return true, ""
}

func missing(want, have int) string {
	var out []string
	for _, p := range []struct {
		bit  int
		name string
	}{{PermRead, "read"}, {PermWrite, "write"}, {PermExec, "search"}} {
		if want&p.bit != 0 && have&p.bit == 0 {
			out = append(out, p.name)
		}
	}
	return strings.Join(out, " and ")
}

// aclAllowed is posix_acl_permission (fs/posix_acl.c) for a user that is not the owner.
func aclAllowed(d Dir, u User, want int) (bool, string) {
	found := false
	maskOf := func(i int) (int, bool) {
		for _, e := range d.ACL[i+1:] {
			if e.Tag == TagMask {
				return e.Perm, true
			}
		}
		return 0, false
	}
	masked := func(i int, who string) (bool, string) {
		e := d.ACL[i]
		perm := e.Perm
		if m, ok := maskOf(i); ok {
			perm &= m
			if want&^perm != 0 {
				return false, fmt.Sprintf("the ACL entry %s %s, limited by mask::%s, lacks %s", who, permString(e.Perm), permString(m), missing(want, perm))
			}
			return true, ""
		}
		if want&^perm != 0 {
			return false, fmt.Sprintf("the ACL entry %s %s lacks %s", who, permString(e.Perm), missing(want, perm))
		}
		return true, ""
	}
	for i, e := range d.ACL {
		switch e.Tag {
		case TagUserObj:
			// Owners were judged before; an ACL names its owner by the directory's uid.
		case TagUser:
			if e.ID == u.UID {
				return masked(i, "user:"+strconv.Itoa(e.ID)+":")
			}
		case TagGroupObj:
			if u.inGroup(d.GID) {
				found = true
				if want&^e.Perm == 0 {
					return masked(i, "group::")
				}
			}
		case TagGroup:
			if u.inGroup(e.ID) {
				found = true
				if want&^e.Perm == 0 {
					return masked(i, "group:"+strconv.Itoa(e.ID)+":")
				}
			}
		case TagOther:
			if found {
				return false, "its groups' ACL entries lack " + missing(want, 0) + " (other:: is not consulted for a member of a named group)"
			}
			if want&^e.Perm != 0 {
				return false, "no ACL entry names it or its groups, and other::" + permString(e.Perm) + " lacks " + missing(want, e.Perm)
			}
			return true, ""
		}
	}
	return false, "the ACL has no other:: entry"
}

// Report is the judgment of one checkpoint location for one user.
type Report struct {
	Location string `json:"location"`
	User     User   `json:"user"`
	// Writable is true when the user may create files in every directory Spark writes.
	Writable bool `json:"writable"`
	// Reason is one sentence: what the user may not do, where, and why.
	Reason string `json:"reason"`
	// Dirs are the location and its offsets/, commits/ and state/ (when present).
	Dirs []DirJudgment `json:"dirs"`
	// Blocked is the directory above the location that the user may not search, if any.
	Blocked *Dir `json:"blocked,omitempty"`
	// Err is set when access could not be judged (the location cannot be stat'ed, or the
	// platform has no uids); Writable is then false and means "unknown".
	Err string `json:"error,omitempty"`
	// Identity names whom an object store judged when that is not a local uid ("streamwatch's
	// identity" for GCS); User is then not what was judged. Empty for local checks.
	Identity string `json:"identity,omitempty"`
	// Missing are the store permissions the identity lacks (GCS).
	Missing []string `json:"missing,omitempty"`
	// Note says what the judgment does not cover (GCS: the job's own identity).
	Note string `json:"note,omitempty"`
}

// Who names whom the report judged: the store's identity, else the local user.
func (r *Report) Who() string {
	if r.Identity != "" {
		return r.Identity
	}
	return r.User.String()
}

// Judged reports whether the report is a judgment rather than "could not judge".
func (r *Report) Judged() bool { return r != nil && r.Err == "" }

// DirJudgment is one directory's verdict.
type DirJudgment struct {
	Name     string `json:"name"` // "" for the location, "offsets/", "commits/", "state/"
	Dir      Dir    `json:"dir"`
	Writable bool   `json:"writable"`
	Why      string `json:"why,omitempty"`
}

// SparkDirs are the directories of a checkpoint that Spark creates files in; state/ exists
// only for stateful queries.
var SparkDirs = []string{"offsets", "commits", "state"}

// judge fills the verdict of r from the facts: ancestors (outermost first), then the
// location's directories.
func judge(r *Report, ancestors []Dir, dirs []DirJudgment) {
	r.Dirs = dirs
	allowed := func(d Dir, want int) (bool, string) { return Allowed(d, r.User, want) }
	if r.User.Principal != "" {
		allowed = func(d Dir, want int) (bool, string) {
			ok, _, why := AllowedPrincipal(d, r.User.Principal, want)
			return ok, why
		}
	}
	for _, a := range ancestors {
		if ok, why := allowed(a, PermExec); !ok {
			a := a
			r.Blocked = &a
			r.Reason = fmt.Sprintf("%s may not reach %s: it may not search %s (%s): %s", r.User, r.Location, a.Path, a.Describe(), why)
			for i := range r.Dirs {
				r.Dirs[i].Why = "unreachable: " + a.Path + " cannot be searched"
			}
			return
		}
	}
	// Directories denied for the same reason are named together: "X, offsets/, commits/
	// (owner root:root, mode …): why".
	var denied []string
	byReason := map[string]int{}
	for i := range r.Dirs {
		d := &r.Dirs[i]
		ok, why := allowed(d.Dir, PermWrite|PermExec)
		d.Writable, d.Why = ok, why
		if ok {
			continue
		}
		name := d.Dir.Path
		if d.Name != "" && len(denied) > 0 {
			name = d.Name
		}
		reason := " (" + d.Dir.Describe() + "): " + why
		if k, seen := byReason[reason]; seen {
			denied[k] = strings.Replace(denied[k], reason, ", "+name+reason, 1)
			continue
		}
		byReason[reason] = len(denied)
		denied = append(denied, name+reason)
	}
	if len(denied) == 0 {
		r.Writable = true
		r.Reason = fmt.Sprintf("%s may create files in %s", r.User, strings.Join(dirNames(r.Dirs), ", "))
		return
	}
	r.Reason = fmt.Sprintf("%s may not create files in %s", r.User, strings.Join(denied, "; "))
}

func dirNames(ds []DirJudgment) []string {
	var out []string
	for _, d := range ds {
		if d.Name == "" {
			out = append(out, d.Dir.Path)
		} else {
			out = append(out, d.Name)
		}
	}
	return out
}

// ErrUnsupported is returned where the platform has no uids and mode bits to judge.
var ErrUnsupported = errors.New("access is judged on Linux only")
