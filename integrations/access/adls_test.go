package access

import (
	"reflect"
	"testing"
)

// TestAllowedPrincipal: ADLS Gen2 ACLs judged for an object ID as the service evaluates them
// (owner, named user limited by the mask, groups, other), and "cannot tell" where the answer
// hangs on group memberships.
func TestAllowedPrincipal(t *testing.T) {
	const job, other, grp, owner = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222",
		"33333333-3333-3333-3333-333333333333", "44444444-4444-4444-4444-444444444444"
	tests := []struct {
		name       string
		owner      string
		perms, acl string
		want       int
		ok, known  bool
		why        Denial
	}{
		{"owner with rwx", job, "rwxr-x---", "user::rwx,group::r-x,other::---", PermWrite | PermExec, true, true, Denial{}},
		{"owner without w", job, "r-xrwxrwx", "user::r-x,group::rwx,other::rwx", PermWrite | PermExec, false, true, Denial{Code: DeniedOwnerBits, Want: 3, Perm: 5, Have: 5}},
		{"named user rwx", owner, "rwxr-x---+", "user::rwx,user:" + job + ":rwx,group::r-x,mask::rwx,other::---", PermWrite | PermExec, true, true, Denial{}},
		{"named user limited by the mask", owner, "rwxr-x---+", "user::rwx,user:" + job + ":rwx,group::r-x,mask::r-x,other::---", PermWrite | PermExec, false, true,
			Denial{Code: DeniedObjectEntry, Want: 3, Entry: "user:" + job + ":", Perm: 7, Have: 5, Mask: 5, Masked: true}},
		{"named user entry decides before other", owner, "rwxr-xrwx+", "user::rwx,user:" + job + ":r-x,group::r-x,mask::rwx,other::rwx", PermWrite | PermExec, false, true,
			Denial{Code: DeniedObjectEntry, Want: 3, Entry: "user:" + job + ":", Perm: 5, Have: 5}},
		{"another user named: other decides", owner, "rwxr-x---+", "user::rwx,user:" + other + ":rwx,group::r-x,mask::rwx,other::---", PermWrite | PermExec, false, true,
			Denial{Code: DeniedObjectOther, Want: 3, GroupsLack: true}},
		{"other allows and every group allows", owner, "rwxrwxrwx", "user::rwx,group::rwx,other::rwx", PermWrite | PermExec, true, true, Denial{}},
		{"search only on an ancestor", owner, "rwxr-x--x", "user::rwx,group::r-x,other::--x", PermExec, true, true, Denial{}},
		{"a named group grants: depends on membership", owner, "rwxr-x---+", "user::rwx,group::r-x,group:" + grp + ":rwx,mask::rwx,other::---", PermWrite | PermExec, false, false,
			Denial{Code: UnknownOnlyGroup, Want: 3, Entries: []string{"group:" + grp + ":"}, Group: grp}},
		{"other allows but the group does not: depends", owner, "rwxr-xrwx", "user::rwx,group::r-x,other::rwx", PermWrite | PermExec, true, false,
			Denial{Code: UnknownUnlessGroup, Want: 3, Perm: 7, Entries: []string{"group::"}, Group: grp}},
		{"defaults are left out", owner, "rwxr-x---", "user::rwx,group::r-x,other::---,default:user:" + job + ":rwx", PermWrite | PermExec, false, true,
			Denial{Code: DeniedObjectOther, Want: 3, GroupsLack: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ObjectDir("/ckpt", tc.owner, grp, tc.perms, tc.acl)
			if err != nil {
				t.Fatal(err)
			}
			ok, known, why := AllowedPrincipal(d, job, tc.want)
			if ok != tc.ok || known != tc.known || !reflect.DeepEqual(why, tc.why) {
				t.Errorf("AllowedPrincipal = %v, known %v, %+v; want %v, known %v, %+v", ok, known, why, tc.ok, tc.known, tc.why)
			}
		})
	}
	for _, bad := range []struct{ perms, acl string }{{"rwx", ""}, {"rwxr-x-q-", ""}, {"rwxr-x---", "user:rwx"}, {"rwxr-x---", "nobody::rwx"}} {
		if _, err := ObjectDir("/x", owner, grp, bad.perms, bad.acl); err == nil {
			t.Errorf("ObjectDir(%q, %q) took it", bad.perms, bad.acl)
		}
	}
}

// TestCheckPrincipal: a checkpoint whose commits/ the job's principal may not write is named,
// with the ACL and the RBAC caveat; an ancestor it may not search blocks it; membership that
// decides makes the report "not judged".
func TestCheckPrincipal(t *testing.T) {
	const job, grp = "11111111-1111-1111-1111-111111111111", "33333333-3333-3333-3333-333333333333"
	u := User{Principal: job, Whose: "job_user"}
	dir := func(p, perms, acl string) Dir {
		d, err := ObjectDir(p, "$superuser", grp, perms, acl)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	open := "user::rwx,user:" + job + ":rwx,group::r-x,mask::rwx,other::--x"
	root := dir("/", "rwxr-x--x+", open)
	ok := []DirJudgment{{Dir: dir("abfss://c@a.dfs.core.windows.net/ckpt", "rwxrwx--x+", open)}, {Name: "offsets/", Dir: dir("ckpt/offsets", "rwxrwx--x+", open)}}
	r := CheckPrincipal("abfss://c@a.dfs.core.windows.net/ckpt", u, []Dir{root}, ok)
	if !r.Judged() || !r.Writable || r.Code != ReportWritable || !r.ByACLs {
		t.Errorf("writable: %+v", r)
	}
	denied := append(ok, DirJudgment{Name: "commits/", Dir: dir("ckpt/commits", "rwxr-x--x+", "user::rwx,user:"+job+":r-x,group::r-x,mask::r-x,other::--x")})
	r = CheckPrincipal("abfss://c@a.dfs.core.windows.net/ckpt", u, []Dir{root}, denied)
	if d := r.Dirs[2]; !r.Judged() || r.Writable || r.Code != ReportNotWritable || !r.ByACLs || d.Writable || d.Denied == nil || d.Denied.Code != DeniedObjectEntry ||
		!r.Dirs[0].Writable || !r.Dirs[1].Writable {
		t.Errorf("commits/ denied: %+v", r)
	}
	closed := dir("/", "rwx------", "user::rwx,group::---,other::---")
	if r := CheckPrincipal("x", u, []Dir{closed}, ok); !r.Judged() || r.Writable || r.Code != ReportUnreachable || r.Blocked == nil || r.BlockedWhy.Code != DeniedObjectOther {
		t.Errorf("blocked: %+v", r)
	}
	byGroup := dir("/", "rwxr-x---+", "user::rwx,group::r-x,group:"+grp+":r-x,mask::r-x,other::---")
	byGroup.ObjectACL = "user::rwx,group::--x,group:" + grp + ":--x,mask::--x,other::---"
	if r := CheckPrincipal("x", u, []Dir{byGroup}, ok); r.Judged() || r.Code != NotJudgedReachByGroups || r.BlockedWhy.Code != UnknownOnlyGroup {
		t.Errorf("by group: %+v", r)
	}
}
