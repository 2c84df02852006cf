package bot

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

// Text is made in commands/render_*.go (issue 29): bot translates Slack to commands and lays
// replies out in Block Kit, making their parts inert (text.go, markup). Its own literals are
// codes, formats and wiring, never sentences, apart from those below.

// keptLiterals are literals with words in them that stay in bot, with why.
var keptLiterals = map[string]string{
	// The commands the root's buttons stand for: translating a click into a command is bot's
	// part (socket.go's blockActions).
	"incident ack ":      "button command",
	"incident unack ":    "button command",
	"incident resolve ":  "button command",
	"incident diagnose ": "button command",
	"incident silence ":  "button command",
	" until morning":     "button command",
	"silence expire ":    "button command",
	// The audit record of a command refused by the channel rule: a record for operators, like
	// a log line, never posted.
	"channel not in slack.allowed_channels: ": "audit record",
	// HTTP: the WWW-Authenticate header's value, and /readyz's checks (an HTTP body for
	// operators and probes, like fail's).
	`Bearer realm="streamwatch"`:                              "HTTP header",
	"invalid_auth: check SLACK_BOT_TOKEN and SLACK_APP_TOKEN": "readyz check",
	"socket not connected":                                    "readyz check",
}

// notText are the calls whose literals are errors, logs and HTTP error bodies, not text for
// chat.
var notText = map[string]bool{"Errorf": true, "New": true, "Debug": true, "Info": true, "Warn": true, "Error": true, "fail": true}

// twoWords is what a sentence has and a code or a format has not: two words and a space.
var twoWords = regexp.MustCompile(`[A-Za-z]{2,} +[A-Za-z]{2,}`)

// TestNoSentencesInBot fails when a string literal with words in it appears in bot's code
// outside an error, a log call, an HTTP error body and keptLiterals.
func TestNoSentencesInBot(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	kept := map[string]bool{}
	scanned := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
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
			if _, ok := keptLiterals[s]; ok {
				kept[s] = true
				return true
			}
			t.Errorf("%s: %q is a sentence: word it in commands/render_*.go and lay it out here", fset.Position(lit.Pos()), s)
			return true
		})
	}
	if scanned < 10 {
		t.Fatalf("scanned %d files of bot: the test runs in the wrong directory", scanned)
	}
	for s := range keptLiterals {
		if !kept[s] {
			t.Errorf("keptLiterals lists %q, which bot no longer has: drop it", s)
		}
	}
}
