package config

import (
	"os"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that it returns either a config or
// errors.
func FuzzParse(f *testing.F) {
	for _, file := range []string{"testdata/config-sketch.yaml", "testdata/many-errors.yaml", "testdata/unknown-keys.yaml"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a: &a [*a]\nhttp: &h {<<: *h}\n"))
	f.Add([]byte("pipelines: [{name: p, probe: {schedule: 'CRON_TZ=UTC'}}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if (cfg == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", cfg, err)
		}
	})
}
