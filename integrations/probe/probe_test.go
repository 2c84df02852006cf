package probe_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/probe"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
)

var smsTopic = sparktest.Topic{Name: "client.replies.sms", Partitions: 3, RecordsPerBatch: 100}

// healthy is a running query: batches 0..5 planned and committed, a minute apart.
func healthy() sparktest.Spec {
	return sparktest.Spec{FirstBatch: 0, LatestBatch: 5, LatestCommit: 5, Topics: []sparktest.Topic{smsTopic}}
}

// fixed is a clock standing still at t.
func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

// ticking is a clock that advances by step on every reading, so every step takes step.
func ticking(start time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := start.Add(-step)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

var (
	readSteps  = []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓"}
	allSteps   = append(append([]string(nil), readSteps...), "write ✓", "read back ✓", "delete ✓")
	lastCommit = healthy().CommittedAt(5)
)

// stepMarks renders the steps as "name ✓", "name ✗" or "name -" (skipped).
func stepMarks(r probe.Result) []string {
	var out []string
	for _, s := range r.Steps {
		mark := "✓"
		switch {
		case s.Skipped:
			mark = "-"
		case !s.OK:
			mark = "✗"
		}
		out = append(out, s.Name+" "+mark)
	}
	return out
}

func TestRunLocal(t *testing.T) {
	tests := []struct {
		name string
		// spec is the checkpoint written at <tmp>/ckpt; nil leaves the directory out.
		spec *sparktest.Spec
		// setup changes the directory after the checkpoint is written.
		setup func(t *testing.T, ckpt string)
		// location turns the checkpoint directory into Options.Location; nil uses it as is.
		location func(ckpt string) string
		opts     probe.Options // Location and Now are filled in; Now defaults to a minute after the last commit
		want     probe.Status
		class    probe.Class
		steps    []string
		// reason holds substrings of Result.Reason; {ckpt} is the checkpoint directory.
		reason []string
	}{
		{
			name:   "healthy checkpoint with the write test",
			spec:   ptr(healthy()),
			opts:   probe.Options{Write: true, StaleAfter: 10 * time.Minute, SlowAfter: 2 * time.Second},
			want:   probe.StatusOK,
			steps:  allSteps,
			reason: []string{"the checkpoint at {ckpt} is readable and writable; the newest commit is 1m old"},
		},
		{
			name:   "write test off",
			spec:   ptr(healthy()),
			opts:   probe.Options{Write: false, StaleAfter: 10 * time.Minute},
			want:   probe.StatusOK,
			steps:  readSteps,
			reason: []string{"{ckpt} is readable;"},
		},
		{
			name:     "file:// location",
			spec:     ptr(healthy()),
			location: func(ckpt string) string { return "file://" + ckpt },
			opts:     probe.Options{Write: true, StaleAfter: 10 * time.Minute},
			want:     probe.StatusOK,
			steps:    allSteps,
		},
		{
			name:   "missing location",
			opts:   probe.Options{Write: true},
			want:   probe.StatusFailed,
			class:  probe.ClassNotFound,
			steps:  []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			reason: []string{"no checkpoint at {ckpt}: the location does not exist"},
		},
		{
			name:   "location is a file",
			setup:  func(t *testing.T, ckpt string) { writeFile(t, ckpt, "not a checkpoint") },
			want:   probe.StatusFailed,
			class:  probe.ClassNotFound,
			steps:  []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -"},
			reason: []string{"no checkpoint at {ckpt}: it is a file"},
		},
		{
			name:   "empty directory",
			setup:  func(t *testing.T, ckpt string) { mkdir(t, ckpt) },
			want:   probe.StatusFailed,
			class:  probe.ClassNotFound,
			steps:  []string{"stat ✓", "list ✗", "read metadata -", "read offsets -", "read commits -"},
			reason: []string{"no checkpoint at {ckpt}: it holds no metadata, offsets/ or commits/"},
		},
		{
			name: "corrupt newest offsets file",
			spec: ptr(func() sparktest.Spec {
				s := healthy()
				s.Files = map[string]string{"offsets/5": "v1\n{\"batchWatermarkMs\":0,\"batchTimes"}
				return s
			}()),
			opts:   probe.Options{Write: true},
			want:   probe.StatusFailed,
			class:  probe.ClassCorrupt,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✗", "read commits -", "write -", "read back -", "delete -"},
			reason: []string{"corrupt {ckpt}/offsets/5: line 2: truncated"},
		},
		{
			name: "corrupt metadata",
			spec: ptr(func() sparktest.Spec {
				s := healthy()
				s.Files = map[string]string{"metadata": `{"id":`}
				return s
			}()),
			want:   probe.StatusFailed,
			class:  probe.ClassCorrupt,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✗", "read offsets -", "read commits -"},
			reason: []string{"corrupt {ckpt}/metadata: line 1: truncated"},
		},
		{
			name: "newest commit from a newer Spark",
			spec: ptr(func() sparktest.Spec {
				s := healthy()
				s.Files = map[string]string{"commits/5": "v9\n{}"}
				return s
			}()),
			want:   probe.StatusFailed,
			class:  probe.ClassCorrupt,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✗"},
			reason: []string{"corrupt {ckpt}/commits/5: line 1: unsupported version"},
		},
		{
			name:   "stale commits",
			spec:   ptr(healthy()),
			opts:   probe.Options{Write: true, StaleAfter: 10 * time.Minute, Now: fixed(lastCommit.Add(30 * time.Minute))},
			want:   probe.StatusDegraded,
			steps:  allSteps,
			reason: []string{"the checkpoint is stale: the newest commit, commits/5, is 30m old (stale after 10m)"},
		},
		{
			name:   "no commit yet",
			spec:   &sparktest.Spec{LatestBatch: 0, LatestCommit: -1},
			opts:   probe.Options{StaleAfter: 10 * time.Minute},
			want:   probe.StatusDegraded,
			steps:  readSteps,
			reason: []string{"no batch has been committed yet"},
		},
		{
			name: "no metadata file",
			spec: ptr(func() sparktest.Spec {
				s := healthy()
				s.NoMetadata = true
				return s
			}()),
			opts:  probe.Options{StaleAfter: 10 * time.Minute},
			want:  probe.StatusOK,
			steps: readSteps,
		},
		{
			name:   "slow storage",
			spec:   ptr(healthy()),
			opts:   probe.Options{Write: true, SlowAfter: 500 * time.Millisecond, Now: ticking(lastCommit.Add(time.Minute), time.Second)},
			want:   probe.StatusDegraded,
			steps:  allSteps,
			reason: []string{"the storage is slow: stat took 1s, list took 1s,", "delete took 1s (slow after 500ms)"},
		},
		{
			name:  "relative probe path",
			spec:  ptr(healthy()),
			opts:  probe.Options{Write: true, Path: "tools/probe"},
			want:  probe.StatusOK,
			steps: allSteps,
		},
		{
			name:   "probe path inside a Spark directory",
			spec:   ptr(healthy()),
			opts:   probe.Options{Write: true, Path: "offsets/probe"},
			want:   probe.StatusFailed,
			class:  probe.ClassUnavailable,
			steps:  []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓", "write ✗", "read back -", "delete -"},
			reason: []string{`cannot use probe path "offsets/probe": it is inside the checkpoint's offsets/, which belongs to Spark`},
		},
		{
			name:     "unsupported scheme",
			location: func(string) string { return "hdfs://namenode:8020/ckpt" },
			want:     probe.StatusFailed,
			class:    probe.ClassUnavailable,
			steps:    []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -"},
			reason:   []string{`cannot open checkpoint location "hdfs://namenode:8020/ckpt": unsupported scheme "hdfs"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ckpt := filepath.Join(t.TempDir(), "ckpt")
			if tc.spec != nil {
				if err := sparktest.WriteCheckpoint(ckpt, *tc.spec); err != nil {
					t.Fatal(err)
				}
			}
			if tc.setup != nil {
				tc.setup(t, ckpt)
			}
			opt := tc.opts
			opt.Pipeline = "sms-replies"
			opt.Location = ckpt
			if tc.location != nil {
				opt.Location = tc.location(ckpt)
			}
			if opt.Now == nil {
				opt.Now = fixed(lastCommit.Add(time.Minute))
			}
			r := probe.Run(t.Context(), opt)
			checkResult(t, r, tc.want, tc.class, tc.steps)
			for _, want := range tc.reason {
				if want = strings.ReplaceAll(want, "{ckpt}", ckpt); !strings.Contains(r.Reason, want) {
					t.Errorf("reason %q, want it to contain %q", r.Reason, want)
				}
			}
			if (r.Status == probe.StatusFailed) != (r.Err != "") {
				t.Errorf("status %s with error %q", r.Status, r.Err)
			}
			if r.Status != probe.StatusFailed && tc.spec != nil && tc.spec.LatestCommit >= 0 && !r.NewestCommit.Equal(tc.spec.CommittedAt(tc.spec.LatestCommit)) {
				t.Errorf("newest commit %v, want %v", r.NewestCommit, tc.spec.CommittedAt(tc.spec.LatestCommit))
			}
			if tc.spec != nil && r.Owner == nil && tc.location == nil {
				t.Errorf("no ownership for a local checkpoint")
			}
			// The write test leaves nothing behind.
			for _, dir := range []string{filepath.Join(ckpt, probe.DefaultDir), filepath.Join(ckpt, "tools", "probe")} {
				if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
					t.Errorf("%s holds %d entries after the probe, want none", dir, len(entries))
				}
			}
			if t.Failed() {
				t.Logf("result: %+v", r)
			}
		})
	}
}

func TestRunHealthyDetails(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, healthy()); err != nil {
		t.Fatal(err)
	}
	now := lastCommit.Add(90 * time.Second)
	r := probe.Run(t.Context(), probe.Options{Pipeline: "sms-replies", Location: ckpt, Write: true, StaleAfter: 10 * time.Minute, Now: fixed(now)})
	checkResult(t, r, probe.StatusOK, probe.ClassNone, allSteps)
	if r.CommitAge != 90*time.Second || !r.Started.Equal(now) {
		t.Errorf("commit age %v, started %v; want 1m30s at %v", r.CommitAge, r.Started, now)
	}
	o := r.Owner
	if o == nil {
		t.Fatal("no ownership")
	}
	if o.Dir != ckpt || o.UID != os.Getuid() || !o.Mode.IsDir() || o.ProcUID != os.Geteuid() || len(o.ProcGroups) == 0 || o.ProcGroups[0] != os.Getegid() || !o.CanWrite {
		t.Errorf("ownership %+v", o)
	}
	details := map[string]string{}
	for _, s := range r.Steps {
		details[s.Name] = s.Detail
	}
	for step, want := range map[string]string{
		probe.StepList:         "offsets/ 0..5 (6 files), commits/ 0..5 (6 files)",
		probe.StepReadMetadata: "query id " + sparktest.DefaultQueryID,
		probe.StepReadOffsets:  "offsets/5: 1 source(s), planned 2025-01-01T00:05:00Z",
		probe.StepReadCommits:  "commits/5: committed 2025-01-01T00:05:30Z (1m30s ago)",
		probe.StepWrite:        filepath.Join(ckpt, probe.DefaultDir, "probe-"),
		probe.StepDelete:       "deleted " + filepath.Join(ckpt, probe.DefaultDir, "probe-"),
	} {
		if !strings.Contains(details[step], want) {
			t.Errorf("%s detail %q, want it to contain %q", step, details[step], want)
		}
	}
	if a := r.Access; a == nil || !a.Judged() || !a.Writable {
		t.Errorf("access %+v, want judged writable", a)
	}
}

func TestRunDistinctProbeObjects(t *testing.T) {
	// Two probes at the same instant (the scheduler and a command) must not share an object.
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, healthy()); err != nil {
		t.Fatal(err)
	}
	opt := probe.Options{Location: ckpt, Write: true, Now: fixed(lastCommit)}
	seen := map[string]bool{}
	for range 2 {
		r := probe.Run(t.Context(), opt)
		checkResult(t, r, probe.StatusOK, probe.ClassNone, allSteps)
		seen[r.Steps[5].Detail] = true
	}
	if len(seen) != 2 {
		t.Errorf("two probes wrote the same object: %v", seen)
	}
}

func TestRunSeparateProbeLocation(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, healthy()); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	r := probe.Run(t.Context(), probe.Options{Location: ckpt, Path: "file://" + elsewhere, Write: true, Now: fixed(lastCommit)})
	checkResult(t, r, probe.StatusOK, probe.ClassNone, allSteps)
	if d := r.Steps[5].Detail; !strings.Contains(d, filepath.Join(elsewhere, "probe-")) {
		t.Errorf("write detail %q, want the object in %s", d, elsewhere)
	}
	if _, err := os.Stat(filepath.Join(ckpt, probe.DefaultDir)); !os.IsNotExist(err) {
		t.Errorf("the checkpoint got a probe directory: %v", err)
	}
}

func TestRunCancelled(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "ckpt")
	if err := sparktest.WriteCheckpoint(ckpt, healthy()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := probe.Run(ctx, probe.Options{Location: ckpt, Write: true})
	checkResult(t, r, probe.StatusFailed, probe.ClassUnavailable, []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"})
	if !strings.Contains(r.Reason, "cancelled") {
		t.Errorf("reason %q, want it to say the probe was cancelled", r.Reason)
	}
}

func TestOwnershipOfMissingLocation(t *testing.T) {
	parent := t.TempDir()
	r := probe.Run(t.Context(), probe.Options{Location: filepath.Join(parent, "sms-replies")})
	checkResult(t, r, probe.StatusFailed, probe.ClassNotFound, []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -"})
	if r.Owner == nil || r.Owner.Dir != parent {
		t.Errorf("ownership %+v, want the existing parent %s", r.Owner, parent)
	}
}

func TestExitCode(t *testing.T) {
	for status, want := range map[probe.Status]int{probe.StatusOK: 0, probe.StatusFailed: 1, probe.StatusDegraded: 2, "": 1} {
		if got := (probe.Result{Status: status}).ExitCode(); got != want {
			t.Errorf("ExitCode(%q) = %d, want %d", status, got, want)
		}
	}
}

func checkResult(t *testing.T, r probe.Result, status probe.Status, class probe.Class, steps []string) {
	t.Helper()
	if r.Status != status || r.Class != class {
		t.Errorf("status %s %s (%s), want %s %s", r.Status, r.Class, r.Reason, status, class)
	}
	if got := stepMarks(r); strings.Join(got, ", ") != strings.Join(steps, ", ") {
		t.Errorf("steps %q, want %q", got, steps)
	}
	if r.Reason == "" {
		t.Error("no reason")
	}
}

func ptr[T any](v T) *T { return &v }

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
