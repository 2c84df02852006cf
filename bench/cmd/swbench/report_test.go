package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
BenchmarkCheckpoint/batches=1000-2         	      87	  13647856 ns/op	         4.000 files-read/op	       207.0 listings/op
BenchmarkLag/partitions=1000/streamwatch-2 	     123	   9501885 ns/op	         8.000 requests/op
BenchmarkCheckpoint/batches=1000-2         	      90	  12000000 ns/op	         4.000 files-read/op	       207.0 listings/op
PASS
`
	runs, order := parseGoBench(out)
	if len(order) != 2 || order[0] != "BenchmarkCheckpoint/batches=1000" || order[1] != "BenchmarkLag/partitions=1000/streamwatch" {
		t.Fatalf("order %v", order)
	}
	c := runs["BenchmarkCheckpoint/batches=1000"]
	if len(c) != 2 || c[0]["ns/op"] != 13647856 || c[1]["ns/op"] != 12e6 || c[0]["files-read/op"] != 4 {
		t.Fatalf("checkpoint runs %v", c)
	}
	if runs["BenchmarkLag/partitions=1000/streamwatch"][0]["requests/op"] != 8 {
		t.Fatalf("lag runs %v", runs)
	}
}

func TestSpreadAndFormat(t *testing.T) {
	s := spreadOf([]float64{5, 1, 3, 2, 4})
	if s.min != 1 || s.median != 3 || s.max != 5 || s.n != 5 {
		t.Fatalf("spread %+v", s)
	}
	if s := spreadOf([]float64{4, 1, 2, 3}); s.median != 2.5 {
		t.Fatalf("even median %+v", s)
	}
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{{12345.6, "alerts/s", "12,346"}, {0.01234, "ms", "0.012"}, {9.876, "ms", "9.88"}, {104.3, "ms", "104"},
		{1234.5, "ms", "1,235"}, {21.34, "MiB", "21.3"}, {0.756, "×", "0.76"}, {10001, "requests", "10,001"}} {
		if got := format(c.v, c.unit); got != c.want {
			t.Errorf("format(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	if got := cell(figure{unit: "ms", values: []float64{2, 1, 3}}); got != "2.00 ms (1.00–3.00)" {
		t.Errorf("cell = %q", got)
	}
	if got := stormCoalesce(10 * time.Second); got != 1667*time.Millisecond {
		t.Errorf("coalesce for a 10 s storm = %v", got)
	}
}

// TestRoundFigures: the sampling round's benchmarks become the section of issue 16, with the
// request bound as the target.
func TestRoundFigures(t *testing.T) {
	runs, order := parseGoBench(`BenchmarkSamplingRound-2        	      20	  18129727 ns/op	         3.000 DescribeGroups/op	         0 Fetch/op	         3.000 ListOffsets/op	         0 Metadata/op	         3.000 OffsetFetch/op	         9.000 requests/op	         0.04500 requests/pipeline
BenchmarkCheckpointProgress-2   	      20	  13593708 ns/op	         2.000 storage-calls/pipeline
`)
	fs := roundFigures(&results{goBench: runs, goBenchOrder: order})
	if len(fs) != 4 {
		t.Fatalf("figures %+v", fs)
	}
	if fs[0].values[0] != 18.129727 || fs[1].values[0] != 9 || fs[3].values[0] != 2 {
		t.Fatalf("values %+v", fs)
	}
	if v := fs[1].verdict(); !strings.HasSuffix(v, ": met") {
		t.Fatalf("verdict %q", v)
	}
}
