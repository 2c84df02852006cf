package notext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what would fail.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }
func (r *recorder) Helper()                           {}

// TestCheck: a sentence fails, one in an error, a log call or fail does not, a kept literal
// does not, and a kept literal the code lost fails.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import ("errors"; "fmt"; "log/slog")

func fail(w any, code int, s string) {}

func f(log *slog.Logger) (string, error) {
	log.Warn("the log says words")
	fail(nil, 400, "bad request body here")
	_ = fmt.Sprintf("%s: %d", "code", 1)
	_ = "kept words here"
	return "a sentence for people", errors.New("an error says words")
}
`
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	Check(r, dir, 1, map[string]string{"kept words here": "test", "a literal long gone": "test"})
	got := strings.Join(r.errs, "\n")
	if len(r.errs) != 2 || !strings.Contains(got, "is a sentence") || !strings.Contains(got, "no longer has it") {
		t.Fatalf("Check reported %q, want the sentence and the lost kept literal", r.errs)
	}
}
