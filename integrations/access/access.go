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
		parts = append(parts, tag+PermString(e.Perm))
	}
	return strings.Join(parts, ",")
}

// PermString is permission bits as getfacl and ls show them: "r-x".
func PermString(p int) string {
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

// Allowed says whether u has every permission of want (PermRead|PermWrite|PermExec) on d, and
// why not when it has not.
func Allowed(d Dir, u User, want int) (bool, Denial) {
	if want&PermWrite != 0 {
		if d.ReadOnlyMount {
			return false, Denial{Code: DeniedReadOnlyMount, Want: want}
		}
		if d.Immutable {
			return false, Denial{Code: DeniedImmutable, Want: want}
		}
	}
	if u.UID == 0 {
		return true, Denial{} // CAP_DAC_OVERRIDE: directories are read, written and searched regardless of mode
	}
	mode := int(d.Mode.Perm())
	if u.UID == d.UID {
		// The owner: ACLs do not matter.
		if want&^(mode>>6) != 0 {
			return false, Denial{Code: DeniedOwnerBits, Want: want, Perm: mode >> 6 & 7, Have: mode >> 6 & 7}
		}
		return true, Denial{}
	}
	if d.ACL != nil && mode&0o070 != 0 {
		return aclAllowed(d, u, want)
	}
	if u.inGroup(d.GID) {
		if want&^(mode>>3) != 0 {
			return false, Denial{Code: DeniedGroupBits, Want: want, Perm: mode >> 3 & 7, Have: mode >> 3 & 7, Group: d.Group}
		}
		return true, Denial{}
	}
	if want&^mode != 0 {
		return false, Denial{Code: DeniedOtherBits, Want: want, Perm: mode & 7, Have: mode & 7, Group: d.Group}
	}
	return true, Denial{}
}

// aclAllowed is posix_acl_permission (fs/posix_acl.c) for a user that is not the owner.
func aclAllowed(d Dir, u User, want int) (bool, Denial) {
	found := false
	maskOf := func(i int) (int, bool) {
		for _, e := range d.ACL[i+1:] {
			if e.Tag == TagMask {
				return e.Perm, true
			}
		}
		return 0, false
	}
	masked := func(i int, who string) (bool, Denial) {
		e := d.ACL[i]
		perm := e.Perm
		m, ok := maskOf(i)
		if ok {
			perm &= m
		}
		if want&^perm != 0 {
			return false, Denial{Code: DeniedACLEntry, Want: want, Entry: who, Perm: e.Perm, Have: perm, Mask: m, Masked: ok}
		}
		return true, Denial{}
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
				return false, Denial{Code: DeniedACLGroups, Want: want}
			}
			if want&^e.Perm != 0 {
				return false, Denial{Code: DeniedACLOther, Want: want, Perm: e.Perm, Have: e.Perm}
			}
			return true, Denial{}
		}
	}
	return false, Denial{Code: DeniedACLNoOther, Want: want}
}

// Report is the judgment of one checkpoint location for one user.
type Report struct {
	Location string `json:"location"`
	User     User   `json:"user"`
	// Writable is true when the user may create files in every directory Spark writes.
	Writable bool `json:"writable"`
	// Code is what the report concluded, or why it is no judgment; commands words it with
	// the fields its doc comment names. Empty in a report of an earlier version.
	Code Code `json:"code,omitempty"`
	// Reason is an earlier version's words for Code; empty in reports written since.
	Reason string `json:"reason,omitempty"`
	// Dirs are the location and its offsets/, commits/ and state/ (when present).
	Dirs []DirJudgment `json:"dirs"`
	// Blocked is the directory above the location that the user may not search, if any (or,
	// for NotJudgedReachByGroups and NotJudgedCreateByGroups, the directory whose ACL hangs on
	// groups); BlockedWhy is why.
	Blocked    *Dir    `json:"blocked,omitempty"`
	BlockedWhy *Denial `json:"blocked_why,omitempty"`
	// ByACLs: the ADLS ACLs judged it (an Azure RBAC role may allow what they deny).
	ByACLs bool `json:"by_acls,omitempty"`
	// Err is the error that kept access from being judged (the location cannot be stat'ed,
	// or the platform has no uids); Writable is then false and means "unknown".
	Err string `json:"error,omitempty"`
	// Bucket is the bucket a GCS judgment is of.
	Bucket string `json:"bucket,omitempty"`
	// Cause is NotJudgedIAMUnanswered's error message.
	Cause string `json:"cause,omitempty"`
	// Identity names whom an object store judged when that is not a local uid ("streamwatch's
	// identity" for GCS); User is then not what was judged. Empty for local checks.
	Identity string `json:"identity,omitempty"`
	// Missing are the store permissions the identity lacks (GCS).
	Missing []string `json:"missing,omitempty"`
	// JobUserUnjudged: the configuration names the job's user, which a GCS judgment cannot
	// cover.
	JobUserUnjudged bool `json:"job_user_unjudged,omitempty"`
	// Note is an earlier version's words for what a GCS judgment does not cover.
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
func (r *Report) Judged() bool { return r != nil && r.Err == "" && !notJudged[r.Code] }

// DirJudgment is one directory's verdict.
type DirJudgment struct {
	Name     string `json:"name"` // "" for the location, "offsets/", "commits/", "state/"
	Dir      Dir    `json:"dir"`
	Writable bool   `json:"writable"`
	// Denied is why it is not Writable.
	Denied *Denial `json:"denied,omitempty"`
	// Why is an earlier version's words for Denied.
	Why string `json:"why,omitempty"`
}

// SparkDirs are the directories of a checkpoint that Spark creates files in; state/ exists
// only for stateful queries.
var SparkDirs = []string{"offsets", "commits", "state"}

// judge fills the verdict of r from the facts: ancestors (outermost first), then the
// location's directories.
func judge(r *Report, ancestors []Dir, dirs []DirJudgment) {
	r.Dirs = dirs
	allowed := func(d Dir, want int) (bool, Denial) { return Allowed(d, r.User, want) }
	if r.User.Principal != "" {
		allowed = func(d Dir, want int) (bool, Denial) {
			ok, _, why := AllowedPrincipal(d, r.User.Principal, want)
			return ok, why
		}
	}
	for _, a := range ancestors {
		if ok, why := allowed(a, PermExec); !ok {
			a := a
			r.Code, r.Blocked, r.BlockedWhy = ReportUnreachable, &a, &why
			for i := range r.Dirs {
				r.Dirs[i].Denied = &Denial{Code: DeniedUnreachable, Path: a.Path}
			}
			return
		}
	}
	r.Code, r.Writable = ReportWritable, true
	for i := range r.Dirs {
		d := &r.Dirs[i]
		ok, why := allowed(d.Dir, PermWrite|PermExec)
		d.Writable = ok
		if !ok {
			d.Denied = &why
			r.Code, r.Writable = ReportNotWritable, false
		}
	}
}

// ErrUnsupported is returned where the platform has no uids and mode bits to judge.
var ErrUnsupported = errors.New("access is judged on Linux only")
