//go:build linux

package access_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
	"golang.org/x/sys/unix"
)

const (
	childEnv     = "STREAMWATCH_ACCESS_TEST_DIRS" // JSON list of directories the child tries to write in
	attemptLine  = "ACCESS-ATTEMPTS "
	nobody       = 65534
	otherGroup   = 4242 // a supplementary group of the child
	aclAttribute = "system.posix_acl_access"
)

// kernelCase is a directory set up with an owner, a mode and maybe an ACL, and what the
// table's author expects; the kernel has the last word.
type kernelCase struct {
	name   string
	uid    int
	gid    int
	mode   fs.FileMode
	acl    access.ACL
	parent fs.FileMode // non-zero: the directory sits in a parent with this mode (root-owned)
	want   bool
}

func entry(tag, id, perm int) access.ACLEntry { return access.ACLEntry{Tag: tag, ID: id, Perm: perm} }

// acl builds an access ACL around named entries: user::, group::, other:: and the mask.
func acl(user, group, mask, other int, named ...access.ACLEntry) access.ACL {
	a := access.ACL{entry(access.TagUserObj, -1, user)}
	var groups access.ACL
	for _, e := range named {
		if e.Tag == access.TagUser {
			a = append(a, e)
		} else {
			groups = append(groups, e)
		}
	}
	a = append(a, entry(access.TagGroupObj, -1, group))
	a = append(a, groups...)
	if mask >= 0 {
		a = append(a, entry(access.TagMask, -1, mask))
	}
	return append(a, entry(access.TagOther, -1, other))
}

