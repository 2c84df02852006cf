//go:build unix

package probe_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

const (
	// childEnv names the checkpoint a re-executed test binary probes as an unprivileged user.
	childEnv = "STREAMWATCH_PROBE_TEST_UNPRIVILEGED_CHECKPOINT"
	// resultPrefix starts the line on which the child prints its result.
	resultPrefix = "PROBE-RESULT "
	nobody       = 65534
)

// TestWriteRefusedByPermissions probes a checkpoint the probing user can read but not write.
// Root ignores mode bits, so as root the test re-executes itself as uid and gid 65534; the
// child prints its Result as JSON and the parent judges it.
func TestWriteRefusedByPermissions(t *testing.T) {
	if ckpt := os.Getenv(childEnv); ckpt != "" {
		r := probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, Write: true})
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s%s\n", resultPrefix, out)
		return
	}

	// A directory every path component of which others may traverse.
	dir := storagetest.SharedTempDir(t)
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if info, err := os.Stat(d); err != nil || info.Mode().Perm()&0o001 == 0 {
			t.Skipf("%s is not traversable by other users (%v); set TMPDIR to a directory that is", d, err)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	ckpt := filepath.Join(dir, "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, healthy()); err != nil {
		t.Fatal(err)
	}

	var r probe.Result
	wantUID, wantMode := os.Getuid(), fs.FileMode(0o555)
	if os.Geteuid() == 0 {
		// Readable by everyone, writable by its owner (root) only, whatever the umask.
		chmodTree(t, ckpt, 0o755, 0o644)
		wantUID, wantMode = 0, 0o755
		r = runAsNobody(t, dir, ckpt)
	} else {
		chmodTree(t, ckpt, 0o555, 0o444)
		t.Cleanup(func() { chmodTree(t, ckpt, 0o755, 0o644) })
		r = probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, Write: true})
	}

	checkResult(t, r, probe.StatusFailed, probe.ClassPermissionDenied,
		[]string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓", "write ✗", "read back -", "delete -"})
	if w := r.Why[0]; w.Code != probe.CodePermissionDenied || w.Step != probe.StepWrite || !strings.HasPrefix(w.Path, filepath.Join(ckpt, probe.DefaultDir, "probe-")) {
		t.Errorf("why %+v, want permission denied writing in %s", r.Why, filepath.Join(ckpt, probe.DefaultDir))
	}
	if !strings.Contains(r.Err, "permission denied") {
		t.Errorf("raw error %q, want the EACCES text", r.Err)
	}
	o := r.Owner
	if o == nil {
		t.Fatal("no ownership")
	}
	if o.Dir != ckpt || o.UID != wantUID || o.Mode != fs.ModeDir|wantMode || o.CanWrite {
		t.Errorf("ownership %+v, want %s owned by uid %d, mode %v, not writable", o, ckpt, wantUID, fs.ModeDir|wantMode)
	}
	if o.ProcUID != os.Geteuid() && os.Geteuid() != 0 || len(o.ProcGroups) == 0 {
		t.Errorf("ownership %+v, want who the probe runs as", o)
	}
	if os.Geteuid() == 0 && (o.ProcUID != nobody || o.ProcGroups[0] != nobody || o.Owner != "root") {
		t.Errorf("ownership %+v, want root's directory probed by uid and gid %d", o, nobody)
	}
	if entries, err := os.ReadDir(ckpt); err != nil || len(entries) != 4 {
		t.Errorf("the checkpoint changed: %d entries, %v", len(entries), err)
	}
	if t.Failed() {
		t.Logf("result: %+v", r)
	}
}

// runAsNobody re-executes this test as uid and gid 65534 against ckpt and returns the result
// it prints. The binary is copied into dir, since the go tool's build directory is private.
func runAsNobody(t *testing.T, dir, ckpt string) probe.Result {
	t.Helper()
	bin := filepath.Join(dir, "probe.test")
	copyExecutable(t, os.Args[0], bin)
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childEnv+"="+ckpt)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run %s as uid %d: %v\nstdout:\n%s\nstderr:\n%s", bin, nobody, err, stdout.String(), stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
			var r probe.Result
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("decode the child's result: %v\n%s", err, line)
			}
			return r
		}
	}
	t.Fatalf("the child printed no result:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	return probe.Result{}
}

func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func chmodTree(t *testing.T, root string, dirMode, fileMode fs.FileMode) {
	t.Helper()
	// Directories last, so that a read-only mode does not stop the walk.
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		return os.Chmod(p, fileMode)
	})
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		err = os.Chmod(dirs[i], dirMode)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestHungStorageTimesOut stands a FIFO in for metadata: opening it blocks the way a hung NFS
// mount does, and the probe must give up when its context ends.
func TestHungStorageTimesOut(t *testing.T) {
	spec := healthy()
	spec.NoMetadata = true
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, spec); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(ckpt, "metadata")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	r := probe.Run(ctx, probe.Options{Location: ckpt, Write: true})
	checkResult(t, r, probe.StatusFailed, probe.ClassTimeout,
		[]string{"stat ✓", "list ✓", "read metadata ✗", "read offsets -", "read commits -", "write -", "read back -", "delete -"})
	if want := []probe.Finding{{Code: probe.CodeTimedOut, Step: probe.StepReadMetadata, Path: fifo}}; !reflect.DeepEqual(r.Why, want) {
		t.Errorf("why %+v, want %+v", r.Why, want)
	}
	// Release the blocked open (O_RDWR on a FIFO does not block on Linux) so its goroutine ends.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestReadOnlyProbeJudgesTheJobsAccess: without writing, the probe says the job's user may not
// create files in a 0555 checkpoint it does not own, naming the owner, the mode and the uid;
// for a user who may (uid 0), the same checkpoint is OK.
func TestReadOnlyProbeJudgesTheJobsAccess(t *testing.T) {
	ckpt := filepath.Join(storagetest.SharedTempDir(t), "ckpt") // every directory above it searchable
	if err := sparktest.WriteCheckpoint(ckpt, healthy()); err != nil {
		t.Fatal(err)
	}
	chmodTree(t, ckpt, 0o555, 0o444)
	t.Cleanup(func() { chmodTree(t, ckpt, 0o755, 0o644) })
	spark := &access.User{UID: 185, GIDs: []int{185}, Whose: "job_user"}
	r := probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, JobUser: spark})
	if r.Status != probe.StatusFailed || r.Class != probe.ClassPermissionDenied {
		t.Fatalf("probe %s %s: %+v", r.Status, r.Class, r.Why)
	}
	if !r.RefusedByAccess() || r.Access.Dirs[0].Dir.Path != ckpt || r.Access.Dirs[0].Dir.Mode != fs.ModeDir|0o555 || r.Access.User.UID != 185 {
		t.Errorf("why %+v, access %+v: want the access check's refusal for uid 185 of %s, mode 0555", r.Why, r.Access, ckpt)
	}
	if entries, err := os.ReadDir(ckpt); err != nil || len(entries) != 4 {
		t.Errorf("the read-only probe changed the checkpoint: %d entries, %v", len(entries), err)
	}
	r = probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, JobUser: &access.User{UID: 0, GIDs: []int{0}, Whose: "job_user"}})
	if r.Status != probe.StatusOK || r.Access == nil || !r.Access.Writable {
		t.Errorf("uid 0: %s %+v %+v", r.Status, r.Why, r.Access)
	}
}
