package spark_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/spark"
)

// addFixtures seeds a fuzz target with every fixture file under a directory name (offsets,
// commits, ...), plus the given extra seeds.
func addFixtures(f *testing.F, dirName string, extra ...string) {
	f.Helper()
	n := 0
	err := filepath.WalkDir(fixtures, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if filepath.Base(filepath.Dir(p)) == dirName || d.Name() == dirName {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f.Add(data)
			n++
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	if n == 0 {
		f.Fatalf("no fixture under %s", dirName)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// checkParseError asserts the contract of every parser: no panic (the fuzzer catches those),
// and an error is a *ParseError naming the file and a line.
func checkParseError(t *testing.T, file string, data []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var pe *spark.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%q: error %v is not a *ParseError", data, err)
	}
	if pe.File != file || pe.Line < 1 || pe.Line > strings.Count(string(data), "\n")+2 || !strings.HasPrefix(err.Error(), file+" line ") {
		t.Fatalf("%q: error %q (line %d) does not name the file and a line of it", data, err, pe.Line)
	}
}

func FuzzParseOffsets(f *testing.F) {
	addFixtures(f, "offsets", "", "v1", "v2\n\nname:{\"t\":{\"0\":1}}", "v1\n{}\n-", "v9\n{}\n1")
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, err := spark.ParseOffsets("offsets/7", data)
		checkParseError(t, "offsets/7", data, err)
		if err == nil && (len(seq.Sources) == 0 || seq.Version < 1 || seq.Version > spark.MaxOffsetsVersion) {
			t.Fatalf("%q: accepted with %d sources, version %d", data, len(seq.Sources), seq.Version)
		}
	})
}

func FuzzParseCommit(f *testing.F) {
	addFixtures(f, "commits", "", "v1", "v1\n{}", "v2\n{\"stateUniqueIds\":{\"0\":[[]]}}", "v1\n{\"nextBatchWatermarkMs\":1e3}")
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := spark.ParseCommit("commits/7", data)
		checkParseError(t, "commits/7", data, err)
		if err == nil && (c.Version < 1 || c.Version > spark.MaxCommitsVersion) {
			t.Fatalf("%q: accepted version %d", data, c.Version)
		}
	})
}

func FuzzParseMetadata(f *testing.F) {
	addFixtures(f, "metadata", "", "{}", `{"id":"a"}`, "{\n\"id\":\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := spark.ParseMetadata("metadata", data)
		checkParseError(t, "metadata", data, err)
		if err == nil && m.ID == "" {
			t.Fatalf("%q: accepted without a query id", data)
		}
	})
}

func FuzzParseKafkaInitialOffsets(f *testing.F) {
	addFixtures(f, "kafka-source-files", "\x00v1\n{\"t\":{\"0\":1}}", "\x00v1", "\x00")
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, err := spark.ParseKafkaInitialOffsets("sources/0/0", data)
		checkParseError(t, "sources/0/0", data, err)
	})
}
