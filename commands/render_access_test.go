package commands_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/commands"
	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// TestDenialWords: every reason a directory denies a user what it wanted, worded in full.
func TestDenialWords(t *testing.T) {
	const job, grp = "11111111-1111-1111-1111-111111111111", "33333333-3333-3333-3333-333333333333"
	wx := access.PermWrite | access.PermExec
	cases := []struct {
		d    access.Denial
		want string
	}{
		{access.Denial{Code: access.DeniedReadOnlyMount, Want: wx}, "its filesystem is mounted read-only"},
		{access.Denial{Code: access.DeniedImmutable, Want: wx}, "it is immutable (chattr +i)"},
		{access.Denial{Code: access.DeniedOwnerBits, Want: wx, Perm: 5, Have: 5}, "it is the owner, and the owner bits r-x lack write"},
		{access.Denial{Code: access.DeniedGroupBits, Want: wx, Perm: 4, Have: 4, Group: "spark"}, "it is in the group spark, and the group bits r-- lack write and search"},
		{access.Denial{Code: access.DeniedOtherBits, Want: wx, Perm: 5, Have: 5, Group: "root"},
			"it is neither the owner nor in the group root, and the other bits r-x lack write"},
		{access.Denial{Code: access.DeniedACLEntry, Want: wx, Entry: "user:185:", Perm: 7, Have: 5, Mask: 5, Masked: true},
			"the ACL entry user:185: rwx, limited by mask::r-x, lacks write"},
		{access.Denial{Code: access.DeniedACLEntry, Want: wx, Entry: "group:1000:", Perm: 5, Have: 5}, "the ACL entry group:1000: r-x lacks write"},
		{access.Denial{Code: access.DeniedACLGroups, Want: wx},
			"its groups' ACL entries lack write and search (other:: is not consulted for a member of a named group)"},
		{access.Denial{Code: access.DeniedACLOther, Want: wx, Perm: 5, Have: 5}, "no ACL entry names it or its groups, and other::r-x lacks write"},
		{access.Denial{Code: access.DeniedACLNoOther, Want: wx}, "the ACL has no other:: entry"},
		{access.Denial{Code: access.DeniedObjectEntry, Want: wx, Entry: "user:" + job + ":", Perm: 7, Have: 5, Mask: 5, Masked: true},
			"the ACL entry user:" + job + ":rwx, limited by mask::r-x, lacks write"},
		{access.Denial{Code: access.DeniedObjectEntry, Want: wx, Entry: "user:" + job + ":", Perm: 5, Have: 5},
			"the ACL entry user:" + job + ":r-x lacks write"},
		{access.Denial{Code: access.DeniedObjectOther, Want: wx, GroupsLack: true},
			"no ACL entry names it, its groups' entries lack write and search, and other::--- lacks write and search"},
		{access.Denial{Code: access.DeniedObjectOther, Want: wx}, "no ACL entry names it, and other::--- lacks write and search"},
		{access.Denial{Code: access.UnknownUnlessGroup, Want: wx, Perm: 7, Entries: []string{"group::"}, Group: grp},
			"other::rwx allows it unless it is a member of group:: (owning group " + grp + "), whose entries lack write and search; streamwatch cannot see group memberships"},
		{access.Denial{Code: access.UnknownOnlyGroup, Want: wx, Entries: []string{"group:" + grp + ":"}, Group: grp},
			"other::--- lacks write and search; only membership of group:" + grp + ": (owning group " + grp + ") would allow it, and streamwatch cannot see group memberships"},
		{access.Denial{Code: access.DeniedUnreachable, Path: "/var/lib"}, "unreachable: /var/lib cannot be searched"},
	}
	for _, c := range cases {
		if got := commands.DenialWords(c.d); got != c.want {
			t.Errorf("%s: got %q, want %q", c.d.Code, got, c.want)
		}
	}
}

