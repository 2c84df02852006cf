package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	mdLink   = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	docCited = regexp.MustCompile(`\bdocs/[\w.-]+\.md\b`)
	heading  = regexp.MustCompile(`(?m)^#+\s+(.+?)\s*$`)
)

// TestLocalLinksResolve: every link of a Markdown file of the repository to a file of the
// repository names one that exists (and a heading that exists, for a link with an anchor), and
// every docs/*.md a Go source cites exists.
func TestLocalLinksResolve(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata" && strings.Contains(path, "fuzz")) {
			return filepath.SkipDir
		}
		switch {
		case strings.HasSuffix(path, ".md"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				resolved := path
				if file != "" {
					resolved = filepath.Join(filepath.Dir(path), file)
				}
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s links to %s, which does not exist", path, target)
					continue
				}
				if anchor != "" && !hasHeading(t, resolved, anchor) {
					t.Errorf("%s links to %s: %s has no heading #%s", path, target, resolved, anchor)
				}
			}
		case strings.HasSuffix(path, ".go"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, doc := range docCited.FindAllString(string(b), -1) {
				checked++
				if _, err := os.Stat(doc); err != nil {
					t.Errorf("%s cites %s, which does not exist", path, doc)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 30 {
		t.Fatalf("only %d links checked: the walk missed the documents", checked)
	}
}

// hasHeading says whether the Markdown file has a heading whose GitHub anchor is anchor.
func hasHeading(t *testing.T, file, anchor string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
		if slug(m[1]) == anchor {
			return true
		}
	}
	return false
}

// slug is GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
