package spark_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/spark"
	"github.com/streamwatch/streamwatch/integrations/spark/sparktest"
	"github.com/streamwatch/streamwatch/integrations/storage"
)

const fixtures = "testdata/spark-checkpoints"

// countingStore counts the files read through the Store interface.
type countingStore struct {
	storage.Store
	reads atomic.Int64
	lists atomic.Int64
	mu    sync.Mutex
	names []string
}

func newCountingStore(s storage.Store) *countingStore { return &countingStore{Store: s} }

func (c *countingStore) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	c.reads.Add(1)
	c.mu.Lock()
	c.names = append(c.names, name)
	c.mu.Unlock()
	return c.Store.Read(ctx, name)
}

func (c *countingStore) List(ctx context.Context, dir string) ([]storage.Entry, error) {
	c.lists.Add(1)
	return c.Store.List(ctx, dir)
}

func openLocal(t testing.TB, dir string) storage.Store {
	t.Helper()
	s, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func diagnose(t testing.TB, dir string, opts spark.Options) *spark.Report {
	t.Helper()
	r, err := spark.Diagnose(context.Background(), openLocal(t, dir), opts)
	if err != nil {
		t.Fatalf("diagnose %s: %v", dir, err)
	}
	return r
}

// at is a fixed clock.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }

// copyFixture copies a fixture checkpoint to a temp dir so that a test can set times or add files.
func copyFixture(t testing.TB, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join(fixtures, name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func setMtime(t testing.TB, path string, when time.Time) {
	t.Helper()
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

func writeCheckpoint(t testing.TB, spec sparktest.Spec) string {
	t.Helper()
	dir := t.TempDir()
	if err := sparktest.WriteCheckpoint(dir, spec); err != nil {
		t.Fatal(err)
	}
	return dir
}

func codes(r *spark.Report) string {
	var cs []string
	for _, f := range r.Findings {
		cs = append(cs, string(f.Code))
	}
	return strings.Join(cs, " ")
}

func mustFinding(t *testing.T, r *spark.Report, code spark.Code) *spark.Finding {
	t.Helper()
	f := r.Finding(code)
	if f == nil {
		t.Fatalf("no %s finding; findings: %s\n%+v", code, codes(r), r.Findings)
	}
	return f
}

// hasLine reports whether f's summary or a line of its evidence matches want: the same Kind,
// and every other field want sets equal, but Text, which need only be part of the line's Text
// (an error's message).
func hasLine(f *spark.Finding, want spark.Line) bool {
	for _, l := range append([]spark.Line{f.Summary}, f.Evidence...) {
		if lineMatches(l, want) {
			return true
		}
	}
	return false
}

func lineMatches(got, want spark.Line) bool {
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range w.NumField() {
		wf := w.Field(i)
		switch {
		case wf.IsZero():
		case w.Type().Field(i).Name == "Text":
			if !strings.Contains(got.Text, want.Text) {
				return false
			}
		case !reflect.DeepEqual(g.Field(i).Interface(), wf.Interface()):
			return false
		}
	}
	return got.Kind == want.Kind
}

// errorLine is an evidence line carrying an error whose message holds text.
func errorLine(text string) spark.Line { return spark.Line{Kind: spark.LineError, Text: text} }
