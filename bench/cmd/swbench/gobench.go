package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// goBenchRound runs package bench's benchmarks (lag, checkpoint) once each, in a process of
// their own, and adds their figures. One round per run spreads them over the whole measurement
// like the others, and the figures a ratio pairs are measured back to back.
func (e *env) goBenchRound(ctx context.Context, rep int, res *results) error {
	if e.opts.skipGoBench {
		return nil
	}
	args := []string{"-test.run", "^$", "-test.bench", ".", "-test.count", "1",
		"-test.benchtime", e.opts.benchtime, "-test.timeout", "30m"}
	e.logf("run %d: bench.test %s", rep, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, e.benchTestBin, args...)
	cmd.Dir = filepath.Join(e.opts.root, "bench")
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, e.progress)
	cmd.Stderr = e.progress
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("lag and checkpoint benchmarks: %w", err)
	}
	runs, order := parseGoBench(out.String())
	if len(runs) == 0 {
		return fmt.Errorf("lag and checkpoint benchmarks printed no results")
	}
	if res.goBench == nil {
		res.goBench, res.goBenchOrder = map[string][]map[string]float64{}, order
	}
	for name, r := range runs {
		res.goBench[name] = append(res.goBench[name], r...)
	}
	return nil
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.+)$`)

// parseGoBench reads `go test -bench` output: for every benchmark, one map of unit → value per
// run, in the order printed. The GOMAXPROCS suffix is dropped from names.
func parseGoBench(out string) (map[string][]map[string]float64, []string) {
	runs := map[string][]map[string]float64{}
	var order []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		fields := strings.Fields(m[3])
		values := map[string]float64{}
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			values[fields[i+1]] = v
		}
		if _, ok := runs[m[1]]; !ok {
			order = append(order, m[1])
		}
		runs[m[1]] = append(runs[m[1]], values)
	}
	return runs, order
}
