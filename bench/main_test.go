package bench_test

import (
	"os"
	"testing"
)

// cleanups run once the benchmarks are done: the kfake clusters and checkpoint directories are
// built once per process and shared by every -count repetition.
var cleanups []func()

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	os.Exit(code)
}
