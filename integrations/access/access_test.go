package access

import (
	"io/fs"
	"strings"
	"testing"
)

func TestParseACLRoundTrip(t *testing.T) {
	a := ACL{{TagUserObj, -1, 7}, {TagUser, 185, 7}, {TagGroupObj, -1, 5}, {TagGroup, 4242, 5}, {TagMask, -1, 7}, {TagOther, -1, 5}}
	got, err := ParseACL(a.Encode())
	if err != nil || got.String() != a.String() || a.String() != "user::rwx,user:185:rwx,group::r-x,group:4242:r-x,mask::rwx,other::r-x" {
		t.Fatalf("round trip: %v %v (%s)", got, err, a)
	}
	for _, bad := range [][]byte{nil, {2, 0, 0}, {3, 0, 0, 0}, append(ACL{{TagOther, -1, 5}}.Encode(), 1)} {
		if _, err := ParseACL(bad); err == nil {
			t.Errorf("ParseACL(%v) accepted", bad)
		}
	}
	if _, err := ParseACL([]byte{2, 0, 0, 0, 0x40, 0, 7, 0, 0, 0, 0, 0}); err == nil || !strings.Contains(err.Error(), "unknown tag") {
		t.Errorf("unknown tag: %v", err)
	}
}

// TestAllowedReasons: what the reply says when a user may not write (the kernel test proves
// the verdicts; this one the sentences).
func TestAllowedReasons(t *testing.T) {
	spark := User{UID: 185, GIDs: []int{185}}
	root := Dir{Path: "/cp", UID: 0, GID: 0, Owner: "root", Group: "root", Mode: fs.ModeDir | 0o555}
	cases := []struct {
		name string
		dir  Dir
		user User
		ok   bool
		why  string
	}{
		{"others", root, spark, false, "it is neither the owner nor in the group root, and the other bits r-x lack write"},
		{"root", root, User{UID: 0}, true, ""},
		{"root on a read-only mount", func() Dir { d := root; d.ReadOnlyMount = true; return d }(), User{UID: 0}, false, "its filesystem is mounted read-only"},
		{"root on an immutable directory", func() Dir { d := root; d.Immutable = true; return d }(), User{UID: 0}, false, "it is immutable (chattr +i)"},
		{"owner", func() Dir { d := root; d.UID = 185; return d }(), spark, false, "it is the owner, and the owner bits r-x lack write"},
		{"masked ACL", func() Dir {
			d := root
			d.Mode = fs.ModeDir | 0o755
			d.ACL = ACL{{TagUserObj, -1, 7}, {TagUser, 185, 7}, {TagGroupObj, -1, 5}, {TagMask, -1, 5}, {TagOther, -1, 5}}
			return d
		}(), spark, false, "the ACL entry user:185: rwx, limited by mask::r-x, lacks write"},
	}
	for _, c := range cases {
		ok, why := Allowed(c.dir, c.user, PermWrite|PermExec)
		if ok != c.ok || why != c.why {
			t.Errorf("%s: %v %q, want %v %q", c.name, ok, why, c.ok, c.why)
		}
	}
	r := Report{Location: "/cp", User: User{UID: 185, GIDs: []int{185}, Whose: "job_user"}}
	judge(&r, nil, []DirJudgment{{Dir: root}, {Name: "offsets/", Dir: func() Dir { d := root; d.Path = "/cp/offsets"; return d }()}})
	want := "uid 185 groups [185] (job_user) may not create files in /cp, offsets/ (owner root:root, mode dr-xr-xr-x (0555), no ACL): it is neither the owner nor in the group root, and the other bits r-x lack write"
	if r.Writable || r.Reason != want {
		t.Errorf("reason %q, want it to start %q", r.Reason, want)
	}
}