// TestJudgmentMatchesKernel sets up directories with owners, modes and ACLs, judges whether
// an unprivileged user (uid 65534, groups 65534 and 4242) may create files in each, and then
// has that user really try, in a re-executed copy of this test binary running with those
// credentials. The judgment must agree with the kernel on every directory. Root ignores mode
// bits, so the attempt must run as another uid: CI runs as root; as another user the test
// judges and attempts as itself on the directories it can set up.
func TestJudgmentMatchesKernel(t *testing.T) {
	if dirs := os.Getenv(childEnv); dirs != "" {
		attempt(dirs)
		return
	}
	base := storagetest.SharedTempDir(t)
	if os.Geteuid() != 0 {
		kernelAsSelf(t, base)
		return
	}
	const rwx, rx, r = 7, 5, 4
	cases := []kernelCase{
		{name: "root's 0755", uid: 0, gid: 0, mode: 0o755, want: false},
		{name: "root's 0777", uid: 0, gid: 0, mode: 0o777, want: true},
		{name: "own 0555", uid: nobody, gid: 0, mode: 0o555, want: false},
		{name: "own 0755", uid: nobody, gid: 0, mode: 0o755, want: true},
		{name: "own 0575: the owner bits decide, not the group's", uid: nobody, gid: 0, mode: 0o575, want: false},
		{name: "supplementary group 0775", uid: 0, gid: otherGroup, mode: 0o775, want: true},
		{name: "in the group: 0757's other bits do not apply", uid: 0, gid: otherGroup, mode: 0o757, want: false},
		{name: "others 0757", uid: 0, gid: 0, mode: 0o757, want: true},
		{name: "ACL names the user", uid: 0, gid: 0, mode: 0o755, acl: acl(rwx, rx, rwx, rx, entry(access.TagUser, nobody, rwx)), want: true},
		{name: "ACL names the user, the mask takes write away", uid: 0, gid: 0, mode: 0o755, acl: acl(rwx, rx, rx, rwx, entry(access.TagUser, nobody, rwx)), want: false},
		{name: "ACL names a group of the user", uid: 0, gid: 0, mode: 0o755, acl: acl(rwx, rx, rwx, rx, entry(access.TagGroup, otherGroup, rwx)), want: true},
		{name: "ACL names a group without write: other:: is not consulted", uid: 0, gid: 0, mode: 0o755, acl: acl(rwx, rx, rwx, rwx, entry(access.TagGroup, otherGroup, rx)), want: false},
		{name: "ACL with an empty mask: the kernel uses the other bits", uid: 0, gid: 0, mode: 0o755, acl: acl(rwx, rx, 0, rwx, entry(access.TagUser, nobody, rwx)), want: true},
		{name: "ACL's owning group entry", uid: 0, gid: otherGroup, mode: 0o755, acl: acl(rwx, rwx, rwx, 0, entry(access.TagUser, 1234, r)), want: true},
		{name: "ACL names another user only", uid: 0, gid: 0, mode: 0o755, acl: acl(rwx, rx, rwx, rx, entry(access.TagUser, 1234, rwx)), want: false},
		{name: "ACL on the owner's own directory does not matter", uid: nobody, gid: 0, mode: 0o555, acl: acl(rx, rwx, rwx, rwx, entry(access.TagUser, nobody, rwx)), want: false},
		{name: "a parent it may not search", uid: 0, gid: 0, mode: 0o777, parent: 0o700, want: false},
		{name: "a parent it may search", uid: 0, gid: 0, mode: 0o777, parent: 0o711, want: true},
	}
	user := access.User{UID: nobody, GIDs: []int{nobody, otherGroup}}
	var dirs []string
	judged := map[string]access.Report{}
	for i, c := range cases {
		dir := setUp(t, base, i, c)
		dirs = append(dirs, dir)
		judged[dir] = access.Check(dir, user)
	}
	got := runAs(t, base, nobody, []uint32{otherGroup}, dirs)
	for i, c := range cases {
		dir := dirs[i]
		rep, created := judged[dir], got[dir]
		if !rep.Judged() {
			t.Errorf("%s: not judged: %s", c.name, rep.Err)
			continue
		}
		if rep.Writable != created.Created {
			t.Errorf("%s: judged writable=%v (%s %+v), the kernel %s", c.name, rep.Writable, rep.Code, rep.Dirs, created)
		}
		if c.want != created.Created {
			t.Errorf("%s: the table expects writable=%v, the kernel %s (fix the table)", c.name, c.want, created)
		}
	}
	if t.Failed() {
		for _, d := range dirs {
			r := judged[d]
			t.Logf("%s\n  %+v", d, r)
		}
	}

	t.Run("root may write wherever the mount is writable", func(t *testing.T) {
		dir := setUp(t, base, 100, kernelCase{uid: nobody, gid: nobody, mode: 0o500})
		rep := access.Check(dir, access.User{UID: 0, GIDs: []int{0}})
		f, err := os.CreateTemp(dir, "root-")
		if err == nil {
			f.Close()
			os.Remove(f.Name())
		}
		if !rep.Writable || err != nil {
			t.Errorf("root: judged %v (%s %+v), created: %v", rep.Writable, rep.Code, rep.Dirs, err)
		}
	})
	t.Run("a read-only mount stops even root", func(t *testing.T) {
		dir := setUp(t, base, 101, kernelCase{uid: 0, gid: 0, mode: 0o777})
		if err := unix.Mount("streamwatch-test", dir, "tmpfs", unix.MS_RDONLY, "mode=0777"); err != nil {
			t.Skipf("cannot mount a read-only tmpfs here: %v", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(dir, 0) })
		rep := access.Check(dir, access.User{UID: 0, GIDs: []int{0}})
		_, err := os.CreateTemp(dir, "root-")
		if rep.Writable || !errors.Is(err, syscall.EROFS) {
			t.Errorf("read-only mount: judged %v (%s %+v), create: %v", rep.Writable, rep.Code, rep.Dirs, err)
		}
		if len(rep.Dirs) == 0 || rep.Dirs[0].Denied == nil || rep.Dirs[0].Denied.Code != access.DeniedReadOnlyMount {
			t.Errorf("judgment %+v does not say the mount is read-only", rep.Dirs)
		}
	})
}

