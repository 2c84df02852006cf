package driverlog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// secretHints holds the lower-case words without which no redaction rule
// can match; a line containing none of them is secret-free.
func secretHints() []string {
	var all []string
	for _, r := range redactions {
		all = append(all, r.hint...)
	}
	return all
}

func FuzzRedact(f *testing.F) {
	for _, line := range testdataLines(f) {
		f.Add(line)
	}
	f.Add("password=hunter2 token: x Authorization: Bearer abcdefghij " + awsKeyID + " " + jwt)
	f.Add("s3a://" + awsKeyID + ":" + awsSecret + "@b/k secret key " + awsSecret)
	f.Add(`username=\"u\" password=\"p\" xoxb-123-456-abc xapp-1-A0-1-ab`)
	hints := secretHints()
	f.Fuzz(func(t *testing.T, line string) {
		got := Redact(line)
		if len(got) > len(line) {
			t.Fatalf("Redact lengthened %q to %q", line, got)
		}
		if again := Redact(got); again != got {
			t.Fatalf("Redact(%q) = %q, but Redact of that = %q", line, got, again)
		}
		if all := redactAll(line); all != got {
			t.Fatalf("hints skipped a rule: %q -> %q, without hints %q", line, got, all)
		}
		if utf8.ValidString(line) && !utf8.ValidString(got) {
			t.Fatalf("Redact broke UTF-8: %q -> %q", line, got)
		}
		lower := strings.ToLower(line)
		secretFree := true
		for _, h := range hints {
			if strings.Contains(lower, h) {
				secretFree = false
			}
		}
		if secretFree && isASCII(line) && got != line {
			t.Fatalf("secret-free line changed: %q -> %q", line, got)
		}
	})
}

// FuzzScanLine feeds arbitrary log text through the line reader, the record
// grouping, the signature matchers and the example builder.
func FuzzScanLine(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.log"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, lines := range signatureSamples {
		f.Add([]byte("26/11/30 10:00:00 ERROR X: " + lines[0] + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newScanner(Options{Paths: []string{"fuzz"}, Location: time.UTC}, openOSFile)
		ctxErr, readErr := s.scanLines(context.Background(), "fuzz", bytes.NewReader(data), false)
		if ctxErr != nil || readErr != nil {
			t.Fatalf("scanLines: %v, %v", ctxErr, readErr)
		}
		r := s.finish()
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, m := range r.Matches {
			if m.Count < 1 || m.Count > lines {
				t.Fatalf("%s: count %d for %d lines", m.Signature.ID, m.Count, lines)
			}
			if !m.First.IsZero() && m.Last.Before(m.First) {
				t.Fatalf("%s: last %v before first %v", m.Signature.ID, m.Last, m.First)
			}
			if m.First.IsZero() != m.Last.IsZero() {
				t.Fatalf("%s: first %v, last %v", m.Signature.ID, m.First, m.Last)
			}
			if len(m.Example) > exampleBytes+2*len("…") || !utf8.ValidString(m.Example) || strings.ContainsAny(m.Example, "\n\r") {
				t.Fatalf("%s: example %q", m.Signature.ID, m.Example)
			}
		}
		// Per line: the pre-filter never hides a match.
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			line = line[:min(len(line), MaxLineBytes)]
			s.filter.candidates(line, s.cand)
			for i, sig := range s.sigs {
				if !isCandidate(s.cand, i) && sig.Pattern.Match(line) {
					t.Fatalf("%s: the pre-filter hides a match in %q", sig.ID, line)
				}
			}
		}
	})
}
