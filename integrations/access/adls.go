package access

import (
	"fmt"
	"io/fs"
	"strings"
)

// ADLS Gen2 (a storage account with a hierarchical namespace, abfss://) keeps POSIX-like ACLs
// whose entries name Microsoft Entra object IDs, and evaluates them as POSIX does
// (learn.microsoft.com: "Access control lists in Azure Data Lake Storage", "How are
// permissions evaluated?"): the owning user by the owner bits; a named user entry, limited by
// the mask; the owning group and named groups, limited by the mask; then other. Creating a
// file takes write and execute on its directory and execute on every directory above it.
//
// What it cannot see: a principal's group memberships (they live in Microsoft Entra ID), and
// Azure RBAC role assignments, which are evaluated before ACLs, so that a role such as Storage
// Blob Data Contributor allows writing whatever the ACLs say. The write probe remains the
// proof.

// ObjectDir is a directory as the dfs endpoint describes it (Path - Get Properties with
// action=getAccessControl): its owner and group object IDs, its permissions ("rwxr-x---",
// "+" when an ACL extends them, "t" or "T" for the sticky bit) and its ACL.
func ObjectDir(path, owner, group, permissions, acl string) (Dir, error) {
	p := strings.TrimSuffix(permissions, "+")
	if len(p) != 9 {
		return Dir{}, fmt.Errorf("permissions %q of %s: want nine characters such as rwxr-x---", permissions, path)
	}
	var mode fs.FileMode
	for i := range len(p) {
		c := p[i]
		bit := fs.FileMode(1) << (8 - i)
		switch {
		case c == "rwxrwxrwx"[i]:
			mode |= bit
		case i == 8 && c == 't':
			mode |= bit | fs.ModeSticky
		case i == 8 && c == 'T':
			mode |= fs.ModeSticky
		case c != '-':
			return Dir{}, fmt.Errorf("permissions %q of %s: unexpected %q", permissions, path, c)
		}
	}
	if _, err := parseObjectACL(acl); err != nil {
		return Dir{}, fmt.Errorf("acl of %s: %w", path, err)
	}
	return Dir{Path: path, Owner: owner, Group: group, Mode: fs.ModeDir | mode, ObjectACL: acl}, nil
}

// objectEntry is one access entry of an ADLS ACL; ID is "" for the owner, owning group, mask
// and other entries.
type objectEntry struct {
	tag  int
	id   string
	perm int
}

// parseObjectACL reads "user::rwx,user:<id>:r-x,group::r-x,mask::r-x,other::---"; default
// entries ("default:user::rwx") are for new children and left out.
func parseObjectACL(acl string) ([]objectEntry, error) {
	var out []objectEntry
	for _, e := range strings.Split(acl, ",") {
		if e == "" || strings.HasPrefix(e, "default:") {
			continue
		}
		parts := strings.Split(e, ":")
		if len(parts) != 3 || len(parts[2]) != 3 {
			return nil, fmt.Errorf("entry %q: want type:id:rwx", e)
		}
		perm := 0
		for i := range 3 {
			c := parts[2][i]
			switch {
			case c == "rwx"[i]:
				perm |= 4 >> i
			case c != '-':
				return nil, fmt.Errorf("entry %q: unexpected %q", e, c)
			}
		}
		oe := objectEntry{id: parts[1], perm: perm}
		switch {
		case parts[0] == "user" && oe.id == "":
			oe.tag = TagUserObj
		case parts[0] == "user":
			oe.tag = TagUser
		case parts[0] == "group" && oe.id == "":
			oe.tag = TagGroupObj
		case parts[0] == "group":
			oe.tag = TagGroup
		case parts[0] == "mask":
			oe.tag = TagMask
		case parts[0] == "other":
			oe.tag = TagOther
		default:
			return nil, fmt.Errorf("entry %q: unknown type %q", e, parts[0])
		}
		out = append(out, oe)
	}
	return out, nil
}

