package commands

import (
	"fmt"
	"strings"

	"github.com/streamwatch/streamwatch/integrations/access"
)

// The words of the access check's judgments (integrations/access): what a user may not do to
// a checkpoint's folders, and why, from the codes and values a Report carries. A report of an
// earlier version (no Code) has its own words.

// AccessReason is one sentence saying what the user may or may not do, where, and why; for a
// report that is no judgment, why not (AccessNotJudged).
func AccessReason(r *access.Report) string {
	var s string
	switch r.Code {
	case "":
		if r.Reason == "" {
			return r.Err // no judgment: the error that kept it from one
		}
		return r.Reason
	case access.ReportWritable:
		return fmt.Sprintf("%s may create files in %s", r.User, strings.Join(accessDirNames(r.Dirs), ", "))
	case access.ReportNotWritable:
		s = fmt.Sprintf("%s may not create files in %s", r.User, strings.Join(accessDenied(r.Dirs), "; "))
	case access.ReportUnreachable:
		s = fmt.Sprintf("%s may not reach %s: it may not search %s (%s): %s", r.User, r.Location, blockedPath(r), blockedDescribe(r), blockedWhy(r))
	case access.ReportGCSWritable:
		return fmt.Sprintf("%s may create and delete objects in %s (testIamPermissions)", r.Identity, r.Bucket)
	case access.ReportGCSMissing:
		verbs := make([]string, 0, len(r.Missing))
		for _, p := range r.Missing {
			verbs = append(verbs, strings.TrimPrefix(p, "storage.objects."))
		}
		return fmt.Sprintf("%s lacks %s in %s (testIamPermissions), so it may not %s objects there",
			r.Identity, strings.Join(r.Missing, " and "), r.Bucket, strings.Join(verbs, " or "))
	default:
		return AccessNotJudged(r)
	}
	if r.ByACLs {
		s += " (by the ACLs; an Azure RBAC role such as Storage Blob Data Contributor would allow it regardless, and role assignments are not visible here)"
	}
	return s
}

// AccessNotJudged says why a report is no judgment: the error that kept it from judging, or
// what it cannot see.
func AccessNotJudged(r *access.Report) string {
	const tell = ": the write probe and the driver logs tell"
	switch {
	case r.Err != "":
		return r.Err
	case r.Code == access.NotJudgedObjectStore:
		return "access to " + r.Location + " cannot be judged without writing" + tell
	case r.Code == access.NotJudgedWasbs:
		return "access to " + r.Location + " cannot be judged without writing (a wasbs:// container has no ACLs)" + tell
	case r.Code == access.NotJudgedNoPrincipal:
		return "access to " + r.Location + " cannot be judged without writing (ACLs are judged for job_user: {principal: <object id>}, which is not set)" + tell
	case r.Code == access.NotJudgedIAMUnanswered:
		return fmt.Sprintf("%s's testIamPermissions did not answer (%s)", r.Bucket, r.Cause) + tell
	case r.Code == access.NotJudgedReachByGroups:
		return fmt.Sprintf("whether %s may reach %s depends on %s: %s", r.User, r.Location, blockedPath(r), blockedWhy(r))
	case r.Code == access.NotJudgedCreateByGroups:
		return fmt.Sprintf("whether %s may create files in %s depends on its groups: %s", r.User, blockedPath(r), blockedWhy(r))
	}
	return string(r.Code)
}

// AccessNote says what a judgment does not cover (GCS: the job's own identity); "" when it
// covers what it says.
func AccessNote(r *access.Report) string {
	switch {
	case r.Code == "":
		return r.Note
	case r.Identity == "":
		return ""
	}
	s := "testIamPermissions answers for the identity streamwatch calls GCS with, not for the job's"
	if r.JobUserUnjudged {
		s += "; job_user was not judged"
	}
	return s
}

// DirDescribe is "owner root:root, mode dr-xr-xr-x (0555), no ACL".
func DirDescribe(d access.Dir) string {
	s := fmt.Sprintf("owner %s:%s, mode %v (%04o)", d.Owner, d.Group, d.Mode, d.Mode.Perm())
	switch {
	case d.ObjectACL != "":
		s += ", ACL " + d.ObjectACL
	case d.ACL != nil:
		s += ", ACL " + d.ACL.String()
	default:
		s += ", no ACL"
	}
	return s
}

// DirWhy says why a directory is not writable ("" when it is); an earlier version's
// judgment has its own words.
func DirWhy(d access.DirJudgment) string {
	if d.Denied != nil {
		return DenialWords(*d.Denied)
	}
	return d.Why
}

