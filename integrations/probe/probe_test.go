package probe_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/access"
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
		// why are the codes of Result.Why (commands' TestProbeReasons words them).
		why []probe.Code
	}{
		{
			name:  "healthy checkpoint with the write test",
			spec:  ptr(healthy()),
			opts:  probe.Options{Write: true, StaleAfter: 10 * time.Minute, SlowAfter: 2 * time.Second},
			want:  probe.StatusOK,
			steps: allSteps,
			why:   []probe.Code{probe.CodeHealthy},
		},
		{
			name:  "write test off",
			spec:  ptr(healthy()),
			opts:  probe.Options{Write: false, StaleAfter: 10 * time.Minute},
			want:  probe.StatusOK,
			steps: readSteps,
			why:   []probe.Code{probe.CodeHealthy},
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
			name:  "missing location",
			opts:  probe.Options{Write: true},
			want:  probe.StatusFailed,
			class: probe.ClassNotFound,
			steps: []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -", "write -", "read back -", "delete -"},
			why:   []probe.Code{probe.CodeNoLocation},
		},
		{
			name:  "location is a file",
			setup: func(t *testing.T, ckpt string) { writeFile(t, ckpt, "not a checkpoint") },
			want:  probe.StatusFailed,
			class: probe.ClassNotFound,
			steps: []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -"},
			why:   []probe.Code{probe.CodeIsFile},
		},
		{
			name:  "empty directory",
			setup: func(t *testing.T, ckpt string) { mkdir(t, ckpt) },
			want:  probe.StatusFailed,
			class: probe.ClassNotFound,
			steps: []string{"stat ✓", "list ✗", "read metadata -", "read offsets -", "read commits -"},
			why:   []probe.Code{probe.CodeNoCheckpointFiles},
		},
		{
			name: "corrupt newest offsets file",
			spec: ptr(func() sparktest.Spec {
				s := healthy()
				s.Files = map[string]string{"offsets/5": "v1\n{\"batchWatermarkMs\":0,\"batchTimes"}
				return s
			}()),
			opts:  probe.Options{Write: true},
			want:  probe.StatusFailed,
			class: probe.ClassCorrupt,
			steps: []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✗", "read commits -", "write -", "read back -", "delete -"},
			why:   []probe.Code{probe.CodeCorruptFile},
		},
		{
			name: "corrupt metadata",
			spec: ptr(func() sparktest.Spec {
				s := healthy()
				s.Files = map[string]string{"metadata": `{"id":`}
				return s
			}()),
			want:  probe.StatusFailed,
			class: probe.ClassCorrupt,
			steps: []string{"stat ✓", "list ✓", "read metadata ✗", "read offsets -", "read commits -"},
			why:   []probe.Code{probe.CodeCorruptFile},
		},
		{
			name: "newest commit from a newer Spark",
			spec: ptr(func() sparktest.Spec {
				s := healthy()
				s.Files = map[string]string{"commits/5": "v9\n{}"}
				return s
			}()),
			want:  probe.StatusFailed,
			class: probe.ClassCorrupt,
			steps: []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✗"},
			why:   []probe.Code{probe.CodeCorruptFile},
		},
		{
			name:  "stale commits",
			spec:  ptr(healthy()),
			opts:  probe.Options{Write: true, StaleAfter: 10 * time.Minute, Now: fixed(lastCommit.Add(30 * time.Minute))},
			want:  probe.StatusDegraded,
			steps: allSteps,
			why:   []probe.Code{probe.CodeStale},
		},
		{
			name:  "no commit yet",
			spec:  &sparktest.Spec{LatestBatch: 0, LatestCommit: -1},
			opts:  probe.Options{StaleAfter: 10 * time.Minute},
			want:  probe.StatusDegraded,
			steps: readSteps,
			why:   []probe.Code{probe.CodeNeverCommitted},
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
			name:  "slow storage",
			spec:  ptr(healthy()),
			opts:  probe.Options{Write: true, SlowAfter: 500 * time.Millisecond, Now: ticking(lastCommit.Add(time.Minute), time.Second)},
			want:  probe.StatusDegraded,
			steps: allSteps,
			why:   []probe.Code{probe.CodeSlow},
		},
		{
			name:  "relative probe path",
			spec:  ptr(healthy()),
			opts:  probe.Options{Write: true, Path: "tools/probe"},
			want:  probe.StatusOK,
			steps: allSteps,
		},
		{
			name:  "probe path inside a Spark directory",
			spec:  ptr(healthy()),
			opts:  probe.Options{Write: true, Path: "offsets/probe"},
			want:  probe.StatusFailed,
			class: probe.ClassUnavailable,
			steps: []string{"stat ✓", "list ✓", "read metadata ✓", "read offsets ✓", "read commits ✓", "write ✗", "read back -", "delete -"},
			why:   []probe.Code{probe.CodeBadProbePath},
		},
		{
			name:     "unsupported scheme",
			location: func(string) string { return "hdfs://namenode:8020/ckpt" },
			want:     probe.StatusFailed,
			class:    probe.ClassUnavailable,
			steps:    []string{"stat ✗", "list -", "read metadata -", "read offsets -", "read commits -"},
			why:      []probe.Code{probe.CodeCannotOpen},
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
			if tc.why != nil && !slices.Equal(whyCodes(r), tc.why) {
				t.Errorf("why %+v, want the codes %q", r.Why, tc.why)
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
	found := map[string]probe.Finding{}
	for _, s := range r.Steps {
		if s.Found != nil {
			found[s.Name] = *s.Found
		}
	}
	planned := time.Date(2025, 1, 1, 0, 5, 0, 0, time.UTC)
	for step, want := range map[string]probe.Finding{
		probe.StepStat: {Code: probe.CodeDirExists},
		probe.StepList: {Code: probe.CodeListed, N: 4, Logs: []probe.LogDir{
			{Dir: "offsets", Present: true, Files: 6, First: 0, Last: 5}, {Dir: "commits", Present: true, Files: 6, First: 0, Last: 5}}},
		probe.StepReadMetadata: {Code: probe.CodeQueryID, ID: sparktest.DefaultQueryID},
		probe.StepReadOffsets:  {Code: probe.CodeOffsetsRead, Batch: 5, N: 1, At: planned, Age: now.Sub(planned)},
		probe.StepReadCommits:  {Code: probe.CodeCommitRead, Batch: 5, At: lastCommit.UTC(), Age: 90 * time.Second},
		probe.StepReadBack:     {Code: probe.CodeBytesMatch, N: found[probe.StepWrite].N},
	} {
		if got := found[step]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s found %+v, want %+v", step, got, want)
		}
	}
	for _, step := range []string{probe.StepWrite, probe.StepDelete} {
		if f := found[step]; !strings.HasPrefix(f.Path, filepath.Join(ckpt, probe.DefaultDir, "probe-")) {
			t.Errorf("%s found %+v, want the probe object in %s", step, f, filepath.Join(ckpt, probe.DefaultDir))
		}
	}
	if w := found[probe.StepWrite]; w.Code != probe.CodeWrote || w.N == 0 {
		t.Errorf("write found %+v, want the bytes written", w)
	}
	if want := (probe.Finding{Code: probe.CodeHealthy, Path: ckpt, Write: true, Committed: true, Age: 90 * time.Second}); !reflect.DeepEqual(r.Why, []probe.Finding{want}) {
		t.Errorf("why %+v, want %+v", r.Why, want)
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
		seen[r.Steps[5].Found.Path] = true
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
	if d := r.Steps[5].Found; d == nil || !strings.HasPrefix(d.Path, filepath.Join(elsewhere, "probe-")) {
		t.Errorf("write found %+v, want the object in %s", d, elsewhere)
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
	if want := []probe.Finding{{Code: probe.CodeCancelled, Step: probe.StepStat, Path: ckpt}}; !reflect.DeepEqual(r.Why, want) {
		t.Errorf("why %+v, want %+v", r.Why, want)
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
		t.Errorf("status %s %s (%+v), want %s %s", r.Status, r.Class, r.Why, status, class)
	}
	if got := stepMarks(r); strings.Join(got, ", ") != strings.Join(steps, ", ") {
		t.Errorf("steps %q, want %q", got, steps)
	}
	if len(r.Why) == 0 || r.Reason != "" {
		t.Errorf("why %+v, reason %q: want codes and no words", r.Why, r.Reason)
	}
}

// whyKey is a result's reason as its codes and values, for tests to compare: "code step path
// cause <cause> write committed batch N age D after D", each part only when set; findings
// joined by "; ".
func whyKey(r probe.Result) string {
	var out []string
	for _, f := range r.Why {
		parts := []string{string(f.Code)}
		add := func(set bool, s ...string) {
			if set {
				parts = append(parts, s...)
			}
		}
		add(f.Step != "", f.Step)
		add(f.Path != "", f.Path)
		add(f.Cause != "", "cause", f.Cause)
		add(f.Write, "write")
		add(f.Committed, "committed")
		add(f.Batch != 0, "batch", fmt.Sprint(f.Batch))
		add(f.Age != 0, "age", f.Age.String())
		add(f.After != 0, "after", f.After.String())
		out = append(out, strings.Join(parts, " "))
	}
	return strings.Join(out, "; ")
}

// accessKey is an access judgment as its codes and values, for tests to compare: "judged
// <code>" or "not judged <code>", then its bucket, cause, error and missing permissions when
// set; "nil" for none.
func accessKey(a *access.Report) string {
	if a == nil {
		return "nil"
	}
	s := "judged " + string(a.Code)
	if !a.Judged() {
		s = "not judged " + string(a.Code)
	}
	for _, v := range append([]string{a.Bucket, a.Cause, a.Err}, a.Missing...) {
		if v != "" {
			s += " " + v
		}
	}
	return s
}

// whyCodes are the codes of a result's reason.
func whyCodes(r probe.Result) []probe.Code {
	var out []probe.Code
	for _, f := range r.Why {
		out = append(out, f.Code)
	}
	return out
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