// AllowedPrincipal says whether the principal (an object ID) has every permission of want on
// the ADLS directory d. known is false when the answer hangs on the principal's group
// memberships, which streamwatch cannot see; why then names the groups.
func AllowedPrincipal(d Dir, principal string, want int) (ok, known bool, why Denial) {
	mode := int(d.Mode.Perm())
	if strings.EqualFold(d.Owner, principal) {
		if want&^(mode>>6) != 0 {
			return false, true, Denial{Code: DeniedOwnerBits, Want: want, Perm: mode >> 6 & 7, Have: mode >> 6 & 7}
		}
		return true, true, Denial{}
	}
	entries, _ := parseObjectACL(d.ObjectACL) // ObjectDir checked it
	if len(entries) == 0 {                    // no ACL: the permissions are the owner, group and other entries
		entries = []objectEntry{{tag: TagGroupObj, perm: mode >> 3 & 7}, {tag: TagOther, perm: mode & 7}}
	}
	mask, hasMask := 7, false
	for _, e := range entries {
		if e.tag == TagMask {
			mask, hasMask = e.perm, true
		}
	}
	limit := func(e objectEntry, who string) (bool, Denial) {
		if want&^(e.perm&mask) == 0 {
			return true, Denial{}
		}
		why := Denial{Code: DeniedObjectEntry, Want: want, Entry: who, Perm: e.perm, Have: e.perm & mask}
		if hasMask && want&^e.perm == 0 { // the entry alone would allow it
			why.Mask, why.Masked = mask, true
		}
		return false, why
	}
	other := 0
	var granting, denying []string
	for _, e := range entries {
		switch e.tag {
		case TagUser:
			if strings.EqualFold(e.id, principal) {
				ok, why := limit(e, "user:"+e.id+":")
				return ok, true, why
			}
		case TagGroupObj, TagGroup:
			name := "group:" + e.id + ":"
			if e.tag == TagGroupObj {
				name = "group::" // the owning group, d.Group
			}
			if ok, _ := limit(e, ""); ok {
				granting = append(granting, name)
			} else {
				denying = append(denying, name)
			}
		case TagOther:
			other = e.perm
		}
	}
	otherOK := want&^other == 0
	switch {
	case otherOK && len(denying) == 0:
		return true, true, Denial{}
	case !otherOK && len(granting) == 0:
		return false, true, Denial{Code: DeniedObjectOther, Want: want, Perm: other, Have: other, GroupsLack: len(denying) > 0}
	case otherOK:
		return true, false, Denial{Code: UnknownUnlessGroup, Want: want, Perm: other, Entries: denying, Group: d.Group}
	default:
		return false, false, Denial{Code: UnknownOnlyGroup, Want: want, Perm: other, Have: other, Entries: granting, Group: d.Group}
	}
}

// CheckPrincipal judges whether u (u.Principal set) may create files in an ADLS Gen2
// checkpoint: dirs are the location's directories (Name "" for the location, then
// "offsets/", "commits/", "state/"), ancestors the directories above it, outermost first.
// When the answer hangs on group memberships the report is not a judgment (its Code says why).
func CheckPrincipal(location string, u User, ancestors []Dir, dirs []DirJudgment) Report {
	r := Report{Location: location, User: u}
	for _, a := range ancestors {
		if _, known, why := AllowedPrincipal(a, u.Principal, PermExec); !known {
			a := a
			r.Code, r.Blocked, r.BlockedWhy = NotJudgedReachByGroups, &a, &why
			return r
		}
	}
	for _, d := range dirs {
		if _, known, why := AllowedPrincipal(d.Dir, u.Principal, PermWrite|PermExec); !known {
			dir := d.Dir
			r.Code, r.Blocked, r.BlockedWhy = NotJudgedCreateByGroups, &dir, &why
			return r
		}
	}
	judge(&r, ancestors, dirs)
	r.ByACLs = true
	return r
}
