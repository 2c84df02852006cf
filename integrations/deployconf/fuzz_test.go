package deployconf_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/streamwatch/streamwatch/integrations/deployconf"
)

// seedFromTestdata adds every testdata file to both targets: the valid files of each format and
// the broken ones. (testdata/fuzz holds inputs the fuzzer found; go test runs them as well.)
func seedFromTestdata(f *testing.F) {
	files, err := os.ReadDir("testdata")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, file := range files {
		if file.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", file.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzParseProperties(f *testing.F) {
	seedFromTestdata(f)
	f.Add([]byte("kafka.group.id=a\\u00\\\n  b\r\n!c\rsubscribe a,,b\\\\\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"fuzz.properties", "fuzz.conf"} {
			d := checkParse(t, name, data)
			if d.Format != "" && d.Format != deployconf.FormatProperties && d.Format != deployconf.FormatSparkDefaults {
				t.Fatalf("%s read as %q", name, d.Format)
			}
		}
	})
}

func FuzzParseYAML(f *testing.F) {
	seedFromTestdata(f)
	f.Add([]byte("kind: SparkApplication\nspec:\n  arguments: [--conf, a=b, --assign, '{}', --subscribe]\n"))
	f.Add([]byte("a: &a {b: *a}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := checkParse(t, "fuzz.yaml", data)
		if d.Format != "" && d.Format != deployconf.FormatYAML {
			t.Fatalf("read as %q", d.Format)
		}
	})
}

// checkParse parses data as name and checks what must hold of any input.
func checkParse(t *testing.T, name string, data []byte) deployconf.Deployed {
	d, err := deployconf.Parse(name, data)
	maxLine := lineCount(data)
	if err != nil {
		var pe *deployconf.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error %v is a %T, not a *ParseError", err, err)
		}
		if pe.File != name || !strings.HasPrefix(err.Error(), name+":") || pe.Reason == "" {
			t.Fatalf("error %q does not name %s", err, name)
		}
		if pe.Line < 0 || pe.Line > maxLine {
			t.Fatalf("error %q: line %d of %d", err, pe.Line, maxLine)
		}
		if !reflect.DeepEqual(d, deployconf.Deployed{}) {
			t.Fatalf("Deployed %+v returned with error %v", d, err)
		}
		return d
	}
	if d.File != name {
		t.Fatalf("File %q", d.File)
	}
	if len(d.Sources) != len(d.Settings) {
		t.Fatalf("Sources %q and Settings %q differ", d.Sources, d.Settings)
	}
	for field, src := range d.Sources {
		if _, ok := d.Settings[field]; !ok {
			t.Fatalf("Sources[%s] without Settings", field)
		}
		line, err := strconv.Atoi(strings.TrimPrefix(src, name+":"))
		if err != nil || line < 1 || line > maxLine {
			t.Fatalf("Sources[%s] = %q: not a line of %s (%d lines)", field, src, name, maxLine)
		}
	}
	for _, list := range [][]string{d.Topics, d.Bootstrap} {
		for _, v := range list {
			if v == "" || strings.TrimSpace(v) != v && !strings.ContainsAny(v, "\n\r") {
				t.Fatalf("list entry %q not trimmed", v)
			}
		}
	}
	again, err := deployconf.Parse(name, data)
	if err != nil || !reflect.DeepEqual(again, d) {
		t.Fatalf("a second parse differs: %+v, %v", again, err)
	}
	doc := deployconf.Documented{Group: "g", Topics: []string{"t"}, Brokers: []string{"b:9092"}, CheckpointLocation: "s3://b/c"}
	for _, diff := range deployconf.Compare(doc, d) {
		if diff.Why == "" && diff.Severity == deployconf.SeverityMismatch {
			t.Fatalf("a mismatch without a reason: %+v", diff)
		}
	}
	return d
}

// lineCount counts lines as generously as YAML does: \n, \r\n, \r, NEL, LS and PS end one.
func lineCount(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return 1 + strings.Count(s, "\n") + strings.Count(s, "\r") + strings.Count(s, "\u0085") + strings.Count(s, "\u2028") + strings.Count(s, "\u2029")
}