// setUp makes the directory of case i, owned and moded as c says.
func setUp(t *testing.T, base string, i int, c kernelCase) string {
	t.Helper()
	parent := base
	if c.parent != 0 {
		parent = filepath.Join(base, fmt.Sprintf("parent-%d", i))
		mustDo(t, os.Mkdir(parent, 0o700))
		mustDo(t, os.Chmod(parent, c.parent))
	}
	dir := filepath.Join(parent, fmt.Sprintf("case-%d", i))
	mustDo(t, os.Mkdir(dir, 0o700))
	if os.Geteuid() == 0 {
		mustDo(t, os.Chown(dir, c.uid, c.gid))
	}
	mustDo(t, os.Chmod(dir, c.mode))
	if c.acl != nil {
		if err := unix.Setxattr(dir, aclAttribute, c.acl.Encode(), 0); err != nil {
			if errors.Is(err, unix.EOPNOTSUPP) {
				t.Skipf("the filesystem of %s has no POSIX ACLs", base)
			}
			t.Fatalf("set the ACL %s on %s: %v", c.acl, dir, err)
		}
		// The kernel stores what it accepted; reading it back proves the encoding.
		rep := access.Check(dir, access.User{UID: 1})
		if len(rep.Dirs) == 0 || rep.Dirs[0].Dir.ACL.String() != c.acl.String() {
			t.Fatalf("the ACL read back from %s is %v, set %s (%s)", dir, rep.Dirs, c.acl, rep.Err)
		}
	}
	return dir
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// outcome is what a real attempt to create a file did.
type outcome struct {
	Created bool   `json:"created"`
	Err     string `json:"error,omitempty"`
}

func (o outcome) String() string {
	if o.Created {
		return "let it create a file"
	}
	return "refused: " + o.Err
}

// attempt is the child: it tries to create (and then removes) a file in every directory and
// prints the outcomes.
func attempt(list string) {
	var dirs []string
	if err := json.Unmarshal([]byte(list), &dirs); err != nil {
		fmt.Println("bad list:", err)
		os.Exit(2)
	}
	out := map[string]outcome{}
	for _, d := range dirs {
		f, err := os.CreateTemp(d, "attempt-")
		if err != nil {
			out[d] = outcome{Err: err.Error()}
			continue
		}
		f.Close()
		os.Remove(f.Name())
		out[d] = outcome{Created: true}
	}
	b, _ := json.Marshal(out)
	fmt.Printf("%s%s\n", attemptLine, b)
}

// runAs re-executes this test as uid (primary group uid too, plus groups) and returns what its
// attempts did. The binary is copied into base, since the go tool's build directory is private.
func runAs(t *testing.T, base string, uid int, groups []uint32, dirs []string) map[string]outcome {
	t.Helper()
	bin := filepath.Join(base, "access.test")
	copyExecutable(t, os.Args[0], bin)
	list, _ := json.Marshal(dirs)
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^TestJudgmentMatchesKernel$", "-test.count=1")
	cmd.Dir = base
	cmd.Env = append(os.Environ(), childEnv+"="+string(list))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: groups}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run %s as uid %d: %v\nstdout:\n%s\nstderr:\n%s", bin, uid, err, stdout.String(), stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), attemptLine); ok {
			out := map[string]outcome{}
			if err := json.Unmarshal([]byte(line), &out); err != nil {
				t.Fatalf("decode the child's attempts: %v", err)
			}
			return out
		}
	}
	t.Fatalf("the child printed no attempts:\n%s\n%s", stdout.String(), stderr.String())
	return nil
}

func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	mustDo(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	mustDo(t, err)
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	mustDo(t, out.Close())
}

// kernelAsSelf is the test for a user who is not root: it can only own what it sets up, so it
// judges and attempts as itself on its own directories.
func kernelAsSelf(t *testing.T, base string) {
	self := access.Self()
	cases := []kernelCase{
		{name: "own 0555", mode: 0o555, want: false},
		{name: "own 0755", mode: 0o755, want: true},
		{name: "own 0575: the owner bits decide", mode: 0o575, want: false},
		{name: "own 0555 with an ACL naming itself: ACLs do not matter to the owner", mode: 0o555,
			acl: acl(5, 7, 7, 7, entry(access.TagUser, self.UID, 7)), want: false},
		{name: "own 0777 under a parent it may not search", mode: 0o777, parent: 0o600, want: false},
	}
	for i, c := range cases {
		dir := setUp(t, base, i, c)
		rep := access.Check(dir, self)
		f, err := os.CreateTemp(dir, "attempt-")
		if err == nil {
			f.Close()
			os.Remove(f.Name())
		}
		if !rep.Judged() || rep.Writable != (err == nil) || c.want != (err == nil) {
			t.Errorf("%s: judged %v (%s %+v %s), want %v, created: %v", c.name, rep.Writable, rep.Code, rep.Dirs, rep.Err, c.want, err)
		}
	}
}
