package access

import (
	"io/fs"
	"reflect"
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

// TestAllowedReasons: why a user may not write, as a code and values (the kernel test proves
// the verdicts; commands' TestAccessWords the sentences).
func TestAllowedReasons(t *testing.T) {
	spark := User{UID: 185, GIDs: []int{185}}
	root := Dir{Path: "/cp", UID: 0, GID: 0, Owner: "root", Group: "root", Mode: fs.ModeDir | 0o555}
	cases := []struct {
		name string
		dir  Dir
		user User
		ok   bool
		why  Denial
	}{
		{"others", root, spark, false, Denial{Code: DeniedOtherBits, Want: 3, Perm: 5, Have: 5, Group: "root"}},
		{"root", root, User{UID: 0}, true, Denial{}},
		{"root on a read-only mount", func() Dir { d := root; d.ReadOnlyMount = true; return d }(), User{UID: 0}, false, Denial{Code: DeniedReadOnlyMount, Want: 3}},
		{"root on an immutable directory", func() Dir { d := root; d.Immutable = true; return d }(), User{UID: 0}, false, Denial{Code: DeniedImmutable, Want: 3}},
		{"owner", func() Dir { d := root; d.UID = 185; return d }(), spark, false, Denial{Code: DeniedOwnerBits, Want: 3, Perm: 5, Have: 5}},
		{"masked ACL", func() Dir {
			d := root
			d.Mode = fs.ModeDir | 0o755
			d.ACL = ACL{{TagUserObj, -1, 7}, {TagUser, 185, 7}, {TagGroupObj, -1, 5}, {TagMask, -1, 5}, {TagOther, -1, 5}}
			return d
		}(), spark, false, Denial{Code: DeniedACLEntry, Want: 3, Entry: "user:185:", Perm: 7, Have: 5, Mask: 5, Masked: true}},
	}
	for _, c := range cases {
		ok, why := Allowed(c.dir, c.user, PermWrite|PermExec)
		if ok != c.ok || !reflect.DeepEqual(why, c.why) {
			t.Errorf("%s: %v %+v, want %v %+v", c.name, ok, why, c.ok, c.why)
		}
	}
	r := Report{Location: "/cp", User: User{UID: 185, GIDs: []int{185}, Whose: "job_user"}}
	judge(&r, nil, []DirJudgment{{Dir: root}, {Name: "offsets/", Dir: func() Dir { d := root; d.Path = "/cp/offsets"; return d }()}})
	others := &Denial{Code: DeniedOtherBits, Want: 3, Perm: 5, Have: 5, Group: "root"}
	if r.Writable || r.Code != ReportNotWritable || len(r.Dirs) != 2 || !reflect.DeepEqual(r.Dirs[0].Denied, others) || !reflect.DeepEqual(r.Dirs[1].Denied, others) {
		t.Errorf("report %+v, want both directories denied: %+v", r, others)
	}
}