// TestAccessReason: each conclusion of a report, and why a report is no judgment, in full;
// a report an earlier version stored keeps its words.
func TestAccessReason(t *testing.T) {
	const job = "11111111-1111-1111-1111-111111111111"
	spark := access.User{UID: 185, GIDs: []int{185}, Whose: "job_user"}
	principal := access.User{Principal: job, Whose: "job_user"}
	root := access.Dir{Path: "/cp", Owner: "root", Group: "root", Mode: fs.ModeDir | 0o555}
	offsets := root
	offsets.Path = "/cp/offsets"
	others := &access.Denial{Code: access.DeniedOtherBits, Want: 3, Perm: 5, Have: 5, Group: "root"}
	abfss := "abfss://c@a.dfs.core.windows.net/ckpt"
	obj := func(path, acl string) access.Dir {
		d, err := access.ObjectDir(path, "$superuser", "g", "rwxr-x--x+", acl)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	commits := obj(abfss+"/commits", "user::rwx,user:"+job+":r-x,group::r-x,mask::r-x,other::--x")
	cases := []struct {
		name string
		r    access.Report
		want string
	}{
		{"writable", access.Report{Location: "/cp", User: spark, Code: access.ReportWritable, Writable: true,
			Dirs: []access.DirJudgment{{Dir: root, Writable: true}, {Name: "offsets/", Dir: offsets, Writable: true}}},
			"uid 185 groups [185] (job_user) may create files in /cp, offsets/"},
		{"not writable, one reason for two folders", access.Report{Location: "/cp", User: spark, Code: access.ReportNotWritable,
			Dirs: []access.DirJudgment{{Dir: root, Denied: others}, {Name: "offsets/", Dir: offsets, Denied: others}}},
			"uid 185 groups [185] (job_user) may not create files in /cp, offsets/ (owner root:root, mode dr-xr-xr-x (0555), no ACL): it is neither the owner nor in the group root, and the other bits r-x lack write"},
		{"not writable by the ACLs", access.Report{Location: abfss, User: principal, Code: access.ReportNotWritable, ByACLs: true,
			Dirs: []access.DirJudgment{{Dir: obj(abfss, "user::rwx,other::--x"), Writable: true},
				{Name: "commits/", Dir: commits, Denied: &access.Denial{Code: access.DeniedObjectEntry, Want: 3, Entry: "user:" + job + ":", Perm: 5, Have: 5}}}},
			"principal " + job + " (job_user) may not create files in " + abfss + "/commits (owner $superuser:g, mode drwxr-x--x (0751), ACL user::rwx,user:" + job + ":r-x,group::r-x,mask::r-x,other::--x): the ACL entry user:" + job + ":r-x lacks write" +
				" (by the ACLs; an Azure RBAC role such as Storage Blob Data Contributor would allow it regardless, and role assignments are not visible here)"},
		{"unreachable", access.Report{Location: "/srv/cp", User: spark, Code: access.ReportUnreachable,
			Blocked:    &access.Dir{Path: "/srv", Owner: "root", Group: "root", Mode: fs.ModeDir | 0o700},
			BlockedWhy: &access.Denial{Code: access.DeniedOtherBits, Want: access.PermExec, Group: "root"}},
			"uid 185 groups [185] (job_user) may not reach /srv/cp: it may not search /srv (owner root:root, mode drwx------ (0700), no ACL): it is neither the owner nor in the group root, and the other bits --- lack search"},
		{"GCS writable", access.GCS("gs://spark/cp", "gs://spark", access.GCSWrite, true),
			"streamwatch's identity may create and delete objects in gs://spark (testIamPermissions)"},
		{"GCS lacks both", access.GCS("gs://spark/cp", "gs://spark", nil, false),
			"streamwatch's identity lacks storage.objects.create and storage.objects.delete in gs://spark (testIamPermissions), so it may not create or delete objects there"},
		{"object store", access.Report{Location: "s3://b/cp", Code: access.NotJudgedObjectStore},
			"access to s3://b/cp cannot be judged without writing: the write probe and the driver logs tell"},
		{"wasbs", access.Report{Location: "wasbs://c@a.blob.core.windows.net/cp", Code: access.NotJudgedWasbs},
			"access to wasbs://c@a.blob.core.windows.net/cp cannot be judged without writing (a wasbs:// container has no ACLs): the write probe and the driver logs tell"},
		{"no principal", access.Report{Location: abfss, Code: access.NotJudgedNoPrincipal},
			"access to " + abfss + " cannot be judged without writing (ACLs are judged for job_user: {principal: <object id>}, which is not set): the write probe and the driver logs tell"},
		{"IAM unanswered", access.Report{Location: "gs://spark/cp", Identity: access.GCSIdentity, Code: access.NotJudgedIAMUnanswered, Bucket: "gs://spark", Cause: "Not Found (GCS HTTP 404)"},
			"gs://spark's testIamPermissions did not answer (Not Found (GCS HTTP 404)): the write probe and the driver logs tell"},
		{"reach by groups", access.Report{Location: abfss, User: principal, Code: access.NotJudgedReachByGroups, Blocked: &access.Dir{Path: "/"},
			BlockedWhy: &access.Denial{Code: access.UnknownOnlyGroup, Want: 1, Entries: []string{"group:g:"}, Group: "g"}},
			"whether principal " + job + " (job_user) may reach " + abfss + " depends on /: other::--- lacks search; only membership of group:g: (owning group g) would allow it, and streamwatch cannot see group memberships"},
		{"create by groups", access.Report{Location: abfss, User: principal, Code: access.NotJudgedCreateByGroups, Blocked: &commits,
			BlockedWhy: &access.Denial{Code: access.UnknownUnlessGroup, Want: 3, Perm: 3, Entries: []string{"group::"}, Group: "g"}},
			"whether principal " + job + " (job_user) may create files in " + abfss + "/commits depends on its groups: other::-wx allows it unless it is a member of group:: (owning group g), whose entries lack write and search; streamwatch cannot see group memberships"},
		{"an error", access.Report{Location: "/cp", Err: "stat /cp: permission denied"}, "stat /cp: permission denied"},
		{"an earlier version's words", access.Report{Location: "/cp", Reason: "uid 185 may not create files in /cp"}, "uid 185 may not create files in /cp"},
	}
	for _, c := range cases {
		if got := commands.AccessReason(&c.r); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	gcs := access.GCS("gs://spark/cp", "gs://spark", nil, true)
	if got, want := commands.AccessNote(&gcs), "testIamPermissions answers for the identity streamwatch calls GCS with, not for the job's; job_user was not judged"; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := commands.AccessNote(&access.Report{Note: "an earlier note"}); got != "an earlier note" {
		t.Errorf("an earlier version's note: %q", got)
	}
}

// TestAccessReasonOfALocalCheck: the access check of a real 0555 checkpoint, worded: the job's
// user, the folders, the owner, the mode and why.
func TestAccessReasonOfALocalCheck(t *testing.T) {
	ckpt := filepath.Join(storagetest.SharedTempDir(t), "ckpt") // every directory above it searchable
	for _, d := range []string{ckpt, filepath.Join(ckpt, "offsets")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Join(ckpt, "offsets"), ckpt} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(ckpt, 0o755); os.Chmod(filepath.Join(ckpt, "offsets"), 0o755) })
	r := access.Check(ckpt, access.User{UID: 185, GIDs: []int{185}, Whose: "job_user"})
	got := commands.AccessReason(&r)
	for _, want := range []string{"uid 185 groups [185] (job_user) may not create files in " + ckpt + ", offsets/ (owner ", "mode dr-xr-xr-x (0555)", "the other bits r-x lack write"} {
		if !strings.Contains(got, want) {
			t.Errorf("reason %q lacks %q", got, want)
		}
	}
}
