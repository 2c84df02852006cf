// Package notext finds sentences in a package's code, for the packages whose results are codes
// and fields that commands/render_*.go words (issue 29): pipeline, bot, heartbeat. Each has a
// test that calls Check on its own directory.
package notext

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// twoWords is what a sentence has and a code or a format has not: two words and a space.
var twoWords = regexp.MustCompile(`[A-Za-z]{2,} +[A-Za-z]{2,}`)

// notText are the calls whose literals are errors, logs and HTTP error bodies, not text for
// people in chat.
var notText = map[string]bool{"Errorf": true, "New": true, "Debug": true, "Info": true, "Warn": true, "Error": true, "fail": true}

// Check fails t for every string literal with words in it in the non-test Go files of dir,
// outside an error, a log call, an HTTP error body (fail) and kept (literal → why it stays);
// and for every kept literal the code no longer has. It fails too when dir holds fewer than
// min files (the test ran in the wrong directory).
func Check(t testing.TB, dir string, min int, kept map[string]string) {
	t.Helper()
	CheckExcept(t, dir, min, nil, kept)
}

// CheckExcept is Check over the files of dir whose base name skip does not match (skip nil:
// every file): commands checks its handlers this way, and leaves its render_*.go files, where
// the words are, out.
func CheckExcept(t testing.TB, dir string, min int, skip func(name string) bool, kept map[string]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	scanned := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || (skip != nil && skip(filepath.Base(name))) {
			continue
		}
		scanned++
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		allowed := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var fn string
			switch f := call.Fun.(type) {
			case *ast.SelectorExpr:
				fn = f.Sel.Name
			case *ast.Ident:
				fn = f.Name
			}
			if notText[fn] {
				ast.Inspect(call, func(n ast.Node) bool {
					if lit, ok := n.(*ast.BasicLit); ok {
						allowed[lit] = true
					}
					return true
				})
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || allowed[lit] {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !twoWords.MatchString(s) {
				return true
			}
			if _, ok := kept[s]; ok {
				seen[s] = true
				return true
			}
			t.Errorf("%s: %q is a sentence: return a code and fields, and word them in commands/render_*.go", fset.Position(lit.Pos()), s)
			return true
		})
	}
	if scanned < min {
		t.Fatalf("scanned %d files in %s, want at least %d: the test runs in the wrong directory", scanned, dir, min)
	}
	for s := range kept {
		if !seen[s] {
			t.Errorf("%q is kept, but the code no longer has it: drop it from the list", s)
		}
	}
}
