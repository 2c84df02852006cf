package pipeline_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"testing"
)

// textFree are the files of pipeline that make no sentences: their results are codes and
// fields that commands/render_*.go words (issue 29). A file joins the list once its text has
// moved; the rest of the package still makes some (docs/architecture.md).
var textFree = []string{"signals.go", "message.go", "checked.go", "detect.go", "digest.go", "progress.go", "publish.go", "verdicts.go", "lagwords.go"}

// data are literals with words that are no text for people: the metadata publish_group
// writes with its offsets into Kafka, which tools show beside them.
var data = map[string]bool{"streamwatch: checkpoint of %s, batch %d": true}

// words is what a sentence has and a code or a separator has not: two words and a space.
var words = regexp.MustCompile(`[A-Za-z]{2,} +[A-Za-z]{2,}`)

// TestNoSentencesInTextFreeFiles fails when a string literal with words in it appears in a
// text-free file, outside an error's message (fmt.Errorf, errors.New) and a log call.
func TestNoSentencesInTextFreeFiles(t *testing.T) {
	fset := token.NewFileSet()
	for _, name := range textFree {
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
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				switch sel.Sel.Name {
				case "Errorf", "New", "Debug", "Info", "Warn", "Error":
					ast.Inspect(call, func(n ast.Node) bool {
						if lit, ok := n.(*ast.BasicLit); ok {
							allowed[lit] = true
						}
						return true
					})
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || allowed[lit] {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && words.MatchString(s) && !data[s] {
				t.Errorf("%s: %q is a sentence: return a code and fields, and word it in commands/render_*.go", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}