// DenialWords words why a directory denies a user what it wanted.
func DenialWords(d access.Denial) string {
	perm := access.PermString(d.Perm)
	lacks := permsLacking(d.Want, d.Have)
	switch d.Code {
	case access.DeniedReadOnlyMount:
		return "its filesystem is mounted read-only"
	case access.DeniedImmutable:
		return "it is immutable (chattr +i)"
	case access.DeniedOwnerBits:
		return "it is the owner, and the owner bits " + perm + " lack " + lacks
	case access.DeniedGroupBits:
		return "it is in the group " + d.Group + ", and the group bits " + perm + " lack " + lacks
	case access.DeniedOtherBits:
		return "it is neither the owner nor in the group " + d.Group + ", and the other bits " + perm + " lack " + lacks
	case access.DeniedACLEntry:
		if d.Masked {
			return fmt.Sprintf("the ACL entry %s %s, limited by mask::%s, lacks %s", d.Entry, perm, access.PermString(d.Mask), lacks)
		}
		return fmt.Sprintf("the ACL entry %s %s lacks %s", d.Entry, perm, lacks)
	case access.DeniedACLGroups:
		return "its groups' ACL entries lack " + permsLacking(d.Want, 0) + " (other:: is not consulted for a member of a named group)"
	case access.DeniedACLOther:
		return "no ACL entry names it or its groups, and other::" + perm + " lacks " + lacks
	case access.DeniedACLNoOther:
		return "the ACL has no other:: entry"
	case access.DeniedObjectEntry:
		if d.Masked {
			return fmt.Sprintf("the ACL entry %s%s, limited by mask::%s, lacks %s", d.Entry, perm, access.PermString(d.Mask), lacks)
		}
		return fmt.Sprintf("the ACL entry %s%s lacks %s", d.Entry, perm, lacks)
	case access.DeniedObjectOther:
		if d.GroupsLack {
			return "no ACL entry names it, its groups' entries lack " + permsLacking(d.Want, 0) + ", and other::" + perm + " lacks " + lacks
		}
		return "no ACL entry names it, and other::" + perm + " lacks " + lacks
	case access.UnknownUnlessGroup:
		return fmt.Sprintf("other::%s allows it unless it is a member of %s (owning group %s), whose entries lack %s; streamwatch cannot see group memberships",
			perm, strings.Join(d.Entries, ", "), d.Group, permsLacking(d.Want, 0))
	case access.UnknownOnlyGroup:
		return fmt.Sprintf("other::%s lacks %s; only membership of %s (owning group %s) would allow it, and streamwatch cannot see group memberships",
			perm, lacks, strings.Join(d.Entries, ", "), d.Group)
	case access.DeniedUnreachable:
		return "unreachable: " + d.Path + " cannot be searched"
	}
	return string(d.Code)
}

// permsLacking names the permissions of want that have lacks: "write and search".
func permsLacking(want, have int) string {
	var out []string
	for _, p := range []struct {
		bit  int
		name string
	}{{access.PermRead, "read"}, {access.PermWrite, "write"}, {access.PermExec, "search"}} {
		if want&p.bit != 0 && have&p.bit == 0 {
			out = append(out, p.name)
		}
	}
	return strings.Join(out, " and ")
}

// accessDirNames names a report's directories: the location by its path, the others by their
// name ("offsets/").
func accessDirNames(ds []access.DirJudgment) []string {
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

// accessDenied names the directories a user may not write, those denied for the same reason
// together: "X, offsets/, commits/ (owner …, mode …): why".
func accessDenied(ds []access.DirJudgment) []string {
	var denied []string
	byReason := map[string]int{}
	for _, d := range ds {
		if d.Writable {
			continue
		}
		name := d.Dir.Path
		if d.Name != "" && len(denied) > 0 {
			name = d.Name
		}
		reason := " (" + DirDescribe(d.Dir) + "): " + DirWhy(d)
		if k, seen := byReason[reason]; seen {
			denied[k] = strings.Replace(denied[k], reason, ", "+name+reason, 1)
			continue
		}
		byReason[reason] = len(denied)
		denied = append(denied, name+reason)
	}
	return denied
}

func blockedPath(r *access.Report) string {
	if r.Blocked == nil {
		return ""
	}
	return r.Blocked.Path
}

func blockedDescribe(r *access.Report) string {
	if r.Blocked == nil {
		return ""
	}
	return DirDescribe(*r.Blocked)
}

func blockedWhy(r *access.Report) string {
	if r.BlockedWhy == nil {
		return ""
	}
	return DenialWords(*r.BlockedWhy)
}
